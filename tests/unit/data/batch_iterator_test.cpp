// BatchIterator and Dataset::from_arrays: the parts that need a context (arrays on a device).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

#include "backend/ops.h"
#include "data/dataset.h"
#include "data_test_util.h"

namespace nnrt::data {
namespace {

using test::failure_of;

std::shared_ptr<Context> reference_context() {
  ContextOptions o;
  o.backend = "reference";
  o.threads = 2;
  return Context::create(o);
}

// n examples of 3 bytes; example i holds (i, i+1, i+2) mod 256 and has class i.
std::shared_ptr<Dataset> numbered(int64_t n) {
  DatasetParts p;
  p.size = n;
  p.feature_type = FeatureType::U8;
  p.example_shape = Shape{3};
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) p.features.push_back(static_cast<unsigned char>(i + k));
    p.classes.push_back(i);
  }
  return Dataset::from_parts(std::move(p));
}

template <class T>
std::vector<T> host(const Array &a) {
  std::vector<T> v(static_cast<size_t>(a.numel()));
  a.copy_to_host(v.data(), v.size() * sizeof(T));
  return v;
}

struct Epoch {
  std::vector<std::vector<float>> x;
  std::vector<std::vector<int64_t>> y;
};

Epoch run_epoch(BatchIterator &it) {
  Epoch e;
  Batch b;
  while (it.next(b)) {
    EXPECT_EQ(b.x.dim(0), b.n);
    EXPECT_EQ(b.y.dim(0), b.n);
    e.x.push_back(host<float>(b.x));
    e.y.push_back(host<int64_t>(b.y));
  }
  EXPECT_FALSE(it.next(b));  // stays at the end
  return e;
}

class BatchIteratorTest : public ::testing::Test {
 protected:
  std::shared_ptr<Context> ctx_ = reference_context();
};

TEST_F(BatchIteratorTest, WalksInOrderWithAShortLastBatch) {
  BatchIterator it(numbered(10), ctx_, 4, false, 0, 0);
  EXPECT_EQ(it.batches(), 3);
  Batch b;
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(b.n, 4);
  EXPECT_EQ(b.x.shape(), (Shape{4, 3}));
  EXPECT_EQ(b.x.dtype(), NNRT_DTYPE_F32);
  EXPECT_EQ(b.y.shape(), (Shape{4}));
  EXPECT_EQ(b.y.dtype(), NNRT_DTYPE_I64);
  EXPECT_EQ(host<float>(b.x), (std::vector<float>{0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5}));
  EXPECT_EQ(host<int64_t>(b.y), (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_TRUE(it.next(b));
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(b.n, 2);
  EXPECT_EQ(host<int64_t>(b.y), (std::vector<int64_t>{8, 9}));
  EXPECT_FALSE(it.next(b));
}

TEST_F(BatchIteratorTest, ShuffleIsAReproduciblePermutation) {
  auto data = numbered(100);
  BatchIterator a(data, ctx_, 7, true, 1234, 2);
  BatchIterator b(data, ctx_, 7, true, 1234, 0);
  BatchIterator c(data, ctx_, 7, true, 4321, 2);
  Epoch ea = run_epoch(a), eb = run_epoch(b), ec = run_epoch(c);
  EXPECT_EQ(ea.y, eb.y);
  EXPECT_EQ(ea.x, eb.x);
  EXPECT_NE(ea.y, ec.y);
  std::vector<int64_t> seen;
  for (const auto &y : ea.y) seen.insert(seen.end(), y.begin(), y.end());
  std::vector<int64_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[static_cast<size_t>(i)], i);
  bool moved = false;
  for (int64_t i = 0; i < 100; ++i) moved |= seen[static_cast<size_t>(i)] != i;
  EXPECT_TRUE(moved);
  // Each x row belongs to its label.
  for (size_t b = 0; b < ea.y.size(); ++b) {
    for (size_t k = 0; k < ea.y[b].size(); ++k) EXPECT_EQ(ea.x[b][3 * k], static_cast<float>(ea.y[b][k] % 256));
  }
}

TEST_F(BatchIteratorTest, PrefetchNeverChangesTheBatches) {
  auto data = numbered(300);
  BatchIterator none(data, ctx_, 16, true, 9, 0);
  BatchIterator four(data, ctx_, 16, true, 9, 4);
  BatchIterator one(data, ctx_, 16, true, 9, 1);
  Epoch e0 = run_epoch(none);
  // A slow consumer: the prefetch thread fills its queue and waits.
  Epoch e4;
  Batch b;
  while (four.next(b)) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    e4.x.push_back(host<float>(b.x));
    e4.y.push_back(host<int64_t>(b.y));
  }
  Epoch e1 = run_epoch(one);
  EXPECT_EQ(e0.x, e4.x);
  EXPECT_EQ(e0.y, e4.y);
  EXPECT_EQ(e0.y, e1.y);
  EXPECT_EQ(e0.x.size(), 19u);
}

// Destroyed in mid-epoch, an iterator stops its prefetch thread at the thread's next wait: besides
// the batches handed out, the thread made at most the `prefetch` that fit in its queue (it makes a
// batch only when there is room for it), never the rest of the epoch's 625. Counted, not timed: a
// loaded machine makes a wall-clock bound flaky, and a thread that made them all quickly would
// pass one.
TEST_F(BatchIteratorTest, DestroyedMidEpochStopsItsPrefetchThread) {
  auto data = numbered(5000);
  const int prefetch = 4;
  for (int round = 0; round < 20; ++round) {
    const int64_t before = batches_made_for_testing();
    const int handed_out = round % 2;  // half stop after one batch, half before any
    {
      BatchIterator it(data, ctx_, 8, true, static_cast<uint64_t>(round), prefetch);
      Batch b;
      if (handed_out) {
        ASSERT_TRUE(it.next(b));
      }
    }
    const int64_t made = batches_made_for_testing() - before;
    EXPECT_GE(made, handed_out) << "round " << round;
    EXPECT_LE(made, handed_out + prefetch) << "round " << round;
  }
  // Never asked for a batch, without shuffling.
  const int64_t before = batches_made_for_testing();
  { BatchIterator untouched(data, ctx_, 8, false, 0, 3); }
  EXPECT_LE(batches_made_for_testing() - before, 3);
}

TEST_F(BatchIteratorTest, ErrorsReachNextAfterTheBatchesBeforeThem) {
  for (int prefetch : {0, 3}) {
    set_batch_fault_for_testing(2);
    BatchIterator it(numbered(40), ctx_, 5, false, 0, prefetch);
    Batch b;
    EXPECT_TRUE(it.next(b));
    EXPECT_TRUE(it.next(b));
    auto f = failure_of([&] { it.next(b); });
    EXPECT_EQ(f.status, NNRT_ERR_INTERNAL) << prefetch;
    EXPECT_TRUE(f.has("injected fault in batch 2")) << f.message;
    set_batch_fault_for_testing(-1);
  }
}

TEST_F(BatchIteratorTest, OtherFloatTypesAndTargets) {
  DatasetParts p;
  p.size = 3;
  p.feature_type = FeatureType::F32;
  p.example_shape = Shape{2};
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  p.features.resize(24);
  std::memcpy(p.features.data(), x.data(), 24);
  p.class_labels = false;
  p.target_shape = Shape{1};
  p.targets = {0.5f, 1.5f, 2.5f};
  auto data = Dataset::from_parts(std::move(p));
  BatchIterator it(data, ctx_, 2, false, 0, 1, NNRT_DTYPE_F16);
  Batch b;
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(b.x.dtype(), NNRT_DTYPE_F16);
  EXPECT_EQ(host<uint16_t>(b.x), (std::vector<uint16_t>{0x3C00, 0x4000, 0x4200, 0x4400}));
  EXPECT_EQ(b.y.dtype(), NNRT_DTYPE_F32);
  EXPECT_EQ(b.y.shape(), (Shape{2, 1}));
  EXPECT_EQ(host<float>(b.y), (std::vector<float>{0.5f, 1.5f}));
}

TEST_F(BatchIteratorTest, RefusesBadArguments) {
  auto data = numbered(4);
  EXPECT_EQ(failure_of([&] { BatchIterator(data, ctx_, 0, false, 0, 0); }).status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(failure_of([&] { BatchIterator(data, ctx_, 1, false, 0, -1); }).status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(failure_of([&] { BatchIterator(data, ctx_, 1, false, 0, 0, NNRT_DTYPE_I32); }).status, NNRT_ERR_DTYPE);
}

// ---- Dataset::from_arrays ----------------------------------------------------------------------

class FromArrays : public BatchIteratorTest {
 protected:
  template <class T>
  Array array(nnrt_dtype dtype, Shape shape, std::vector<T> values) {
    return ops::from_host(*ctx_, dtype, shape, values.data(), values.size() * sizeof(T));
  }
};

TEST_F(FromArrays, CopiesFeaturesAndClasses) {
  Array x = array<float>(NNRT_DTYPE_F32, Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  Array y = array<int32_t>(NNRT_DTYPE_I32, Shape{3}, {2, 0, 1});
  auto d = Dataset::from_arrays(x, y);
  x = Array();  // the dataset holds its own copy
  EXPECT_EQ(d->size(), 3);
  EXPECT_EQ(d->example_shape(), (Shape{2}));
  EXPECT_EQ(d->num_classes(), 3);
  EXPECT_EQ(d->label(0), 2);
  std::vector<int64_t> rows = {2};
  float out[2];
  int64_t label;
  d->gather(rows.data(), 1, NNRT_DTYPE_F32, out, &label);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(label, 1);

  auto u = Dataset::from_arrays(array<uint8_t>(NNRT_DTYPE_U8, Shape{2, 1, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
                                array<uint8_t>(NNRT_DTYPE_U8, Shape{2}, {3, 4}));
  EXPECT_EQ(u->example_shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(u->feature_type(), FeatureType::U8);
  EXPECT_EQ(u->label(1), 4);
}

TEST_F(FromArrays, StridedViewsAndFloatTargets) {
  Array x = array<double>(NNRT_DTYPE_F64, Shape{2, 3}, {1, 2, 3, 4, 5, 6}).transposed({1, 0});  // [3, 2]
  Array y = array<uint16_t>(NNRT_DTYPE_BF16, Shape{3}, {0x3F80, 0x4000, 0xBF80});
  auto d = Dataset::from_arrays(x, y);
  EXPECT_FALSE(d->has_class_labels());
  EXPECT_EQ(d->target_shape(), (Shape{1}));
  std::vector<int64_t> rows = {0, 2};
  double out[4];
  float targets[2];
  d->gather(rows.data(), 2, NNRT_DTYPE_F64, out, targets);
  EXPECT_EQ(std::vector<double>(out, out + 4), (std::vector<double>{1, 4, 3, 6}));
  EXPECT_EQ(targets[0], 1.0f);
  EXPECT_EQ(targets[1], -1.0f);
}

TEST_F(FromArrays, RefusesBadInput) {
  Array x = array<float>(NNRT_DTYPE_F32, Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  Array y3 = array<int64_t>(NNRT_DTYPE_I64, Shape{3}, {0, 1, 2});

  auto f = failure_of([&] { Dataset::from_arrays(x, array<int64_t>(NNRT_DTYPE_I64, Shape{2}, {0, 1})); });
  EXPECT_EQ(f.status, NNRT_ERR_SHAPE);
  EXPECT_TRUE(f.has("features [3, 2] and labels [2]")) << f.message;

  f = failure_of([&] { Dataset::from_arrays(array<float>(NNRT_DTYPE_F32, Shape{}, {1}), y3); });
  EXPECT_EQ(f.status, NNRT_ERR_SHAPE);
  EXPECT_TRUE(f.has("not scalars")) << f.message;

  f = failure_of([&] {
    Dataset::from_arrays(array<float>(NNRT_DTYPE_F32, Shape{0, 2}, {}), array<int64_t>(NNRT_DTYPE_I64, Shape{0}, {}));
  });
  EXPECT_EQ(f.status, NNRT_ERR_SHAPE);
  EXPECT_TRUE(f.has("no examples")) << f.message;

  f = failure_of([&] { Dataset::from_arrays(array<float>(NNRT_DTYPE_F32, Shape{3, 1}, {1, NAN, 2}), y3); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("example 1 (element 0) is nan")) << f.message;

  f = failure_of([&] { Dataset::from_arrays(array<uint16_t>(NNRT_DTYPE_F16, Shape{3}, {0, 0, 0x7C00}), y3); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("example 2")) << f.message;

  f = failure_of([&] { Dataset::from_arrays(x, array<int32_t>(NNRT_DTYPE_I32, Shape{3}, {0, -4, 1})); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("example 1 has class index -4")) << f.message;

  f = failure_of([&] { Dataset::from_arrays(x, array<uint8_t>(NNRT_DTYPE_BOOL, Shape{3}, {0, 1, 1})); });
  EXPECT_EQ(f.status, NNRT_ERR_DTYPE);

  f = failure_of([&] { Dataset::from_arrays(array<uint8_t>(NNRT_DTYPE_BOOL, Shape{3}, {0, 1, 1}), y3); });
  EXPECT_EQ(f.status, NNRT_ERR_DTYPE);

  f = failure_of([&] { Dataset::from_arrays(x, array<int64_t>(NNRT_DTYPE_I64, Shape{3, 1}, {0, 1, 2})); });
  EXPECT_EQ(f.status, NNRT_ERR_SHAPE);
  EXPECT_TRUE(f.has("class indices must be [N]")) << f.message;

  f = failure_of([&] { Dataset::from_arrays(x, array<double>(NNRT_DTYPE_F64, Shape{3}, {0, 1e300, 2})); });
  EXPECT_EQ(f.status, NNRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(f.has("labels: example 1")) << f.message;
}

}  // namespace
}  // namespace nnrt::data
