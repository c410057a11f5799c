// Cases for MATMUL: float dtypes, ranks 2 to 4 with broadcast batch dims (stride 0), transposed
// and padded operands, optional bias, every fused activation.
#include <cmath>

#include "cases.h"

#include <tuple>

namespace nnrt::conformance {
namespace {

using Fused = FusedActivation;
const std::vector<Fused> &kFused = fused_activations();

struct MatmulShape {
  Dims batch;
  int64_t m, k, n;
};

MatmulShape pick_shape(Picker &p) {
  MatmulShape s;
  int batch_rank = static_cast<int>(p.between(0, 2));
  for (int i = 0; i < batch_rank; ++i) s.batch.push_back(p.small_size());
  s.m = p.size();
  s.k = p.size();
  s.n = p.size();
  return s;
}

Dims with_matrix(const Dims &batch, int64_t rows, int64_t cols) {
  Dims d = batch;
  d.push_back(rows);
  d.push_back(cols);
  return d;
}

// b_layout, when given, replaces the layout picked for b (the picks are made all the same, so that
// the cases after this one keep their names).
Case matmul_case(Picker &p, int32_t t, const MatmulShape &s, const Fused &f, bool bias, bool concurrent = false,
                 const Layout *b_layout = nullptr) {
  // Broadcast: a batch dim of a or of b (not both: c needs the size from one of them).
  uint32_t a_bcast = 0, b_bcast = 0;
  for (size_t i = 0; i < s.batch.size(); ++i)
    if (p.chance(0.4)) (p.chance(0.5) ? a_bcast : b_bcast) |= 1u << i;
  Layout la = p.chance(0.3) ? Layout::transposed : (p.chance(0.15) ? Layout::padded : Layout::contiguous);
  Layout lb = p.chance(0.3) ? Layout::transposed : (p.chance(0.15) ? Layout::padded : Layout::contiguous);
  Layout lc = p.chance(0.15) ? Layout::padded : Layout::contiguous;
  if (b_layout) lb = *b_layout;
  nnrt_op_attrs a = no_attrs();
  a.fused = f.alg;
  a.alpha = f.alpha;
  a.beta = f.beta;
  std::string group = std::string("matmul/") + dtype_name(t) + (bias ? "/bias" : "") + "/fused:" + f.name;
  std::string name = group + "/" + dims_name(with_matrix(s.batch, s.m, s.k)) + "x" + std::to_string(s.n) + "/a:" +
                     layout_name(la) + (a_bcast ? "+broadcast" : "") + "/b:" + layout_name(lb) +
                     (b_bcast ? "+broadcast" : "") + "/c:" + layout_name(lc);
  CaseBuilder b(NNRT_OP_MATMUL, name, group);
  b.in(make_tensor(t, with_matrix(s.batch, s.m, s.k), la, a_bcast))
      .in(make_tensor(t, with_matrix(s.batch, s.k, s.n), lb, b_bcast));
  if (bias) b.in(make_tensor(t, {s.n}));
  b.out(make_tensor(t, with_matrix(s.batch, s.m, s.n), lc), std::sqrt(double(s.k))).attrs(a);
  if (concurrent) b.concurrent();
  return b.done();
}

}  // namespace

void add_matmul_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (bool bias : {false, true})
      for (int rep = 0; rep < 4; ++rep) out.push_back(matmul_case(p, t, pick_shape(p), kFused[0], bias));
  // The activations added after SIGN draw from a picker of their own, so that the cases of the
  // others keep their names.
  Picker added = p.fork(0xadd5u);
  for (const Fused &f : kFused) {
    Picker &pf = f.alg > NNRT_UNARY_SIGN ? added : p;
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16}) out.push_back(matmul_case(pf, t, pick_shape(pf), f, pf.chance(0.5)));
  }
  // Shapes of dense layers, including a batch of 1 and a single output.
  for (MatmulShape s : {MatmulShape{{}, 64, 784, 33}, MatmulShape{{}, 1, 200, 10}, MatmulShape{{}, 64, 50, 1},
                        MatmulShape{{3}, 17, 64, 31}})
    for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16}) out.push_back(matmul_case(p, t, s, kFused[1], true));
  out.push_back(matmul_case(p, NNRT_DTYPE_F32, MatmulShape{{}, 64, 100, 50}, kFused[1], true, true));
  // b's rows 1 KB apart (f32 N = 256, bf16 N = 512), read row by row: a dense layer's backward-data
  // product, which the oneDNN backend may compute from a copy of b with longer rows. Their own
  // picker leaves p's draws, and so the names of the cases after them, as they were.
  Picker q(1024);
  const Layout rows = Layout::contiguous;
  for (MatmulShape s : {MatmulShape{{}, 16, 96, 256}, MatmulShape{{2}, 5, 70, 256}}) {
    out.push_back(matmul_case(q, NNRT_DTYPE_F32, s, kFused[0], false, false, &rows));
    out.push_back(matmul_case(q, NNRT_DTYPE_F32, s, kFused[1], true, false, &rows));
  }
  out.push_back(matmul_case(q, NNRT_DTYPE_BF16, MatmulShape{{}, 8, 64, 512}, kFused[0], false, false, &rows));
  // NaN and infinities through every fused activation.
  for (const Fused &f : kFused) {
    Case c = matmul_case(f.alg > NNRT_UNARY_SIGN ? added : p, NNRT_DTYPE_F32, MatmulShape{{}, 9, 4, 7}, f, true);
    c.input_fills[0] = Fill::Special(-1, 1);
    c.linear_magnitudes = true;  // finite results may come from cancelling +-3e9 or 1e30 terms
    c.name += "/nan-inf";
    out.push_back(c);
  }
  // Operands one element into their allocations (their own picker, as above): cuBLASLt's
  // algorithms may assume 256-byte aligned pointers unless told otherwise.
  Picker r(2048);
  for (auto [t, s, bias] : {std::tuple{NNRT_DTYPE_F32, MatmulShape{{}, 64, 784, 33}, true},
                            std::tuple{NNRT_DTYPE_F32, MatmulShape{{3}, 17, 64, 31}, false},
                            std::tuple{NNRT_DTYPE_BF16, MatmulShape{{}, 8, 64, 512}, true}}) {
    Case c = matmul_case(r, t, s, kFused[1], bias, false, &rows);
    c.offset_elements = 1;
    c.name += "/offset1";
    out.push_back(c);
  }
}

}  // namespace nnrt::conformance
