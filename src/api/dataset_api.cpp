// nnrt_dataset_*: make a dataset from arrays or files, ask its size, release it.
#include "api/handles.h"

using namespace nnrt;
using namespace nnrt::api;

namespace {

nnrt_dataset *wrap(std::shared_ptr<data::Dataset> d) {
  auto h = std::make_unique<nnrt_dataset>();
  h->impl = std::move(d);
  return h.release();
}

}  // namespace

extern "C" {

nnrt_status nnrt_dataset_from_arrays(nnrt_context *ctx, const nnrt_array *features, const nnrt_array *labels,
                                     nnrt_dataset **out) {
  return guard("nnrt_dataset_from_arrays", [&] {
    check_handle(ctx, "ctx");
    check_handle(features, "features");
    check_handle(labels, "labels");
    require(out != nullptr, "out is NULL; expected a pointer to receive the dataset");
    *out = wrap(data::Dataset::from_arrays(features->impl, labels->impl));
  });
}

nnrt_status nnrt_dataset_load(nnrt_context *ctx, const char *spec_json, nnrt_dataset **out) {
  return guard("nnrt_dataset_load", [&] {
    check_handle(ctx, "ctx");
    require(spec_json != nullptr, "spec_json is NULL; expected a JSON object such as {\"format\": \"idx\", ...}");
    require(out != nullptr, "out is NULL; expected a pointer to receive the dataset");
    *out = wrap(data::Dataset::load(spec_json));
  });
}

nnrt_status nnrt_dataset_size(const nnrt_dataset *d, int64_t *examples) {
  return guard("nnrt_dataset_size", [&] {
    check_handle(d, "d");
    require(examples != nullptr, "examples is NULL; expected a pointer to receive the count");
    *examples = d->impl->size();
  });
}

void nnrt_dataset_release(nnrt_dataset *d) { release_handle(d, "nnrt_dataset_release"); }

}  // extern "C"
