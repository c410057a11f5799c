// Which SCATTER_ADD kernel a descriptor gets. The ordered kernel gives every dtable element one
// thread that scans all the indices: deterministic and bit-identical to the reference backend, but
// its work is rows * width * positions, which for a large vocabulary dwarfs the gradient itself.
// The atomic kernel zeroes dtable and adds each dy element with one atomicAdd: work
// (rows + positions) * width, but the order of the additions (so the rounding) varies from run to
// run.
#pragma once

#include <cstdint>

namespace nnrt::cudnn {

enum class ScatterAddPath { kOrdered, kAtomic };

// The atomic kernel only when all of these hold: the context is not deterministic; the dtype is
// F32 or F64 (f16 and bf16 keep the ordered kernel, which accumulates in f32 instead of rounding
// every addition to 16 bits); and the ordered scan would do at least kScanFactor times the atomic
// kernel's work and at least kMinScanWork element visits (below that one launch of either costs
// about the same).
ScatterAddPath scatter_add_path(bool deterministic, int32_t dtype, int64_t rows, int64_t width, int64_t positions);

constexpr int64_t kScatterScanFactor = 32;
constexpr int64_t kScatterMinScanWork = int64_t{1} << 22;

}  // namespace nnrt::cudnn
