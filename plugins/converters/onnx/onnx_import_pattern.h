// Fusions at import: subgraphs that exporters write for one layer nnrt has (PyTorch's multi-head
// attention, erf GELU, layer and RMS normalization decomposed) are recognized before the nodes are
// translated and become that layer, so that they run as one fast op rather than node by node, and
// so that graphs whose node-by-node form nnrt cannot express (attention merges the batch with the
// heads) still import.
//
// A matcher reads the graph through GraphPattern (producers, consumers, constants, and the integer
// arithmetic on shapes that exporters write, evaluated symbolically) and proposes a Fusion: the
// nodes it replaces and how to emit the layer. A fusion is taken only when it matches exactly (every
// constant, permutation and reshape checked) and its nodes form a closed region (no value made inside
// is read outside but its result); anything else is left to the node-by-node translators.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_import.h"

namespace nnrt::io::onnx_format {

// An integer of shape arithmetic: c * T^t * N^n, where N is the batch size and T another size that
// is known only at run time (a sequence length), or unknown.
struct SymInt {
  bool known = false;
  int64_t c = 0;
  int t = 0, n = 0;

  static SymInt constant(int64_t v) { return {true, v, 0, 0}; }
  bool is_constant() const { return known && t == 0 && n == 0; }
  bool operator==(const SymInt &o) const { return known && o.known && c == o.c && t == o.t && n == o.n; }
};
SymInt operator*(SymInt a, SymInt b);
SymInt operator/(SymInt a, SymInt b);  // exact, or floor of two constants; else unknown
SymInt operator+(SymInt a, SymInt b);  // constants, or like terms; else unknown
SymInt operator-(SymInt a, SymInt b);
inline const SymInt kSymT{true, 1, 1, 0};
inline const SymInt kSymN{true, 1, 0, 1};
using SymShape = std::vector<SymInt>;

// One recognized subgraph: `nodes` are replaced by what `emit` makes when the translation reaches
// `at` (the last of them), which names the ONNX value the region made.
struct Fusion {
  std::set<int> nodes;
  int at = -1;
  std::function<void(Importer &)> emit;
};

// The graph as matchers read it. Constants are initializers, Constant nodes and Identity chains of
// them, read without disturbing what the translators will read later.
class GraphPattern {
 public:
  GraphPattern(const onnx::GraphProto &g, const Importer &im);

  const onnx::GraphProto &graph() const { return g_; }
  const onnx::NodeProto &node(int i) const { return g_.node(i); }
  // The node that makes `name` (of `op_type`, when given), or nullptr.
  const onnx::NodeProto *producer(const std::string &name, const char *op_type = nullptr) const;
  int producer_index(const std::string &name) const;
  const std::vector<int> &consumers(const std::string &name) const;
  // The one node of `op_type` reading `name`, when no other node but Shape nodes (which the region
  // check allows) reads it, and it makes one output; else nullptr.
  const onnx::NodeProto *sole_reader(const std::string &name, const char *op_type) const;

  bool is_constant(const std::string &name) const;
  std::optional<HostTensor> constant(const std::string &name) const;
  // A constant of one element, as a double.
  std::optional<double> scalar(const std::string &name) const;
  int64_t opset() const { return im_.opset(); }
  // Attributes of node n.
  static int64_t attr_int(const onnx::NodeProto &n, const char *name, int64_t fallback);
  static double attr_float(const onnx::NodeProto &n, const char *name, double fallback);
  static std::vector<int64_t> attr_ints(const onnx::NodeProto &n, const char *name);

  // The integer values of `name` (shape arithmetic: Shape, Gather, Unsqueeze, Concat, Cast,
  // ConstantOfShape, Equal, Where and Add/Sub/Mul/Div of them and of int constants), given the symbolic shapes of the run-time values
  // the matcher knows (`shapes`); nullopt when any step is outside that arithmetic.
  std::optional<SymShape> ints(const std::string &name, const std::map<std::string, SymShape> &shapes) const;

  // The fusion of the nodes that compute `result` from `entry` and constants (Shape of another
  // value is allowed), made by `emit` when the translation reaches the node making `result`;
  // nullopt unless that node is the last of them and none of their values but `result` is read
  // elsewhere (by a node outside, or as a graph output).
  std::optional<Fusion> fusion(const std::string &entry, const std::string &result,
                               std::function<void(Importer &)> emit) const;
  // The same for a region with several run-time inputs (attention and its key mask).
  std::optional<Fusion> fusion(const std::vector<std::string> &entries, const std::string &result,
                               std::function<void(Importer &)> emit) const;

 private:
  const onnx::GraphProto &g_;
  const Importer &im_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::set<std::string> graph_outputs_;
};

// Every fusion of the graph (regions do not overlap: the first match of a node wins). Matchers by
// family: onnx_import_attention.cpp, onnx_import_activations.cpp, onnx_import_norm.cpp.
std::vector<Fusion> find_fusions(const GraphPattern &g);
void find_attention(const GraphPattern &g, std::vector<Fusion> &out);
void find_activations(const GraphPattern &g, std::vector<Fusion> &out);
void find_decomposed_norm(const GraphPattern &g, std::vector<Fusion> &out);

}  // namespace nnrt::io::onnx_format
