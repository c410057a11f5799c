// ONNX Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Identity, Dropout, Constant and
// Gather (as an embedding lookup, or one index along a computed value's dim) onto nnrt's reshape,
// flatten, transpose, concat, dropout, embedding and slice layers (Squeeze, Unsqueeze, Concat and
// Gather of constants are folded: see onnx_import_fold.cpp). Squeeze, Unsqueeze, Transpose and
// Gather follow the batch to whichever ONNX dim they move it.
#include <algorithm>
#include <numeric>

#include "onnx_import.h"

namespace nnrt::io::onnx_format {

bool constant_node_tensor(const onnx::NodeProto &n, onnx::TensorProto &t) {
  if (n.attribute_size() != 1) return false;
  const onnx::AttributeProto &a = n.attribute(0);
  if (a.name() == "value") {
    t = a.t();
  } else if (a.name() == "value_float") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a.floats_size());
    for (float f : a.floats()) t.add_float_data(f);
  } else if (a.name() == "value_int") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a.ints_size());
    for (int64_t v : a.ints()) t.add_int64_data(v);
  } else {
    return false;
  }
  return true;
}

namespace {

int64_t product(const std::vector<int64_t> &d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < d.size() && i < to; ++i) p *= d[i];
  return p;
}

void reshape_to(Importer &im, std::vector<int64_t> example) {
  for (int64_t d : example)
    if (d == 0) im.unsupported("empty tensors are not supported");
  im.emit("reshape", {{"shape", example}}, {im.node().input(0)}, {}, im.node().output(0));
}

void reshape(Importer &im) {
  im.check_attrs({"allowzero"});
  im.check_outputs(1);
  const Value &x = im.runtime_input(0);
  const Value &shape = im.constant_value(1, "the shape");
  if (shape.filled) im.corrupt("the shape is not a 1-D int64 tensor");
  std::vector<int64_t> target = shape.tensor.ints();
  // A shape computed from the input's (x.view(x.size(0), -1)) may name the batch size: only in
  // dim 0, where it keeps the batch.
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] != kBatchSize) continue;
    if (i != 0 || !im.batch()) im.unsupported("the shape puts the batch size in dim ", i);
    target[i] = -2;
  }
  bool allowzero = im.attr_int("allowzero", 0) != 0;
  std::vector<int64_t> ex = x.shape.vec();
  std::vector<int64_t> full = ex;
  if (im.batch()) full.insert(full.begin(), -2);  // the batch: unknown here
  int free = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= full.size()) im.corrupt("shape[", i, "] = 0 copies a dim the input does not have");
      target[i] = full[i];
    }
    if (target[i] == -1) ++free;
    else if (target[i] < -1 && !(target[i] == -2 && i == 0)) im.corrupt("shape[", i, "] = ", target[i], " is negative");
  }
  if (free > 1) im.corrupt("the shape has more than one -1");
  if (!im.batch()) {
    reshape_to(im, target);
    return;
  }
  if (target.empty()) im.unsupported("a reshape to a scalar drops the batch dim");
  std::vector<int64_t> rest(target.begin() + 1, target.end());
  int64_t e = product(ex);
  if (target[0] == -2) {  // the batch kept
    reshape_to(im, rest);
  } else if (target[0] == -1 || free == 0) {
    // The batch stays dim 0 when the rest holds exactly one example.
    bool rest_free = false;
    for (int64_t d : rest) rest_free = rest_free || d == -1;
    if (rest_free || product(rest) != e) {
      im.unsupported("the shape ", to_string(Shape::of(target)), " moves elements across the batch dim (examples are ",
                     to_string(x.shape), "); import with {\"batch\": false} if dim 0 is not a batch");
    }
    reshape_to(im, rest);
  } else {
    im.unsupported("the shape ", to_string(Shape::of(target)), " leaves the batch dim ambiguous");
  }
}

// The axes of Squeeze / Unsqueeze: the "axes" attribute before opset 13, input 1 from it on.
std::vector<int64_t> squeeze_axes(Importer &im) {
  if (im.opset() < 13) {
    im.check_attrs({"axes"});
    return im.attr_ints("axes", {});
  }
  im.check_attrs({});
  return im.has_input(1) ? im.constant_input(1, "axes").ints() : std::vector<int64_t>{};
}

// An axis of a value of ONNX rank `rank`, made non-negative; each only once.
std::vector<bool> axis_set(Importer &im, const std::vector<int64_t> &axes, int64_t rank) {
  std::vector<bool> set(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) im.corrupt("axis ", a, " is out of range for rank ", rank);
    int64_t k = a < 0 ? a + rank : a;
    if (set[k]) im.corrupt("axis ", a, " is given twice");
    set[k] = true;
  }
  return set;
}

// The ONNX dims of the result (`full`, kBatchSize at the batch when importing with one) as a
// reshape of the examples, the batch staying where `full` puts it; or as a constant when the input
// is one.
void reshape_or_fold(Importer &im, const Value &x, std::vector<int64_t> full) {
  const std::string &out = im.node().output(0);
  if (x.constant) {
    Value v = x;
    (v.filled ? v.fill_dims : v.tensor.dims) = std::move(full);
    im.set_value(out, std::move(v));
    return;
  }
  int32_t batch_axis = 0;
  if (im.batch()) {
    auto at = std::find(full.begin(), full.end(), kBatchSize);
    batch_axis = static_cast<int32_t>(at - full.begin());
    full.erase(at);
  }
  if (full.empty()) im.unsupported("a per-example scalar is not supported");
  reshape_to(im, full);
  im.move_batch(out, batch_axis);
}

// Unsqueeze: dims of 1 inserted at the axes of the output.
void unsqueeze(Importer &im) {
  std::vector<int64_t> axes = squeeze_axes(im);
  im.check_outputs(1);
  im.accept_moved_batch();
  const Value &x = im.input(0);
  std::vector<int64_t> in = im.onnx_dims(x);
  int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  if (axes.empty()) im.corrupt("axes is required");
  std::vector<bool> inserted = axis_set(im, axes, rank);
  std::vector<int64_t> out;
  for (int64_t k = 0, next = 0; k < rank; ++k) out.push_back(inserted[k] ? 1 : in[next++]);
  reshape_or_fold(im, x, out);
}

// Squeeze: the axes (of size 1) dropped; without axes, every dim of size 1.
void squeeze(Importer &im) {
  std::vector<int64_t> axes = squeeze_axes(im);
  im.check_outputs(1);
  im.accept_moved_batch();
  const Value &x = im.input(0);
  bool batched = !x.constant && im.batch();
  std::vector<int64_t> in = im.onnx_dims(x);
  // Without axes a batch of 1 would be dropped too: the result's rank would depend on the batch.
  if (axes.empty() && batched) im.unsupported("without axes it would drop a batch of 1; give the axes");
  std::vector<bool> dropped = axis_set(im, axes, static_cast<int64_t>(in.size()));
  std::vector<int64_t> out;
  for (size_t k = 0; k < in.size(); ++k) {
    if (axes.empty()) dropped[k] = in[k] == 1;
    if (dropped[k] && in[k] == kBatchSize) {
      im.unsupported("axis ", k, " is the batch dim; import with {\"batch\": false} if it is not a batch");
    }
    if (dropped[k] && in[k] != 1) im.corrupt("axis ", k, " has size ", in[k], ", not 1");
    if (!dropped[k]) out.push_back(in[k]);
  }
  reshape_or_fold(im, x, out);
}

void flatten(Importer &im) {
  im.check_attrs({"axis"});
  im.check_outputs(1);
  const Value &x = im.runtime_input(0);
  int32_t rank = im.onnx_rank(x);
  int64_t axis = im.attr_int("axis", 1);
  if (axis < -rank || axis > rank) im.corrupt("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  std::vector<int64_t> full = x.shape.vec();
  if (!im.batch()) {
    reshape_to(im, {product(full, 0, axis), product(full, axis)});
    return;
  }
  // Only axis 1 keeps dim 0 the batch: 0 moves it into the features, more merge dims into it.
  if (axis != 1) im.unsupported("axis ", axis, " reshapes the batch dim; import with {\"batch\": false} if dim 0 is not a batch");
  im.emit("flatten", Json::object(), {im.node().input(0)}, {}, im.node().output(0));
}

// Transpose: the examples' dims permuted; a perm that moves the batch only records where it went
// (nnrt keeps it first), so that one which moves nothing else costs no layer.
void transpose(Importer &im) {
  im.check_attrs({"perm"});
  im.check_outputs(1);
  im.accept_moved_batch();
  const Value &x = im.runtime_input(0);
  int32_t rank = im.onnx_rank(x);
  std::vector<int64_t> reversed;
  for (int32_t i = rank - 1; i >= 0; --i) reversed.push_back(i);
  std::vector<int64_t> perm = im.attr_ints("perm", reversed);
  if (static_cast<int32_t>(perm.size()) != rank) im.corrupt("perm has ", perm.size(), " values for rank ", rank);
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) im.corrupt("perm ", to_string(Shape::of(perm)), " is not a permutation of 0..", rank - 1);
    seen[p] = true;
  }
  const std::string &out = im.node().output(0);
  int32_t batch_to = 0;
  if (im.batch()) {
    std::vector<int64_t> example;
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] == x.batch_axis) batch_to = static_cast<int32_t>(i);
      else example.push_back(perm[i] > x.batch_axis ? perm[i] - 1 : perm[i]);
    }
    perm = std::move(example);
  }
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) im.alias(out, im.node().input(0));
  else im.emit("transpose", {{"perm", perm}}, {im.node().input(0)}, {}, out);
  im.move_batch(out, batch_to);
}

void concat(Importer &im) {
  im.check_attrs({"axis"});
  im.check_outputs(1);
  if (!im.has_attr("axis")) im.corrupt("axis is required");
  bool constants = true;
  for (int i = 0; i < im.inputs(); ++i) constants = constants && im.input(i).constant;
  if (constants && im.inputs() > 0) {
    fold_concat(im, im.attr_int("axis", 0));
    return;
  }
  std::vector<std::string> inputs;
  for (int i = 0; i < im.inputs(); ++i) {
    im.runtime_input(i);
    inputs.push_back(im.node().input(i));
  }
  int32_t dim = im.example_axis(im.attr_int("axis", 0), im.onnx_rank(im.input(0)));
  im.emit("concat", {{"axis", dim}}, inputs, {}, im.node().output(0));
}

void identity(Importer &im) {
  im.check_attrs({});
  im.check_outputs(1);
  im.input(0);
  im.alias(im.node().output(0), im.node().input(0));
}

// Dropout: identity at inference; imported as nnrt dropout so that fine-tuning drops too.
void dropout(Importer &im) {
  im.check_outputs(1);
  im.runtime_input(0);
  double ratio = 0.5;
  if (im.opset() < 12) {
    im.check_attrs({"ratio", "is_test"});
    ratio = im.attr_float("ratio", 0.5);
  } else {
    // "seed" only fixes the masks of a training-mode run, which is refused below; when nnrt
    // fine-tunes the model its masks come from the model's seed.
    im.check_attrs({"seed"});
    if (im.has_input(1)) {
      const HostTensor &r = im.constant_input(1, "ratio");
      if (r.numel() != 1) im.corrupt("ratio must be a scalar");
      ratio = r.floats()[0];
    }
    if (im.has_input(2)) {
      const HostTensor &t = im.constant_input(2, "training_mode");
      if (t.numel() != 1) im.corrupt("training_mode must be a scalar");
      if (t.ints()[0] != 0) im.unsupported("training_mode = true: ONNX's random masks cannot be reproduced");
    }
  }
  if (!(ratio >= 0 && ratio < 1)) im.unsupported("ratio ", ratio, " is not in [0, 1)");
  im.emit("dropout", {{"rate", ratio}}, {im.node().input(0)}, {}, im.node().output(0));
}

void constant(Importer &im) {
  im.check_outputs(1);
  if (im.node().attribute_size() != 1) im.corrupt("a Constant has exactly one attribute, got ", im.node().attribute_size());
  onnx::TensorProto t;
  if (!constant_node_tensor(im.node(), t)) im.unsupported("attribute \"", im.node().attribute(0).name(), "\" is not supported");
  t.set_name(im.node().output(0));
  im.set_constant(im.node().output(0), read_tensor(t, "", im.where()));
}

// Gather of one index (a scalar or [1]) along a dim of a computed value, as PyTorch's y[:, -1]:
// that index sliced out, the dim dropped for a scalar index.
void gather_index(Importer &im) {
  im.accept_moved_batch();
  const Value &x = im.runtime_input(0);
  const HostTensor &idx = im.constant_input(1, "the indices");
  if (idx.numel() != 1 || idx.dims.size() > 1) {
    im.unsupported("indices ", to_string(Shape::of(idx.dims)), " into a computed value: nnrt takes one index (a scalar or [1])");
  }
  int64_t axis = im.attr_int("axis", 0);
  int32_t dim = im.example_axis(x, axis);
  int64_t size = x.shape[dim], i = idx.ints()[0];
  if (i < -size || i >= size) im.corrupt("index ", i, " is out of range for a dim of ", size);
  if (i < 0) i += size;
  const std::string &out = im.node().output(0);
  bool scalar = idx.dims.empty();
  std::string in = im.node().input(0);
  if (size > 1) in = im.emit("slice", {{"axis", dim}, {"start", i}, {"length", 1}}, {in}, {}, scalar ? "" : out);
  int32_t batch_axis = x.batch_axis;
  if (scalar) {
    std::vector<int64_t> dims = x.shape.vec();
    dims.erase(dims.begin() + dim);
    if (dims.empty()) im.unsupported("a per-example scalar is not supported");
    im.emit("reshape", {{"shape", dims}}, {in}, {}, out);
    if (dim < batch_axis) --batch_axis;
  } else if (size == 1) {
    im.alias(out, in);
  }
  im.move_batch(out, batch_axis);
}

// Gather of rows of a constant table by the model's indices: an embedding lookup; of constant
// indices, a fold or gather_index.
void gather(Importer &im) {
  im.check_attrs({"axis"});
  im.check_outputs(1);
  if (im.input(0).constant && im.input(1).constant) {
    fold_gather(im);
    return;
  }
  if (im.input(1).constant) {
    gather_index(im);
    return;
  }
  if (im.attr_int("axis", 0) != 0) im.unsupported("only axis 0 (an embedding lookup) is supported");
  const Value &idx = im.runtime_input(1);
  if (idx.shape.rank > 1) im.unsupported("indices must be [N] or [N, T]");
  HostTensor table = im.take_constant(0, "the table");
  if (table.dims.size() != 2) im.unsupported("the table must be [rows, features], got ", to_string(Shape::of(table.dims)));
  int64_t rows = table.dims[0], units = table.dims[1];
  std::vector<std::pair<std::string, HostTensor>> params;
  params.emplace_back("weight", std::move(table));
  im.emit("embedding", {{"vocab", rows}, {"units", units}, {"init", "zeros"}}, {im.node().input(1)}, std::move(params),
          im.node().output(0));
}

}  // namespace

void register_shape_ops(std::map<std::string, Importer::Translator> &t) {
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Transpose"] = transpose;
  t["Concat"] = concat;
  t["Identity"] = identity;
  t["Dropout"] = dropout;
  t["Constant"] = constant;
  t["Gather"] = gather;
}

}  // namespace nnrt::io::onnx_format
