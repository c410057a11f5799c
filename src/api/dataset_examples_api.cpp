// nnrt_dataset_examples: a dataset's examples as arrays (for prediction and inspection).
#include <numeric>
#include <vector>

#include "api/handles.h"

using namespace nnrt;
using namespace nnrt::api;

extern "C" nnrt_status nnrt_dataset_examples(nnrt_context *ctx, const nnrt_dataset *d, int64_t start, int64_t count,
                                             nnrt_array **features, nnrt_array **labels) {
  return guard("nnrt_dataset_examples", [&] {
    check_handle(ctx, "ctx");
    check_handle(d, "d");
    require(features != nullptr, "features is NULL; expected a pointer to receive the examples");
    const data::Dataset &data = *d->impl;
    if (start < 0 || count < 0 || start > data.size() || count > data.size() - start) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "examples [", start, ", ", start + count, ") are outside the dataset's ",
           data.size(), " examples");
    }
    std::vector<int64_t> indices(static_cast<size_t>(count));
    std::iota(indices.begin(), indices.end(), start);
    Shape xs = Shape::of(std::vector<int64_t>{count}), ys = xs;
    for (int32_t i = 0; i < data.example_shape().rank; ++i) xs.dims[xs.rank++] = data.example_shape()[i];
    for (int32_t i = 0; i < data.label_shape().rank; ++i) ys.dims[ys.rank++] = data.label_shape()[i];
    nnrt_dtype y_dtype = data.has_class_labels() ? NNRT_DTYPE_I64 : NNRT_DTYPE_F32;
    std::vector<float> x(static_cast<size_t>(xs.numel()));
    std::vector<unsigned char> y(static_cast<size_t>(ys.numel()) * 8);
    data.gather(indices.data(), count, NNRT_DTYPE_F32, x.data(), y.data());
    auto fx = std::make_unique<nnrt_array>();
    fx->impl = ops::from_host(*ctx->impl, NNRT_DTYPE_F32, xs, x.data(), x.size() * sizeof(float));
    std::unique_ptr<nnrt_array> fy;
    if (labels) {
      fy = std::make_unique<nnrt_array>();
      fy->impl = ops::from_host(*ctx->impl, y_dtype, ys, y.data(), static_cast<size_t>(ys.numel()) * (y_dtype == NNRT_DTYPE_I64 ? 8 : 4));
    }
    *features = fx.release();
    if (labels) *labels = fy.release();
  });
}
