// Datasets: examples and labels held in host memory, and the batches made from them.
//
// Features stay in the type they came in (IDX images as bytes) and are converted, scaled, to the
// model's float type only when a batch is made, which keeps a 60,000-image dataset at 47 MB instead
// of 188 MB. Labels are class indices (I64: one per example, or one per position of a label shape,
// as a language model's next tokens) or float targets.
//
// A dataset is immutable once made, so any number of threads may gather from it at once, and
// slices share its buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/array.h"
#include "backend/context.h"
#include "data/feature_type.h"

namespace nnrt::data {

// What a reader hands over to make a dataset: n examples of example_shape in `features` (native
// byte order, example after example) and either n class indices or n target blocks.
struct DatasetParts {
  int64_t size = 0;  // examples
  FeatureType feature_type = FeatureType::F32;
  Shape example_shape;                  // rank 0 is stored as [1]
  std::vector<unsigned char> features;  // size * example_shape.numel() elements
  double scale = 1;                     // multiplies every feature when a batch is made

  bool class_labels = true;
  Shape label_shape;             // class_labels: one example's indices; rank 0 for a single one
  std::vector<int64_t> classes;  // class_labels: size * label_shape.numel() indices >= 0
  Shape target_shape;            // !class_labels: one example's target; rank 0 is stored as [1]
  std::vector<float> targets;    // !class_labels: size * target_shape.numel(), finite
};

class Dataset {
 public:
  // From arrays on any device (copied to the host). Throws nnrt::Error (nnrt.h,
  // nnrt_dataset_from_arrays): features [N, ...] of any dtype but BOOL, labels [N] of I32, I64
  // or U8 class indices or [N, ...] of float targets.
  static std::shared_ptr<Dataset> from_arrays(const Array &features, const Array &labels);
  // From a JSON spec (nnrt.h, nnrt_dataset_load). Throws nnrt::Error.
  static std::shared_ptr<Dataset> load(const char *spec_json);
  // From a reader's parts, which are checked for consistency (sizes, at least one example, class
  // indices >= 0) but not for finite values: readers report those with their file and line.
  static std::shared_ptr<Dataset> from_parts(DatasetParts parts);

  int64_t size() const;
  const Shape &example_shape() const;  // one example's feature shape, e.g. [1, 28, 28]
  bool has_class_labels() const;       // class indices, else float targets
  const Shape &target_shape() const;   // one example's target shape when !has_class_labels()
  // One example's labels: the class indices' shape (rank 0 for one index per example, [T] for one
  // per position) or the target shape. A batch's labels are [n, label_shape()...].
  const Shape &label_shape() const;
  // 1 + the largest class index (of the whole dataset a slice was cut from); 0 for float targets.
  int64_t num_classes() const;
  FeatureType feature_type() const;  // how features are stored
  double scale() const;              // applied to features when batching

  // Writes examples indices[0..n) into host buffers: x as `x_dtype` (F32, F64, F16 or BF16)
  // [n, example_shape...], y as I64 [n, label_shape...] (class labels) or F32 [n, target_shape...]. Each x element
  // is feature * scale computed in f64 and rounded once to x_dtype (to nearest even). y_out may be
  // NULL to skip the labels. Throws NNRT_ERR_INVALID_ARGUMENT for an index out of range and
  // NNRT_ERR_DTYPE for a non-float x_dtype.
  void gather(const int64_t *indices, int64_t n, nnrt_dtype x_dtype, void *x_out, void *y_out) const;

  // A new dataset holding examples [begin, end) (for validation splits); it shares the (immutable)
  // buffers. Throws NNRT_ERR_INVALID_ARGUMENT unless 0 <= begin < end <= size().
  std::shared_ptr<Dataset> slice(int64_t begin, int64_t end) const;

  // The class label of example i (datasets of one class index per example only), for evaluation
  // without a batch.
  int64_t label(int64_t i) const;

 private:
  struct Impl;
  explicit Dataset(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// One batch on the context's device.
struct Batch {
  Array x;        // [n, example_shape...] in the requested float dtype
  Array y;        // I64 [n, label_shape...] or F32 [n, target_shape...]
  int64_t n = 0;  // examples in this batch (the last one may be short)
};

// Walks a dataset once in batches, optionally shuffled (a seeded permutation), with a background
// thread preparing up to `prefetch` batches ahead (0: none, batches are made on demand).
//
// The batches depend only on (dataset, batch_size, shuffle, seed): never on prefetch or timing.
// The permutation is the same on every platform and standard library (shuffle.h).
class BatchIterator {
 public:
  // Throws NNRT_ERR_INVALID_ARGUMENT for batch_size < 1 or prefetch < 0, NNRT_ERR_DTYPE for a
  // non-float x_dtype.
  // `only` (optional): the indices of the epoch's batches to hand out, in that order (a rank's
  // shard in distributed training); each must be in [0, the epoch's batch count).
  BatchIterator(std::shared_ptr<const Dataset> data, std::shared_ptr<Context> ctx, int64_t batch_size, bool shuffle,
                uint64_t seed, int prefetch, nnrt_dtype x_dtype = NNRT_DTYPE_F32,
                const std::vector<int64_t> *only = nullptr);
  ~BatchIterator();  // stops and joins the prefetch thread, even in mid-epoch
  BatchIterator(const BatchIterator &) = delete;
  BatchIterator &operator=(const BatchIterator &) = delete;

  // The next batch, or false at the end of the epoch. Throws what preparing the batch threw (after
  // handing out the batches made before it).
  bool next(Batch &out);

  int64_t batches() const;  // handed out in the whole epoch (the shard's, with `only`)
  // The batch count of a whole epoch of `examples` at `batch_size`.
  static int64_t epoch_batches(int64_t examples, int64_t batch_size) { return (examples + batch_size - 1) / batch_size; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Tests only: making batch `index` of any BatchIterator throws NNRT_ERR_INTERNAL, so that the way
// an error travels from the prefetch thread to next() can be checked. -1 (the default) disables it.
void set_batch_fault_for_testing(int64_t index);
// Tests only: how many batches every BatchIterator of the process has made so far (by the prefetch
// thread or by next()), so that a test can tell how far a prefetch thread went.
int64_t batches_made_for_testing();

}  // namespace nnrt::data
