// The Dataset class: checked construction, batching (gather), slices. Construction from arrays is
// in dataset_from_arrays.cpp (the only part that needs a device), spec loading in
// dataset_spec.cpp, the file readers in idx_reader.cpp and csv_reader.cpp.
#include "data/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/error.h"
#include "data/feature_convert.h"

namespace nnrt::data {

namespace {

// The buffers, shared by a dataset and its slices and never changed after construction.
struct Store {
  FeatureType feature_type;
  Shape example_shape;
  int64_t example_numel;
  std::vector<unsigned char> features;

  bool class_labels;
  Shape label_shape;    // class_labels: per example
  int64_t label_numel;  // class_labels: indices per example
  std::vector<int64_t> classes;
  Shape target_shape;
  int64_t target_numel;
  std::vector<float> targets;
  int64_t num_classes;

  FeatureConverter converter;

  Store(FeatureType t, double scale) : feature_type(t), converter(t, scale) {}
};

}  // namespace

struct Dataset::Impl {
  std::shared_ptr<const Store> store;
  int64_t first = 0;  // this dataset is examples [first, first + count) of the store
  int64_t count = 0;
};

namespace {

// A per-example shape of rank 0 (features [N], targets [N]) becomes [1], so that a batch is
// [n, 1]: what a dense layer and an output of one unit expect.
Shape per_example_shape(const Shape &s) { return s.rank == 0 ? Shape{1} : s; }

}  // namespace

std::shared_ptr<Dataset> Dataset::from_parts(DatasetParts parts) {
  if (parts.size < 1) fail(NNRT_ERR_INVALID_ARGUMENT, "a dataset needs at least one example, got ", parts.size);
  if (!std::isfinite(parts.scale))
    fail(NNRT_ERR_INVALID_ARGUMENT, "scale: expected a finite number, got ", parts.scale);

  auto store = std::make_shared<Store>(parts.feature_type, parts.scale);
  store->example_shape = per_example_shape(parts.example_shape);
  if (store->example_shape.rank > NNRT_MAX_DIMS - 1) {
    fail(NNRT_ERR_SHAPE, "an example has shape ", to_string(store->example_shape),
         "; a batch of them needs rank <= ", NNRT_MAX_DIMS, ", so an example has at most ", NNRT_MAX_DIMS - 1, " dims");
  }
  store->example_numel = store->example_shape.numel();
  if (store->example_numel < 1) {
    fail(NNRT_ERR_SHAPE, "an example has shape ", to_string(store->example_shape), ": no features");
  }
  size_t expected = static_cast<size_t>(parts.size) * static_cast<size_t>(store->example_numel) *
                    feature_type_size(parts.feature_type);
  if (parts.features.size() != expected) {
    fail(NNRT_ERR_INTERNAL, "dataset parts: ", parts.size, " examples of ", feature_type_name(parts.feature_type),
         to_string(store->example_shape), " need ", expected, " bytes, got ", parts.features.size());
  }
  store->features = std::move(parts.features);

  store->class_labels = parts.class_labels;
  store->num_classes = 0;
  store->target_numel = 0;
  store->label_numel = 1;
  if (parts.class_labels) {
    store->label_shape = parts.label_shape;
    if (store->label_shape.rank > NNRT_MAX_DIMS - 1) {
      fail(NNRT_ERR_SHAPE, "an example's class labels have shape ", to_string(store->label_shape), "; at most ",
           NNRT_MAX_DIMS - 1, " dims fit in a batch");
    }
    store->label_numel = store->label_shape.numel();
    if (store->label_numel < 1)
      fail(NNRT_ERR_SHAPE, "an example's class labels have shape ", to_string(store->label_shape), ": no labels");
    if (parts.classes.size() != static_cast<size_t>(parts.size * store->label_numel)) {
      fail(NNRT_ERR_INTERNAL, "dataset parts: ", parts.size, " examples of ", store->label_numel, " class labels but ",
           parts.classes.size(), " labels");
    }
    for (size_t i = 0; i < parts.classes.size(); ++i) {
      if (parts.classes[i] < 0) {
        fail(NNRT_ERR_INVALID_ARGUMENT, "labels: example ", static_cast<int64_t>(i) / store->label_numel,
             " has class index ", parts.classes[i], "; expected >= 0");
      }
      store->num_classes = std::max(store->num_classes, parts.classes[i] + 1);
    }
    store->classes = std::move(parts.classes);
  } else {
    store->target_shape = per_example_shape(parts.target_shape);
    if (store->target_shape.rank > NNRT_MAX_DIMS - 1) {
      fail(NNRT_ERR_SHAPE, "a target has shape ", to_string(store->target_shape), "; at most ", NNRT_MAX_DIMS - 1,
           " dims fit in a batch");
    }
    store->target_numel = store->target_shape.numel();
    if (store->target_numel < 1)
      fail(NNRT_ERR_SHAPE, "a target has shape ", to_string(store->target_shape), ": no values");
    if (parts.targets.size() != static_cast<size_t>(parts.size * store->target_numel)) {
      fail(NNRT_ERR_INTERNAL, "dataset parts: ", parts.size, " examples of targets ", to_string(store->target_shape),
           " but ", parts.targets.size(), " values");
    }
    store->targets = std::move(parts.targets);
  }

  auto impl = std::make_shared<Impl>();
  impl->store = std::move(store);
  impl->count = parts.size;
  return std::shared_ptr<Dataset>(new Dataset(std::move(impl)));
}

int64_t Dataset::size() const { return impl_->count; }
const Shape &Dataset::example_shape() const { return impl_->store->example_shape; }
bool Dataset::has_class_labels() const { return impl_->store->class_labels; }
const Shape &Dataset::target_shape() const { return impl_->store->target_shape; }
const Shape &Dataset::label_shape() const {
  const Store &s = *impl_->store;
  return s.class_labels ? s.label_shape : s.target_shape;
}
int64_t Dataset::num_classes() const { return impl_->store->num_classes; }
FeatureType Dataset::feature_type() const { return impl_->store->feature_type; }
double Dataset::scale() const { return impl_->store->converter.scale(); }

void Dataset::gather(const int64_t *indices, int64_t n, nnrt_dtype x_dtype, void *x_out, void *y_out) const {
  const Store &s = *impl_->store;
  if (!dtype_is_float(x_dtype)) {
    fail(NNRT_ERR_DTYPE, "batch features: expected a float dtype (f32, f64, f16, bf16), got ", dtype_name(x_dtype));
  }
  for (int64_t k = 0; k < n; ++k) {
    if (indices[k] < 0 || indices[k] >= impl_->count) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "batch index ", k, " is example ", indices[k], "; the dataset has ", impl_->count,
           " examples");
    }
  }
  const int64_t first = impl_->first;
  const unsigned char *base =
      s.features.data() + first * s.example_numel * static_cast<int64_t>(feature_type_size(s.feature_type));
  s.converter.gather(base, s.example_numel, indices, n, x_dtype, x_out);
  if (!y_out) return;
  if (s.class_labels) {
    auto *y = static_cast<int64_t *>(y_out);
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(y + k * s.label_numel, s.classes.data() + (first + indices[k]) * s.label_numel,
                  static_cast<size_t>(s.label_numel) * sizeof(int64_t));
    }
  } else {
    auto *y = static_cast<float *>(y_out);
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(y + k * s.target_numel, s.targets.data() + (first + indices[k]) * s.target_numel,
                  static_cast<size_t>(s.target_numel) * sizeof(float));
    }
  }
}

std::shared_ptr<Dataset> Dataset::slice(int64_t begin, int64_t end) const {
  if (begin < 0 || begin >= end || end > impl_->count) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "slice [", begin, ", ", end, "): expected 0 <= begin < end <= ", impl_->count);
  }
  auto impl = std::make_shared<Impl>();
  impl->store = impl_->store;
  impl->first = impl_->first + begin;
  impl->count = end - begin;
  return std::shared_ptr<Dataset>(new Dataset(std::move(impl)));
}

int64_t Dataset::label(int64_t i) const {
  if (!impl_->store->class_labels) fail(NNRT_ERR_INVALID_ARGUMENT, "label: the dataset has float targets, not classes");
  if (impl_->store->label_numel != 1) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "label: the dataset's examples have class labels ",
         to_string(impl_->store->label_shape), ", not one each");
  }
  if (i < 0 || i >= impl_->count) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "label: example ", i, " is out of range; the dataset has ", impl_->count,
         " examples");
  }
  return impl_->store->classes[static_cast<size_t>(impl_->first + i)];
}

}  // namespace nnrt::data
