#include "onnx_import_pattern.h"

#include <algorithm>

namespace nnrt::io::onnx_format {

// ---- symbolic integers ----------------------------------------------------------------------

SymInt operator*(SymInt a, SymInt b) {
  if (!a.known || !b.known) return {};
  return {true, a.c * b.c, a.t + b.t, a.n + b.n};
}

SymInt operator/(SymInt a, SymInt b) {
  if (!a.known || !b.known || b.c == 0 || b.t > a.t || b.n > a.n) return {};
  bool exact = a.c % b.c == 0;
  if (!exact && !(a.is_constant() && b.is_constant())) return {};
  // ONNX Div of integers truncates toward zero (C++ division does the same).
  return {true, a.c / b.c, a.t - b.t, a.n - b.n};
}

SymInt operator+(SymInt a, SymInt b) {
  if (!a.known || !b.known) return {};
  if (a.c == 0) return b;
  if (b.c == 0) return a;
  if (a.t != b.t || a.n != b.n) return {};
  return {true, a.c + b.c, a.t, a.n};
}

SymInt operator-(SymInt a, SymInt b) {
  b.c = -b.c;
  return a + b;
}

// ---- the graph --------------------------------------------------------------------------------

GraphPattern::GraphPattern(const onnx::GraphProto &g, const Importer &im) : g_(g), im_(im) {
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string &o : g.node(i).output()) producer_[o] = i;
    for (const std::string &in : g.node(i).input()) consumers_[in].push_back(i);
  }
  for (const auto &o : g.output()) graph_outputs_.insert(o.name());
}

int GraphPattern::producer_index(const std::string &name) const {
  auto it = producer_.find(name);
  return it == producer_.end() ? -1 : it->second;
}

const onnx::NodeProto *GraphPattern::producer(const std::string &name, const char *op_type) const {
  int i = producer_index(name);
  if (i < 0) return nullptr;
  const onnx::NodeProto &n = g_.node(i);
  if (op_type && n.op_type() != op_type) return nullptr;
  if (!n.domain().empty() && n.domain() != "ai.onnx") return nullptr;
  return &n;
}

const std::vector<int> &GraphPattern::consumers(const std::string &name) const {
  static const std::vector<int> none;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? none : it->second;
}

const onnx::NodeProto *GraphPattern::sole_reader(const std::string &name, const char *op_type) const {
  const onnx::NodeProto *found = nullptr;
  for (int i : consumers(name)) {
    const onnx::NodeProto &n = g_.node(i);
    if (n.op_type() == "Shape") continue;
    if (found) return nullptr;
    found = &n;
  }
  return found && found->op_type() == op_type && found->output_size() == 1 ? found : nullptr;
}

std::optional<HostTensor> GraphPattern::constant(const std::string &name) const {
  if (const Value *v = im_.find_value(name)) {  // an initializer
    if (!v->constant || v->batch_sized || v->filled) return std::nullopt;
    return v->tensor;
  }
  if (const onnx::NodeProto *n = producer(name, "Identity")) return n->input_size() == 1 ? constant(n->input(0)) : std::nullopt;
  const onnx::NodeProto *n = producer(name, "Constant");
  onnx::TensorProto t;
  if (!n || !constant_node_tensor(*n, t)) return std::nullopt;
  try {
    return read_tensor(t, "", "Constant '" + name + "'");
  } catch (const Error &) {
    return std::nullopt;  // the translator says what is wrong with it
  }
}

bool GraphPattern::is_constant(const std::string &name) const {
  if (const Value *v = im_.find_value(name)) return v->constant && !v->batch_sized && !v->filled;
  if (const onnx::NodeProto *n = producer(name, "Identity")) return n->input_size() == 1 && is_constant(n->input(0));
  return producer(name, "Constant") != nullptr;
}

std::optional<double> GraphPattern::scalar(const std::string &name) const {
  std::optional<HostTensor> t = constant(name);
  if (!t || t->numel() != 1) return std::nullopt;
  try {
    return static_cast<double>(t->floats()[0]);
  } catch (const Error &) {
    return std::nullopt;
  }
}

int64_t GraphPattern::attr_int(const onnx::NodeProto &n, const char *name, int64_t fallback) {
  for (const auto &a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

double GraphPattern::attr_float(const onnx::NodeProto &n, const char *name, double fallback) {
  for (const auto &a : n.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

std::vector<int64_t> GraphPattern::attr_ints(const onnx::NodeProto &n, const char *name) {
  for (const auto &a : n.attribute())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return {};
}

std::optional<SymShape> GraphPattern::ints(const std::string &name, const std::map<std::string, SymShape> &shapes) const {
  if (std::optional<HostTensor> c = constant(name)) {
    if (c->elem_type != onnx::TensorProto::INT64 && c->elem_type != onnx::TensorProto::INT32) return std::nullopt;
    SymShape out;
    for (int64_t v : c->ints()) out.push_back(SymInt::constant(v));
    return out;
  }
  const onnx::NodeProto *n = producer(name);
  if (!n) return std::nullopt;
  const std::string &op = n->op_type();
  auto operand = [&](int i) { return i < n->input_size() ? ints(n->input(i), shapes) : std::nullopt; };
  if (op == "Shape") {
    auto it = shapes.find(n->input(0));
    if (it == shapes.end()) return std::nullopt;
    const SymShape &s = it->second;
    auto rank = static_cast<int64_t>(s.size());
    auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t(0), rank); };
    int64_t start = clamp(attr_int(*n, "start", 0)), end = clamp(attr_int(*n, "end", rank));
    return start < end ? SymShape(s.begin() + start, s.begin() + end) : SymShape{};
  }
  if (op == "Identity" || op == "Cast" || op == "Squeeze" || op == "Unsqueeze") {
    // Shape arithmetic works on scalars and 1-D lists: the values are kept flat.
    return operand(0);
  }
  if (op == "Gather") {
    std::optional<SymShape> data = operand(0);
    std::optional<HostTensor> index = n->input_size() > 1 ? constant(n->input(1)) : std::nullopt;
    if (!data || !index || attr_int(*n, "axis", 0) != 0) return std::nullopt;
    SymShape out;
    auto size = static_cast<int64_t>(data->size());
    for (int64_t i : index->ints()) {
      if (i < -size || i >= size) return std::nullopt;
      out.push_back((*data)[i < 0 ? i + size : i]);
    }
    return out;
  }
  if (op == "Concat") {
    SymShape out;
    for (int i = 0; i < n->input_size(); ++i) {
      std::optional<SymShape> part = operand(i);
      if (!part) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  if (op == "ConstantOfShape") {  // a 1-D list of one integer value
    std::optional<SymShape> length = operand(0);
    const onnx::AttributeProto *value = nullptr;
    for (const auto &a : n->attribute())
      if (a.name() == "value") value = &a;
    int64_t v = 0;
    if (value) {
      onnx::TensorProto t = value->t();
      HostTensor h = read_tensor(t, "", "ConstantOfShape value");
      if (h.elem_type != onnx::TensorProto::INT64 && h.elem_type != onnx::TensorProto::INT32) return std::nullopt;
      std::vector<int64_t> vs = h.ints();
      if (vs.size() != 1) return std::nullopt;
      v = vs[0];
    }
    if (!length || length->size() != 1 || !(*length)[0].is_constant() || (*length)[0].c < 0 || (*length)[0].c > 64) {
      return std::nullopt;
    }
    return SymShape(static_cast<size_t>((*length)[0].c), SymInt::constant(v));
  }
  if (op == "Equal" || op == "Where") {  // elementwise, on values that decide it
    std::optional<SymShape> a = operand(0), b = operand(1), c = op == "Where" ? operand(2) : SymShape{SymInt::constant(0)};
    if (!a || !b || !c) return std::nullopt;
    size_t size = std::max({a->size(), b->size(), c->size()});
    for (const SymShape *x : {&*a, &*b, &*c})
      if (x->size() != size && x->size() != 1) return std::nullopt;
    auto at = [&](const SymShape &x, size_t i) { return x[x.size() == 1 ? 0 : i]; };
    SymShape out(size);
    for (size_t i = 0; i < size; ++i) {
      if (op == "Equal") {
        SymInt x = at(*a, i), y = at(*b, i);
        if (x == y) out[i] = SymInt::constant(1);
        else if (x.is_constant() && y.is_constant()) out[i] = SymInt::constant(0);
        else return std::nullopt;
      } else {
        SymInt cond = at(*a, i);
        if (!cond.is_constant()) return std::nullopt;
        out[i] = cond.c != 0 ? at(*b, i) : at(*c, i);
      }
    }
    return out;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    std::optional<SymShape> a = operand(0), b = operand(1);
    if (!a || !b || a->empty() || b->empty()) return std::nullopt;
    if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return std::nullopt;
    SymShape out(std::max(a->size(), b->size()));
    for (size_t i = 0; i < out.size(); ++i) {
      SymInt x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      out[i] = op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y;
    }
    return out;
  }
  return std::nullopt;
}

std::optional<Fusion> GraphPattern::fusion(const std::string &entry, const std::string &result,
                                           std::function<void(Importer &)> emit) const {
  return fusion(std::vector<std::string>{entry}, result, std::move(emit));
}

std::optional<Fusion> GraphPattern::fusion(const std::vector<std::string> &entries, const std::string &result,
                                           std::function<void(Importer &)> emit) const {
  const int exit = producer_index(result);
  if (exit < 0) return std::nullopt;
  auto is_entry = [&](const std::string &v) { return std::find(entries.begin(), entries.end(), v) != entries.end(); };
  std::set<int> nodes;
  std::vector<int> todo = {exit};
  while (!todo.empty()) {
    int i = todo.back();
    todo.pop_back();
    if (!nodes.insert(i).second) continue;
    const onnx::NodeProto &n = g_.node(i);
    if (n.op_type() == "Shape") continue;  // reads only the shape, which the matcher checked
    for (const std::string &in : n.input()) {
      if (in.empty() || is_entry(in) || is_constant(in)) continue;
      int p = producer_index(in);
      if (p < 0) return std::nullopt;  // another run-time input
      todo.push_back(p);
    }
  }
  // A node made from the region's values only for the region's Shape nodes to measure (a Transpose
  // of a head whose size a mask's Reshape reads) joins it.
  for (int p = 0; p < exit; ++p) {
    if (nodes.count(p)) continue;
    const onnx::NodeProto &n = g_.node(p);
    bool measured_only = n.output_size() > 0, inside = n.input_size() > 0;
    for (const std::string &o : n.output()) {
      measured_only = measured_only && !graph_outputs_.count(o) && !consumers(o).empty();
      for (int c : consumers(o)) measured_only = measured_only && nodes.count(c) && g_.node(c).op_type() == "Shape";
    }
    for (const std::string &in : n.input()) {
      int q = in.empty() || is_entry(in) || is_constant(in) ? -2 : producer_index(in);
      inside = inside && (q == -2 || (q >= 0 && nodes.count(q)));
    }
    if (measured_only && inside) nodes.insert(p);
  }
  if (*nodes.rbegin() != exit) return std::nullopt;  // the graph is not sorted: the translators say so
  for (int i : nodes) {
    for (const std::string &o : g_.node(i).output()) {
      if (o == result) continue;
      if (graph_outputs_.count(o)) return std::nullopt;
      for (int c : consumers(o))
        if (!nodes.count(c)) return std::nullopt;
    }
  }
  return Fusion{std::move(nodes), exit, std::move(emit)};
}

std::vector<Fusion> find_fusions(const GraphPattern &g) {
  std::vector<Fusion> found;
  find_attention(g, found);
  find_activations(g, found);
  find_decomposed_norm(g, found);
  // The first match of a node wins.
  std::vector<Fusion> kept;
  std::set<int> taken;
  for (Fusion &f : found) {
    bool overlaps = false;
    for (int i : f.nodes) overlaps = overlaps || taken.count(i);
    if (overlaps) continue;
    taken.insert(f.nodes.begin(), f.nodes.end());
    kept.push_back(std::move(f));
  }
  return kept;
}

}  // namespace nnrt::io::onnx_format
