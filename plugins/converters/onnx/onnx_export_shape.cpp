// ONNX export of the layers that move or pick values: flatten, reshape, concat, transpose, slice,
// embedding (a Gather) and dropout (their import: onnx_import_shape.cpp, onnx_import_slice.cpp).
#include "onnx_export.h"

namespace nnrt::io::onnx_format {

namespace {

void flatten(Exporter &ex) { Exporter::set_int(ex.add("Flatten", {ex.inputs()[0]}, ex.output()), "axis", 1); }

void reshape(Exporter &ex) { ex.add("Reshape", {ex.inputs()[0], ex.out_shape_with_batch()}, ex.output()); }

void concat(Exporter &ex) {
  int64_t axis = ex.attrs().value("axis", 0);
  if (axis < 0) axis += ex.in_shape().rank;
  Exporter::set_int(ex.add("Concat", ex.inputs(), ex.output()), "axis", axis + 1);
}

// transpose of the example's axes: the batch stays first.
void transpose(Exporter &ex) {
  std::vector<int64_t> perm = {0};
  for (int64_t p : ex.attrs()["perm"].get<std::vector<int64_t>>()) perm.push_back(p + 1);
  Exporter::set_ints(ex.add("Transpose", {ex.inputs()[0]}, ex.output()), "perm", perm);
}

void slice(Exporter &ex) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name();
  int64_t start = a.value("start", int64_t(0)), length = a.value("length", int64_t(1));
  ex.add("Slice", {ex.inputs()[0], ex.ints(name + "/starts", {start}), ex.ints(name + "/ends", {start + length}),
                   ex.ints(name + "/axes", {a.value("axis", int64_t(0)) + 1})},
         ex.output());
}

// embedding: the float indices cast to int64, then a Gather of the table's rows.
void embedding(Exporter &ex) {
  const std::string &name = ex.name();
  Exporter::set_int(ex.add("Cast", {ex.inputs()[0]}, name + "/indices"), "to", onnx::TensorProto::INT64);
  ex.add("Gather", {ex.param(name + ".weight"), name + "/indices"}, ex.output());
}

void dropout(Exporter &ex) {
  ex.add("Dropout", {ex.inputs()[0], ex.scalar(ex.name() + "/ratio", ex.attrs().value("rate", 0.5f))}, ex.output());
}

}  // namespace

void register_shape_layers(std::map<std::string, Exporter::LayerWriter> &t) {
  t["flatten"] = flatten;
  t["reshape"] = reshape;
  t["concat"] = concat;
  t["transpose"] = transpose;
  t["slice"] = slice;
  t["embedding"] = embedding;
  t["dropout"] = dropout;
}

}  // namespace nnrt::io::onnx_format
