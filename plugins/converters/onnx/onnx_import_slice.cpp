// ONNX Slice along one dim, with step 1: of a computed value onto nnrt's slice layer (what nnrt's
// export writes for it); of a constant, folded (a stacked LSTM's zero state, sliced per layer by
// torch.onnx.export). Constant starts, ends and axes: attributes before opset 10, inputs from it.
#include <algorithm>

#include "onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {

// Input i as constant ints, or `fallback` when it is not given.
std::vector<int64_t> ints_input(Importer &im, int i, const char *what, std::vector<int64_t> fallback) {
  return im.has_input(i) ? im.constant_input(i, what).ints() : fallback;
}

// Entries [start, end) along `axis` of a constant (or of a value filled to a shape).
void fold(Importer &im, const Value &x, int64_t axis, int64_t start, int64_t end) {
  Value v = x;
  std::vector<int64_t> &dims = v.filled ? v.fill_dims : v.tensor.dims;
  dims[axis] = end - start;
  if (!v.filled) {
    const HostTensor &t = x.tensor;
    int64_t outer = 1, inner = static_cast<int64_t>(element_size(t.elem_type));
    for (int64_t k = 0; k < axis; ++k) outer *= t.dims[k];
    for (size_t k = axis + 1; k < t.dims.size(); ++k) inner *= t.dims[k];
    v.tensor.bytes.clear();
    for (int64_t o = 0; o < outer; ++o) {
      v.tensor.bytes.append(t.bytes, static_cast<size_t>((o * t.dims[axis] + start) * inner),
                            static_cast<size_t>((end - start) * inner));
    }
    if (x.batch_sized) {  // a slice of a shape: does it still hold the batch size?
      v.batch_sized = false;
      for (int64_t d : v.tensor.ints()) v.batch_sized = v.batch_sized || d == kBatchSize;
    }
  }
  im.set_value(im.node().output(0), std::move(v));
}

void slice(Importer &im) {
  im.check_outputs(1);
  im.accept_moved_batch();
  const Value &x = im.input(0);
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
  int64_t axis = axes[0];
  if (x.constant) {
    int64_t rank = static_cast<int64_t>(im.onnx_dims(x).size());
    if (axis < -rank || axis >= rank) im.corrupt("axis ", axis, " is out of range for rank ", rank);
    if (axis < 0) axis += rank;
  }
  int32_t dim = x.constant ? static_cast<int32_t>(axis) : im.example_axis(im.runtime_input(0), axis);
  // ONNX clamps starts and ends to the dim (negative ones count from its end).
  int64_t size = x.constant ? im.onnx_dims(x)[dim] : x.shape[dim];
  if (size == kBatchSize) im.unsupported("it slices the batch dim");
  auto clamp = [size](int64_t v) { return std::min(std::max(v < 0 ? v + size : v, int64_t(0)), size); };
  int64_t start = clamp(starts[0]), end = clamp(ends[0]);
  if (end <= start) im.unsupported("the slice ", starts[0], "..", ends[0], " of a dim of ", size, " is empty");
  if (x.constant) {
    fold(im, x, dim, start, end);
    return;
  }
  const std::string &out = im.node().output(0);
  if (start == 0 && end == size) im.alias(out, im.node().input(0));
  else im.emit("slice", {{"axis", dim}, {"start", start}, {"length", end - start}}, {im.node().input(0)}, {}, out);
  im.move_batch(out, x.batch_axis);
}

}  // namespace

void register_slice_ops(std::map<std::string, Importer::Translator> &t) { t["Slice"] = slice; }

}  // namespace nnrt::io::onnx_format
