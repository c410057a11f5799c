// Cases for ATTENTION and ATTENTION_BACKWARD: both algs (full, causal), every float dtype, random
// batch, heads, query and key lengths (fewer queries than keys: a generation step), head sizes,
// layouts (contiguous, padded, and the head view of a [N, T, H, D] product that the
// multi_head_attention layer passes), masks absent, shared by every head ([Tq, Tk]) or per example
// over the keys ([N, 1, 1, Tk]); the sizes of a transformer (d 64, sequences past a kernel's block of
// rows); NaN and infinities.
#include <cmath>

#include "cases.h"

namespace nnrt::conformance {
namespace {

enum class Heads { contiguous, padded, token_major };
const char *heads_name(Heads l) {
  return l == Heads::contiguous ? "contiguous" : l == Heads::padded ? "padded" : "token_major";
}

// [N, H, T, D] in the given layout; token_major: a [N, H, T, D] view of a contiguous [N, T, H, D].
nnrt_tensor_desc heads_tensor(int32_t t, int64_t n, int64_t h, int64_t len, int64_t d, Heads l) {
  if (l != Heads::token_major) return make_tensor(t, {n, h, len, d}, l == Heads::padded ? Layout::padded : Layout::contiguous);
  nnrt_tensor_desc x = make_tensor(t, {n, len, h, d});
  std::swap(x.dims[1], x.dims[2]);
  std::swap(x.strides[1], x.strides[2]);
  return x;
}

enum class Mask { none, shared, keys };
const char *mask_name(Mask m) { return m == Mask::none ? "nomask" : m == Mask::shared ? "mask_TqTk" : "mask_keys"; }

struct Shapes {
  int64_t n, h, tq, tk, d, dv;
  Heads layout;
  Mask mask;
  double alpha;
};

std::string case_name(const char *kind, int32_t alg, int32_t t, const Shapes &s) {
  return std::string(kind) + "/" + (alg == NNRT_ATTENTION_CAUSAL ? "causal" : "full") + "/" + dtype_name(t) + "/" +
         dims_name({s.n, s.h, s.tq, s.tk, s.d, s.dv}) + "/" + heads_name(s.layout) + "/" + mask_name(s.mask);
}

nnrt_op_attrs attention_attrs(int32_t alg, double alpha) {
  nnrt_op_attrs a = no_attrs();
  a.alg = alg;
  a.alpha = alpha;
  return a;
}

// The mask as the kind takes it: [N, H, Tq, Tk] with stride 0 where it repeats.
nnrt_tensor_desc mask_tensor(int32_t t, const Shapes &s) {
  // broadcast_mask bit d: dim d repeats.
  const uint32_t repeat = s.mask == Mask::shared ? 0b0011u : 0b0110u;
  return make_tensor(t, {s.n, s.h, s.tq, s.tk}, Layout::contiguous, repeat);
}

Case forward_case(int32_t alg, int32_t t, const Shapes &s, Fill fill, const std::string &suffix = "") {
  const std::string group = std::string("attention/") + (alg == NNRT_ATTENTION_CAUSAL ? "causal/" : "full/") + dtype_name(t);
  CaseBuilder b(NNRT_OP_ATTENTION, case_name("attention", alg, t, s) + suffix, group);
  b.in(heads_tensor(t, s.n, s.h, s.tq, s.d, s.layout), fill)
      .in(heads_tensor(t, s.n, s.h, s.tk, s.d, s.layout), fill)
      .in(heads_tensor(t, s.n, s.h, s.tk, s.dv, s.layout), fill);
  if (s.mask != Mask::none) b.in(mask_tensor(t, s), Fill::U(-3, 0));
  b.out(heads_tensor(t, s.n, s.h, s.tq, s.dv, s.layout), 2).attrs(attention_attrs(alg, s.alpha));
  return b.done();
}

Case backward_case(int32_t alg, int32_t t, const Shapes &s, Fill fill, const std::string &suffix = "") {
  const std::string group =
      std::string("attention_backward/") + (alg == NNRT_ATTENTION_CAUSAL ? "causal/" : "full/") + dtype_name(t);
  // dq sums over the keys, dk and dv over the queries.
  const double over_keys = std::sqrt(double(s.tk * s.dv)), over_queries = std::sqrt(double(s.tq * s.dv));
  CaseBuilder b(NNRT_OP_ATTENTION_BACKWARD, case_name("attention_backward", alg, t, s) + suffix, group);
  b.in(heads_tensor(t, s.n, s.h, s.tq, s.d, s.layout), fill)
      .in(heads_tensor(t, s.n, s.h, s.tk, s.d, s.layout), fill)
      .in(heads_tensor(t, s.n, s.h, s.tk, s.dv, s.layout), fill)
      .in(heads_tensor(t, s.n, s.h, s.tq, s.dv, Heads::contiguous), fill);
  if (s.mask != Mask::none) b.in(mask_tensor(t, s), Fill::U(-3, 0));
  b.out(heads_tensor(t, s.n, s.h, s.tq, s.d, s.layout), 4 * over_keys)
      .out(heads_tensor(t, s.n, s.h, s.tk, s.d, s.layout), 4 * over_queries)
      .out(heads_tensor(t, s.n, s.h, s.tk, s.dv, s.layout), 4 * over_queries)
      .attrs(attention_attrs(alg, s.alpha));
  return b.done();
}

Shapes random_shapes(Picker &p, int32_t alg) {
  Shapes s;
  s.n = p.small_size();
  s.h = p.between(1, 4);
  s.tk = p.size();
  // Causal attention mostly over a whole sequence; sometimes the last few positions of it.
  s.tq = alg == NNRT_ATTENTION_CAUSAL && p.chance(0.7) ? s.tk : p.between(1, s.tk);
  s.d = p.size();
  s.dv = p.chance(0.7) ? s.d : p.size();
  s.layout = p.one_of(std::vector<Heads>{Heads::contiguous, Heads::padded, Heads::token_major});
  s.mask = p.one_of(std::vector<Mask>{Mask::none, Mask::shared, Mask::keys});
  s.alpha = p.chance(0.6) ? 1 / std::sqrt(double(s.d)) : p.one_of(std::vector<double>{0.125, 1.7});
  return s;
}

}  // namespace

void add_attention_cases(Picker &p, std::vector<Case> &out) {
  for (int32_t t : float_dtypes())
    for (int32_t alg : {NNRT_ATTENTION_FULL, NNRT_ATTENTION_CAUSAL})
      for (int rep = 0; rep < (t == NNRT_DTYPE_F32 ? 6 : 2); ++rep) {
        Shapes s = random_shapes(p, alg);
        out.push_back(forward_case(alg, t, s, Fill::U(-1, 1)));
        out.push_back(backward_case(alg, t, s, Fill::U(-1, 1)));
      }
  // A transformer's heads: d 64, sequences longer than a block of query rows, the layer's layout;
  // and one generation step (1 query against 77 keys).
  for (int32_t t : {NNRT_DTYPE_F32, NNRT_DTYPE_BF16})
    for (int32_t alg : {NNRT_ATTENTION_FULL, NNRT_ATTENTION_CAUSAL}) {
      Shapes s{2, 3, 77, 77, 64, 64, Heads::token_major, Mask::none, 0.125};
      out.push_back(forward_case(alg, t, s, Fill::U(-1, 1)));
      out.push_back(backward_case(alg, t, s, Fill::U(-1, 1)));
      Shapes keys{2, 2, 77, 77, 64, 64, Heads::token_major, Mask::keys, 0.125};
      out.push_back(forward_case(alg, t, keys, Fill::U(-1, 1)));
      out.push_back(backward_case(alg, t, keys, Fill::U(-1, 1)));
    }
  Shapes step{1, 4, 1, 77, 64, 64, Heads::contiguous, Mask::none, 0.125};
  out.push_back(forward_case(NNRT_ATTENTION_CAUSAL, NNRT_DTYPE_F32, step, Fill::U(-1, 1)));
  Shapes tail{1, 2, 5, 300, 32, 32, Heads::token_major, Mask::none, 0.2};
  out.push_back(forward_case(NNRT_ATTENTION_CAUSAL, NNRT_DTYPE_F32, tail, Fill::U(-1, 1)));
  out.push_back(backward_case(NNRT_ATTENTION_CAUSAL, NNRT_DTYPE_F32, tail, Fill::U(-1, 1)));
  // NaN and infinities: the rows and columns they reach become NaN, the others stay exact.
  Shapes special{2, 2, 9, 9, 8, 8, Heads::contiguous, Mask::none, 0.35};
  out.push_back(forward_case(NNRT_ATTENTION_CAUSAL, NNRT_DTYPE_F32, special, Fill::NonFinite(-1, 1), "/nonfinite"));
  out.push_back(backward_case(NNRT_ATTENTION_CAUSAL, NNRT_DTYPE_F32, special, Fill::NonFinite(-1, 1), "/nonfinite"));
  // Many heads from several threads at once.
  Shapes many{4, 4, 33, 33, 16, 16, Heads::token_major, Mask::shared, 0.25};
  Case c = forward_case(NNRT_ATTENTION_FULL, NNRT_DTYPE_F32, many, Fill::U(-1, 1), "/concurrent");
  c.concurrent = true;
  out.push_back(c);
  c = backward_case(NNRT_ATTENTION_CAUSAL, NNRT_DTYPE_F32, many, Fill::U(-1, 1), "/concurrent");
  c.concurrent = true;
  out.push_back(c);
}

}  // namespace nnrt::conformance
