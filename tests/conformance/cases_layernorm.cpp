// Cases for LAYERNORM and LAYERNORM_BACKWARD: both algs (layer, RMS), every float dtype, random
// ranks and normalized axes, strided and padded x, gamma and beta present or absent (and
// broadcast), statistics kept or not; the shapes transformers use; NaN and infinities in a row.
#include <cmath>

#include "cases.h"

namespace nnrt::conformance {
namespace {

Dims random_dims(Picker &p) {
  Dims d;
  const int64_t rank = p.between(1, 4);
  for (int64_t i = 0; i < rank; ++i) d.push_back(p.size());
  return d;
}

Dims leading(const Dims &d, int axis) { return Dims(d.begin(), d.begin() + axis); }
Dims trailing(const Dims &d, int axis) { return Dims(d.begin() + axis, d.end()); }

int64_t product(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

nnrt_op_attrs norm_attrs(int32_t alg, int axis) {
  nnrt_op_attrs a = no_attrs();
  a.alg = alg;
  a.axis = axis;
  a.eps = 1e-5;
  return a;
}

const char *alg_name(int32_t alg) { return alg == NNRT_NORM_RMS ? "rms" : "layer"; }

struct Shapes {
  Dims x;
  int axis;
  Layout lx, ly;
  int params;               // 0: none, 1: gamma, 2: gamma and beta
  uint32_t gamma_broadcast;  // stride-0 dims of gamma
  bool stats;
};

std::string case_name(const char *kind, int32_t alg, int32_t t, const Shapes &s) {
  return std::string(kind) + "/" + alg_name(alg) + "/" + dtype_name(t) + "/" + dims_name(s.x) + "/axis" +
         std::to_string(s.axis) + "/x:" + layout_name(s.lx) + "/y:" + layout_name(s.ly) + "/params" +
         std::to_string(s.params) + (s.gamma_broadcast ? "b" : "") + (s.stats ? "/stats" : "");
}

Case forward_case(int32_t alg, int32_t t, const Shapes &s, Fill x_fill, const std::string &suffix = "") {
  const std::string group = std::string("layernorm/") + alg_name(alg) + "/" + dtype_name(t);
  const Dims rows = leading(s.x, s.axis), normalized = trailing(s.x, s.axis);
  CaseBuilder b(NNRT_OP_LAYERNORM, case_name("layernorm", alg, t, s) + suffix, group);
  b.in(make_tensor(t, s.x, s.lx), x_fill);
  if (s.params >= 1)
    b.in(make_tensor(NNRT_DTYPE_F32, normalized, Layout::contiguous, s.gamma_broadcast), Fill::U(0.5, 1.5));
  if (s.params >= 2) b.in(make_tensor(NNRT_DTYPE_F32, normalized), Fill::U(-0.5, 0.5));
  b.out(make_tensor(t, s.x, s.ly), 2).attrs(norm_attrs(alg, s.axis));
  if (s.stats) b.out(make_tensor(NNRT_DTYPE_F32, rows), 2).out(make_tensor(NNRT_DTYPE_F32, rows), 4);
  return b.done();
}

Case backward_case(int32_t alg, int32_t t, const Shapes &s, Fill x_fill, const std::string &suffix = "") {
  const std::string group = std::string("layernorm_backward/") + alg_name(alg) + "/" + dtype_name(t);
  const Dims rows = leading(s.x, s.axis), normalized = trailing(s.x, s.axis);
  // dgamma and dbeta sum over the rows, dx's two row sums over the row's elements.
  const double over_rows = std::sqrt(double(product(rows))), over_row = std::sqrt(double(product(normalized)));
  CaseBuilder b(NNRT_OP_LAYERNORM_BACKWARD, case_name("layernorm_backward", alg, t, s) + suffix, group);
  b.in(make_tensor(t, s.x, s.lx), x_fill)
      .in(make_tensor(t, s.x, s.ly))
      .in(make_tensor(NNRT_DTYPE_F32, rows), Fill::U(-0.5, 0.5))
      .in(make_tensor(NNRT_DTYPE_F32, rows), Fill::U(0.5, 2));
  if (s.params >= 1)
    b.in(make_tensor(NNRT_DTYPE_F32, normalized, Layout::contiguous, s.gamma_broadcast), Fill::U(0.5, 1.5));
  b.out(make_tensor(t, s.x, s.lx), 4 * over_row).attrs(norm_attrs(alg, s.axis));
  if (s.stats) b.out(make_tensor(NNRT_DTYPE_F32, normalized), 4 * over_rows).out(make_tensor(NNRT_DTYPE_F32, normalized), over_rows);
  return b.done();
}

Shapes random_shapes(Picker &p) {
  Shapes s;
  s.x = random_dims(p);
  const int rank = static_cast<int>(s.x.size());
  // Transformers normalize the last dim; other axes on one case in three.
  s.axis = p.chance(0.67) ? rank - 1 : static_cast<int>(p.between(0, rank - 1));
  s.lx = rank >= 2 && p.chance(0.25) ? Layout::transposed : p.chance(0.25) ? Layout::padded : Layout::contiguous;
  s.ly = p.chance(0.2) ? Layout::padded : Layout::contiguous;
  s.params = static_cast<int>(p.between(0, 2));
  s.gamma_broadcast = s.params >= 1 && rank - s.axis >= 2 && p.chance(0.2) ? 1u : 0u;
  s.stats = p.chance(0.6);
  return s;
}

}  // namespace

void add_layernorm_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (int32_t alg : {NNRT_NORM_LAYER, NNRT_NORM_RMS})
      for (int rep = 0; rep < (t == NNRT_DTYPE_F32 ? 6 : 3); ++rep) {
        Shapes s = random_shapes(p);
        out.push_back(forward_case(alg, t, s, Fill::U(-2, 3)));
        out.push_back(backward_case(alg, t, s, Fill::U(-2, 3)));
      }
  // The shapes of a transformer block: [batch, sequence, model width], gamma and beta, statistics
  // kept for training; bf16 as mixed precision runs it.
  for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16})
    for (int32_t alg : {NNRT_NORM_LAYER, NNRT_NORM_RMS}) {
      Shapes s{{2, 7, 256}, 2, Layout::contiguous, Layout::contiguous, alg == NNRT_NORM_RMS ? 1 : 2, 0, true};
      out.push_back(forward_case(alg, t, s, Fill::U(-2, 3)));
      out.push_back(backward_case(alg, t, s, Fill::U(-2, 3)));
    }
  // NaN and infinities: their rows become NaN, the others stay exact.
  Shapes special{{6, 33}, 1, Layout::contiguous, Layout::contiguous, 2, 0, true};
  out.push_back(forward_case(NNRT_NORM_LAYER, NNRT_DTYPE_F32, special, Fill::NonFinite(-2, 2), "/nonfinite"));
  out.push_back(backward_case(NNRT_NORM_LAYER, NNRT_DTYPE_F32, special, Fill::NonFinite(-2, 2), "/nonfinite"));
  // Many rows from several threads at once.
  Shapes many{{64, 48}, 1, Layout::contiguous, Layout::contiguous, 2, 0, true};
  Case c = forward_case(NNRT_NORM_LAYER, NNRT_DTYPE_F32, many, Fill::U(-2, 3), "/concurrent");
  c.concurrent = true;
  out.push_back(c);
}

}  // namespace nnrt::conformance
