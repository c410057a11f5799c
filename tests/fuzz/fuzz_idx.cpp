// Fuzz target: IDX parsing (plain and gzip), then the checks that pair images with labels, then a
// batch. The input is parsed whole and with a limit, and used as images (with labels made to fit)
// and as both images and labels.
#include <vector>

#include "data/dataset.h"
#include "data/idx_reader.h"
#include "fuzz_target.h"

using namespace nnrt;
using namespace nnrt::data;

namespace {

void make_batch(const Dataset &d) {
  std::vector<int64_t> rows = {d.size() - 1, 0};
  std::vector<float> x(static_cast<size_t>(2 * d.example_shape().numel()));
  size_t y_bytes =
      d.has_class_labels() ? 2 * sizeof(int64_t) : 2 * sizeof(float) * static_cast<size_t>(d.target_shape().numel());
  std::vector<unsigned char> y(y_bytes);
  d.gather(rows.data(), 2, NNRT_DTYPE_F32, x.data(), y.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int64_t limit : {0, 1}) {
    try {
      IdxArray images = parse_idx(data, size, "fuzz.idx", limit);
      IdxArray fitting;  // class 0 for every example
      fitting.dims = {images.dims[0]};
      fitting.kept = images.kept;
      fitting.data.assign(static_cast<size_t>(images.kept), 0);
      make_batch(*Dataset::from_parts(idx_dataset_parts(images, std::move(fitting), "images", "labels", 0.5)));
      IdxArray labels = images;
      make_batch(*Dataset::from_parts(idx_dataset_parts(std::move(images), std::move(labels), "images", "labels", 1)));
    } catch (const Error &e) {
      fuzz::expect_status(e, NNRT_ERR_CORRUPT);
    }
  }
  return 0;
}
