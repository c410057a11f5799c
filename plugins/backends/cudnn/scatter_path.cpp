#include "scatter_path.h"

#include "nnrt/nnrt.h"

namespace nnrt::cudnn {

ScatterAddPath scatter_add_path(bool deterministic, int32_t dtype, int64_t rows, int64_t width, int64_t positions) {
  if (deterministic || (dtype != NNRT_DTYPE_F32 && dtype != NNRT_DTYPE_F64)) return ScatterAddPath::kOrdered;
  if (rows <= 0 || width <= 0 || positions <= 0) return ScatterAddPath::kOrdered;
  // Compared as rows * positions against the factor times (rows + positions), which is the two
  // works divided by width; in long double, as the products of large tables overflow int64.
  const long double scan = static_cast<long double>(rows) * static_cast<long double>(positions);
  const long double atomic = static_cast<long double>(rows) + static_cast<long double>(positions);
  if (scan < kScatterScanFactor * atomic) return ScatterAddPath::kOrdered;
  if (scan * static_cast<long double>(width) < static_cast<long double>(kScatterMinScanWork)) {
    return ScatterAddPath::kOrdered;
  }
  return ScatterAddPath::kAtomic;
}

}  // namespace nnrt::cudnn
