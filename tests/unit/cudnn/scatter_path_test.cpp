// Which SCATTER_ADD kernel the cuDNN backend picks: atomics only for a large F32/F64 table outside
// deterministic mode, where the ordered scan's work dwarfs the atomic kernel's.
#include <gtest/gtest.h>

#include "nnrt/nnrt.h"
#include "scatter_path.h"

namespace nnrt::cudnn {
namespace {

constexpr auto kOrdered = ScatterAddPath::kOrdered;
constexpr auto kAtomic = ScatterAddPath::kAtomic;

TEST(ScatterAddPath, AnEmbeddingGradientOfALargeVocabularyUsesAtomics) {
  // 50,000 rows of 256, 64 * 128 tokens: the scan would visit 1e14 elements.
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 50000, 256, 8192), kAtomic);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F64, 50000, 256, 8192), kAtomic);
}

TEST(ScatterAddPath, DeterministicModeAlwaysScansInOrder) {
  EXPECT_EQ(scatter_add_path(true, NNRT_DTYPE_F32, 50000, 256, 8192), kOrdered);
  EXPECT_EQ(scatter_add_path(true, NNRT_DTYPE_F64, int64_t{1} << 40, 1024, int64_t{1} << 40), kOrdered);
}

TEST(ScatterAddPath, HalfPrecisionKeepsTheF32Accumulation) {
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F16, 50000, 256, 8192), kOrdered);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_BF16, 50000, 256, 8192), kOrdered);
}

TEST(ScatterAddPath, SmallTablesScanInOrder) {
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 10, 16, 64), kOrdered);
  // Large enough in work but too few positions to repay: the scan does rows * positions, which is
  // under 32 times rows + positions.
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 1 << 20, 64, 16), kOrdered);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 16, 64, 1 << 20), kOrdered);
  // Enough positions per row but too little work in all: one launch of either costs the same.
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 256, 1, 256), kOrdered);
}

TEST(ScatterAddPath, TheThresholdsAreWhereTheyAreDocumented) {
  // rows = positions = 64: scan 4096 = 32 * (64 + 64), the factor's boundary; the work
  // 4096 * width reaches 2^22 at width 1024.
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 64, 1024, 64), kAtomic);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 64, 1023, 64), kOrdered);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 63, 1 << 20, 64), kOrdered);  // 4032 < 32 * 127
}

TEST(ScatterAddPath, EmptyOrHugeShapesNeitherOverflowNorPickAtomics) {
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 0, 256, 8192), kOrdered);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 50000, 0, 8192), kOrdered);
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, 50000, 256, 0), kOrdered);
  const int64_t huge = int64_t{1} << 62;
  EXPECT_EQ(scatter_add_path(false, NNRT_DTYPE_F32, huge, huge, huge), kAtomic);
}

}  // namespace
}  // namespace nnrt::cudnn
