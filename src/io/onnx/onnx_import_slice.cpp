// ONNX Slice of a computed value along one dim, with step 1, onto nnrt's slice layer (what nnrt's
// export writes for it). Constant starts, ends and axes: attributes before opset 10, inputs from it.
#include <algorithm>

#include "io/onnx/onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {

// Input i as constant ints, or `fallback` when it is not given.
std::vector<int64_t> ints_input(Importer &im, int i, const char *what, std::vector<int64_t> fallback) {
  return im.has_input(i) ? im.constant_input(i, what).ints() : fallback;
}

void slice(Importer &im) {
  im.check_outputs(1);
  im.accept_moved_batch();
  const Value &x = im.runtime_input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset() < 10) {
    im.check_attrs({"starts", "ends", "axes"});
    starts = im.attr_ints("starts", {});
    ends = im.attr_ints("ends", {});
    axes = im.attr_ints("axes", {});
  } else {
    im.check_attrs({});
    starts = ints_input(im, 1, "starts", {});
    ends = ints_input(im, 2, "ends", {});
    axes = ints_input(im, 3, "axes", {});
    steps = ints_input(im, 4, "steps", {});
  }
  if (starts.size() != ends.size() || starts.empty()) {
    im.corrupt("starts (", starts.size(), " values) and ends (", ends.size(), ") must be given, one per axis");
  }
  if (starts.size() != 1) im.unsupported("slicing ", starts.size(), " axes at once is not supported (one)");
  if (axes.empty()) axes = {0};
  if (axes.size() != 1) im.corrupt("axes has ", axes.size(), " values for ", starts.size(), " starts");
  for (int64_t s : steps)
    if (s != 1) im.unsupported("step ", s, " is not supported (1)");
  int32_t dim = im.example_axis(x, axes[0]);
  // ONNX clamps starts and ends to the dim (negative ones count from its end).
  int64_t size = x.shape[dim];
  auto clamp = [size](int64_t v) { return std::min(std::max(v < 0 ? v + size : v, int64_t(0)), size); };
  int64_t start = clamp(starts[0]), end = clamp(ends[0]);
  if (end <= start) im.unsupported("the slice ", starts[0], "..", ends[0], " of a dim of ", size, " is empty");
  const std::string &out = im.node().output(0);
  if (start == 0 && end == size) im.alias(out, im.node().input(0));
  else im.emit("slice", {{"axis", dim}, {"start", start}, {"length", end - start}}, {im.node().input(0)}, {}, out);
  im.move_batch(out, x.batch_axis);
}

}  // namespace

void register_slice_ops(std::map<std::string, Importer::Translator> &t) { t["Slice"] = slice; }

}  // namespace nnrt::io::onnx_format
