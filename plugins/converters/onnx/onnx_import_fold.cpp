// The shape-only parts of a graph, folded on the shapes the importer knows: Shape, ConstantOfShape
// and Expand, Gather and Concat of constants, Add/Sub/Mul/Div of two constants and Cast (the
// head-size arithmetic exported attention carries). Exporters build an RNN's zero initial state as
// ConstantOfShape(Concat(1, Unsqueeze(Gather(Shape(x), batch)), hidden)); the batch size is known
// only at run time, so it stays a marker (kBatchSize) in the folded shape, and what is filled to
// such a shape stays one value (Value::filled) that the ops reading it check (an LSTM's zero state).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "onnx_import.h"

namespace nnrt::io::onnx_format {

namespace {

// Folding is for shapes and small tables: a folded constant may hold at most this many elements.
constexpr int64_t kMaxFolded = int64_t(1) << 24;

bool holds_batch(const std::vector<int64_t> &dims) {
  for (int64_t d : dims)
    if (d == kBatchSize) return true;
  return false;
}

int64_t folded_numel(Importer &im, const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) im.corrupt("a negative dim ", d, " in ", to_string(Shape::of(dims)));
    if (d != 0 && n > kMaxFolded / d) im.unsupported("the result ", to_string(Shape::of(dims)), " is too large to fold");
    n *= d;
  }
  return n;
}

// `one` (a single value) over `dims`: a constant, or a filled value when dims holds the batch.
Value filled(Importer &im, HostTensor one, std::vector<int64_t> dims) {
  Value v;
  v.constant = true;
  if (holds_batch(dims)) {
    v.filled = true;
    v.fill_dims = std::move(dims);
    v.tensor = std::move(one);
    return v;
  }
  int64_t n = folded_numel(im, dims);
  v.tensor.name = im.node().output(0);
  v.tensor.elem_type = one.elem_type;
  v.tensor.dims = std::move(dims);
  v.tensor.bytes.reserve(static_cast<size_t>(n) * one.bytes.size());
  for (int64_t i = 0; i < n; ++i) v.tensor.bytes += one.bytes;
  return v;
}

// A ONNX shape operand (1-D int64) that may hold the batch size.
std::vector<int64_t> shape_operand(Importer &im, int i) {
  const Value &v = im.constant_value(i, "the shape");
  if (v.filled || v.tensor.dims.size() != 1 || v.tensor.elem_type != onnx::TensorProto::INT64) {
    im.corrupt("the shape (input ", i, ") must be a 1-D int64 tensor");
  }
  return v.tensor.ints();
}

// Shape: the ONNX dims of the input, the batch as kBatchSize; opset 15's start and end slice them.
void shape(Importer &im) {
  im.check_attrs({"start", "end"});
  im.check_outputs(1);
  im.accept_moved_batch();
  const Value &x = im.input(0);
  std::vector<int64_t> dims = im.onnx_dims(x);
  int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t a) { return std::min(std::max(a < 0 ? a + rank : a, int64_t(0)), rank); };
  int64_t start = clamp(im.attr_int("start", 0)), end = clamp(im.attr_int("end", rank));
  std::vector<int64_t> out(dims.begin() + start, dims.begin() + std::max(start, end));
  Value v;
  v.constant = true;
  v.batch_sized = holds_batch(out);
  v.tensor.name = im.node().output(0);
  v.tensor.elem_type = onnx::TensorProto::INT64;
  v.tensor.dims = {static_cast<int64_t>(out.size())};
  v.tensor.bytes.assign(reinterpret_cast<const char *>(out.data()), out.size() * sizeof(int64_t));
  im.set_value(im.node().output(0), std::move(v));
}

void constant_of_shape(Importer &im) {
  im.check_attrs({"value"});
  im.check_outputs(1);
  std::vector<int64_t> dims = shape_operand(im, 0);
  HostTensor one;
  one.elem_type = onnx::TensorProto::FLOAT;
  one.dims = {1};
  one.bytes.assign(sizeof(float), '\0');
  if (const onnx::TensorProto *t = im.attr_tensor("value")) {
    onnx::TensorProto copy = *t;
    one = read_tensor(copy, "", im.where() + " value");
    if (one.numel() != 1) im.corrupt("value must hold one element, got ", to_string(Shape::of(one.dims)));
  }
  im.set_value(im.node().output(0), filled(im, std::move(one), std::move(dims)));
}

// Expand of a constant of one element (what exporters write for zero states).
void expand(Importer &im) {
  im.check_attrs({});
  im.check_outputs(1);
  const Value &x = im.input(0);
  if (!x.constant) im.unsupported("Expand of a computed value is not supported (only of a constant of one element)");
  HostTensor one = im.constant_input(0, "the input");
  if (one.numel() != 1) im.unsupported("Expand of a constant of ", one.numel(), " elements is not supported (only of one)");
  std::vector<int64_t> dims = shape_operand(im, 1);
  // Broadcast: the input's dims (all 1) against the shape, right-aligned.
  if (one.dims.size() > dims.size()) dims.insert(dims.begin(), one.dims.size() - dims.size(), 1);
  for (int64_t &d : dims)
    if (d == 0) im.unsupported("empty tensors are not supported");
  im.set_value(im.node().output(0), filled(im, std::move(one), std::move(dims)));
}

// The bytes of `values` as ONNX element type `type` (FLOAT, DOUBLE, INT32, INT64 or BOOL).
std::string encode(Importer &im, int32_t type, const std::vector<double> &values) {
  std::string bytes;
  auto put = [&bytes](auto v) { bytes.append(reinterpret_cast<const char *>(&v), sizeof v); };
  for (double v : values) {
    switch (type) {
      case onnx::TensorProto::FLOAT: put(static_cast<float>(v)); break;
      case onnx::TensorProto::DOUBLE: put(v); break;
      case onnx::TensorProto::INT32: put(static_cast<int32_t>(v)); break;
      case onnx::TensorProto::INT64: put(static_cast<int64_t>(v)); break;
      case onnx::TensorProto::BOOL: put(static_cast<uint8_t>(v != 0)); break;
      default: im.unsupported("folding to ONNX element type ", type, " is not supported (float, double, int32, int64, bool)");
    }
  }
  return bytes;
}

bool is_integer(int32_t type) {
  return type == onnx::TensorProto::INT32 || type == onnx::TensorProto::INT64 || type == onnx::TensorProto::BOOL;
}

// A constant's values as doubles; int64 values beyond 2^53 or the batch size marker refused.
std::vector<double> values_of(Importer &im, const Value &v, const char *what) {
  if (v.filled) im.unsupported(what, " is filled to a batch-sized shape: arithmetic on it is not supported");
  std::vector<double> out;
  if (is_integer(v.tensor.elem_type)) {
    for (int64_t i : v.tensor.ints()) {
      if (i == kBatchSize)
        im.unsupported(what, " holds the batch size, known only at run time: arithmetic on it is not supported");
      if (i > (int64_t(1) << 53) || i < -(int64_t(1) << 53)) im.unsupported(what, " holds ", i, ", too large to fold exactly");
      out.push_back(static_cast<double>(i));
    }
  } else {
    for (float f : v.tensor.floats()) out.push_back(f);
  }
  return out;
}

}  // namespace

void fold_binary(Importer &im, const std::string &op) {
  const Value &a = im.constant_value(0, "input 0"), &b = im.constant_value(1, "input 1");
  const int32_t type = a.tensor.elem_type;
  if (b.tensor.elem_type != type) im.corrupt("inputs of element types ", type, " and ", b.tensor.elem_type);
  const std::vector<double> x = values_of(im, a, "input 0"), y = values_of(im, b, "input 1");
  // numpy broadcasting, dims right-aligned.
  const std::vector<int64_t> &da = a.tensor.dims, &db = b.tensor.dims;
  const size_t rank = std::max(da.size(), db.size());
  std::vector<int64_t> dims(rank), sa(rank, 0), sb(rank, 0);
  int64_t step_a = 1, step_b = 1;
  for (size_t k = rank; k-- > 0;) {
    const size_t off_a = rank - da.size(), off_b = rank - db.size();
    const int64_t ea = k >= off_a ? da[k - off_a] : 1, eb = k >= off_b ? db[k - off_b] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      im.corrupt("inputs ", to_string(Shape::of(da)), " and ", to_string(Shape::of(db)), " do not broadcast");
    dims[k] = std::max(ea, eb);
    if (ea != 1) sa[k] = step_a;
    if (eb != 1) sb[k] = step_b;
    step_a *= ea;
    step_b *= eb;
  }
  const int64_t n = folded_numel(im, dims);
  std::vector<double> out(static_cast<size_t>(n));
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t k = 0; k < rank; ++k) {
      ia += index[k] * sa[k];
      ib += index[k] * sb[k];
    }
    const double u = x[static_cast<size_t>(ia)], v = y[static_cast<size_t>(ib)];
    double r;
    if (op == "add") r = u + v;
    else if (op == "sub") r = u - v;
    else if (op == "mul") r = u * v;
    else if (is_integer(type)) {
      if (v == 0) im.corrupt("integer division by zero");
      r = std::trunc(u / v);  // ONNX integer Div truncates, as C does
    } else {
      r = u / v;
    }
    out[static_cast<size_t>(i)] = r;
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  Value v;
  v.constant = true;
  v.tensor.name = im.node().output(0);
  v.tensor.elem_type = type;
  v.tensor.dims = dims;
  v.tensor.bytes = encode(im, type, out);
  im.set_value(im.node().output(0), std::move(v));
}

namespace {

// Cast: folded for constants; for a computed float value, a cast to float is the value itself.
// nnrt computes in one float type, so other casts of computed values are refused.
void cast(Importer &im) {
  im.check_attrs({"to"});
  im.check_outputs(1);
  const int64_t to = im.attr_int("to", 0);
  const Value &x = im.input(0);
  if (!x.constant) {
    if (to != onnx::TensorProto::FLOAT) im.unsupported("Cast of a computed value to element type ", to, " (nnrt computes in float)");
    im.alias(im.node().output(0), im.node().input(0));
    return;
  }
  std::vector<double> values = values_of(im, x, "the input");
  if (is_integer(static_cast<int32_t>(to)) && !is_integer(x.tensor.elem_type))
    for (double &d : values) d = std::trunc(d);  // float to integer truncates toward zero
  Value v;
  v.constant = true;
  v.tensor.name = im.node().output(0);
  v.tensor.elem_type = static_cast<int32_t>(to);
  v.tensor.dims = x.tensor.dims;
  v.tensor.bytes = encode(im, static_cast<int32_t>(to), values);
  im.set_value(im.node().output(0), std::move(v));
}

}  // namespace

void fold_gather(Importer &im) {
  const Value &data = im.constant_value(0, "the data");
  if (data.filled) im.unsupported("Gather of a value filled to a batch-sized shape is not supported");
  const HostTensor &t = data.tensor, &idx = im.constant_input(1, "the indices");
  int64_t rank = static_cast<int64_t>(t.dims.size()), axis = im.attr_int("axis", 0);
  if (rank == 0) im.corrupt("Gather of a scalar");
  if (axis < -rank || axis >= rank) im.corrupt("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  size_t elem = element_size(t.elem_type);
  int64_t outer = 1, inner = 1, size = t.dims[axis];
  for (int64_t k = 0; k < axis; ++k) outer *= t.dims[k];
  for (int64_t k = axis + 1; k < rank; ++k) inner *= t.dims[k];
  std::vector<int64_t> dims(t.dims.begin(), t.dims.begin() + axis);
  dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
  dims.insert(dims.end(), t.dims.begin() + axis + 1, t.dims.end());
  folded_numel(im, dims);
  std::vector<int64_t> indices = idx.ints();
  Value v;
  v.constant = true;
  v.tensor.name = im.node().output(0);
  v.tensor.elem_type = t.elem_type;
  v.tensor.dims = dims;
  size_t block = static_cast<size_t>(inner) * elem;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : indices) {
      if (i < -size || i >= size) im.corrupt("index ", i, " is out of range for a dim of ", size);
      if (i < 0) i += size;
      v.tensor.bytes.append(t.bytes, static_cast<size_t>(o * size + i) * block, block);
    }
  }
  if (data.batch_sized) v.batch_sized = holds_batch(v.tensor.ints());
  im.set_value(im.node().output(0), std::move(v));
}

void fold_concat(Importer &im, int64_t axis) {
  const HostTensor &first = im.constant_value(0, "input 0").tensor;
  int64_t rank = static_cast<int64_t>(first.dims.size());
  if (rank == 0) im.corrupt("Concat of scalars");
  if (axis < -rank || axis >= rank) im.corrupt("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  bool batch_sized = false;
  std::vector<const HostTensor *> parts;
  for (int i = 0; i < im.inputs(); ++i) {
    const Value &v = im.constant_value(i, "each input");
    if (v.filled) im.unsupported("Concat of a value filled to a batch-sized shape is not supported");
    const HostTensor &t = v.tensor;
    std::vector<int64_t> a = t.dims, b = first.dims;
    if (a.size() != b.size() || t.elem_type != first.elem_type) im.corrupt("input ", i, " differs in rank or type from input 0");
    a[axis] = b[axis] = 0;
    if (a != b) im.corrupt("input ", i, " is ", to_string(Shape::of(t.dims)), ", input 0 ", to_string(Shape::of(first.dims)));
    dims[axis] += t.dims[axis];
    batch_sized = batch_sized || v.batch_sized;
    parts.push_back(&t);
  }
  folded_numel(im, dims);
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= dims[k];
  Value out;
  out.constant = true;
  out.batch_sized = batch_sized;
  out.tensor.name = im.node().output(0);
  out.tensor.elem_type = first.elem_type;
  out.tensor.dims = dims;
  for (int64_t o = 0; o < outer && outer > 0; ++o) {
    for (const HostTensor *t : parts) {
      size_t block = t->bytes.size() / static_cast<size_t>(outer);
      out.tensor.bytes.append(t->bytes, static_cast<size_t>(o) * block, block);
    }
  }
  im.set_value(im.node().output(0), std::move(out));
}

void register_fold_ops(std::map<std::string, Importer::Translator> &t) {
  t["Shape"] = shape;
  t["ConstantOfShape"] = constant_of_shape;
  t["Expand"] = expand;
  t["Cast"] = cast;
}

}  // namespace nnrt::io::onnx_format
