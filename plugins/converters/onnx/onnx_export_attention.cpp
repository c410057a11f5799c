// ONNX export of the token layers: multi_head_attention and position_embedding (their import:
// onnx_import_attention.cpp recognizes the attention written here, batch-first with 4-D heads;
// a position embedding comes back as the Add of a constant table).
#include <cmath>

#include "converter_base.h"
#include "onnx_export.h"

namespace nnrt::io::onnx_format {

namespace {

// x [N, T, E] -> x in_proj_weight^T + in_proj_bias, split into q, k and v; heads as [N, H, T, d]
// (k as [N, H, d, T]); softmax(q k^T / sqrt(d) + causal mask) v; heads joined back to [N, T, E]
// and projected by out_proj.
void multi_head_attention(Exporter &ex) {
  const Json &a = ex.attrs();
  const std::string &name = ex.name(), &x = ex.inputs()[0];
  const int64_t tokens = ex.in_shape()[0], width = ex.in_shape()[1], heads = a.value("heads", 1);
  const int64_t d = width / heads;
  const bool bias = a.value("bias", true), causal = a.value("causal", false);

  std::string p = name + "/qkv";
  ex.add("MatMul", {x, ex.param_transposed(name + ".in_proj_weight")}, bias ? p + "_product" : p);
  if (bias) ex.add("Add", {p + "_product", ex.param(name + ".in_proj_bias")}, p);
  const std::string last_axis = ex.ints(name + "/last_axis", {-1});
  const std::string split = ex.ints(name + "/heads_shape", {0, tokens, heads, d});
  const char *part[] = {"q", "k", "v"};
  std::string head[3];
  for (int i = 0; i < 3; ++i) {
    std::string s = cat(name, "/", part[i]);
    ex.add("Slice", {p, ex.ints(s + "_start", {i * width}), ex.ints(s + "_end", {(i + 1) * width}), last_axis}, s);
    ex.add("Reshape", {s, split}, s + "_split");
    head[i] = s + "_heads";
    Exporter::set_ints(ex.add("Transpose", {s + "_split"}, head[i]), "perm",
                       i == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  const float scale = static_cast<float>(1 / std::sqrt(static_cast<double>(d)));
  ex.add("Mul", {head[0], ex.scalar(name + "/scale", scale)}, name + "/q_scaled");
  std::string scores = name + "/scores";
  ex.add("MatMul", {name + "/q_scaled", head[1]}, scores);
  if (causal) {
    std::vector<float> mask(static_cast<size_t>(tokens * tokens), 0.0f);
    for (int64_t i = 0; i < tokens; ++i)
      for (int64_t j = i + 1; j < tokens; ++j) mask[i * tokens + j] = -INFINITY;
    ex.add("Add", {scores, ex.tensor(name + "/causal_mask", {tokens, tokens}, mask)}, scores + "_masked");
    scores += "_masked";
  }
  Exporter::set_int(ex.add("Softmax", {scores}, name + "/weights"), "axis", -1);
  ex.add("MatMul", {name + "/weights", head[2]}, name + "/mixed");
  Exporter::set_ints(ex.add("Transpose", {name + "/mixed"}, name + "/mixed_tokens"), "perm", {0, 2, 1, 3});
  ex.add("Reshape", {name + "/mixed_tokens", ex.ints(name + "/joined_shape", {0, tokens, width})}, name + "/joined");
  ex.add("MatMul", {name + "/joined", ex.param_transposed(name + ".out_proj.weight")}, bias ? name + "/projected" : ex.output());
  if (bias) ex.add("Add", {name + "/projected", ex.param(name + ".out_proj.bias")}, ex.output());
}

// The learned table (the parameter weight [T, E]) or the sinusoidal one, added to each example.
void position_embedding(Exporter &ex) {
  const std::string &name = ex.name();
  if (!ex.attrs().value("sinusoidal", false)) {
    ex.add("Add", {ex.inputs()[0], ex.param(name + ".weight")}, ex.output());
    return;
  }
  // The fixed table of "Attention Is All You Need", as the layer computes it.
  const int64_t tokens = ex.in_shape()[0], width = ex.in_shape()[1];
  std::vector<float> table(static_cast<size_t>(tokens * width));
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < width; ++i) {
      const double angle = static_cast<double>(t) / std::pow(10000.0, static_cast<double>(i - i % 2) / static_cast<double>(width));
      table[static_cast<size_t>(t * width + i)] = static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  ex.add("Add", {ex.inputs()[0], ex.tensor(name + "/table", {tokens, width}, table)}, ex.output());
}

}  // namespace

void register_attention_layers(std::map<std::string, Exporter::LayerWriter> &t) {
  t["multi_head_attention"] = multi_head_attention;
  t["position_embedding"] = position_embedding;
}

}  // namespace nnrt::io::onnx_format
