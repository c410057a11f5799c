// Cases for REDUCE, ARGREDUCE, SOFTMAX and SOFTMAX_BACKWARD.
#include <cmath>

#include "cases.h"

namespace nnrt::conformance {
namespace {

Dims random_dims(Picker &p, int lo_rank, int hi_rank) {
  Dims d;
  int rank = static_cast<int>(p.between(lo_rank, hi_rank));
  for (int i = 0; i < rank; ++i) d.push_back(p.size());
  return d;
}

std::string mask_name(uint32_t mask, int rank) {
  std::string s = "axes";
  for (int i = 0; i < rank; ++i)
    if ((mask >> i) & 1u) s += std::to_string(i);
  return s;
}

void add_reduce(Picker &p, std::vector<Case> &out) {
  struct Alg {
    int32_t alg;
    const char *name;
  };
  const std::vector<Alg> algs{{NNRT_REDUCE_SUM, "sum"},
                              {NNRT_REDUCE_MEAN, "mean"},
                              {NNRT_REDUCE_MAX, "max"},
                              {NNRT_REDUCE_MIN, "min"},
                              {NNRT_REDUCE_SUM_SQUARES, "sum_squares"}};
  std::vector<int32_t> dtypes = float_dtypes();
  dtypes.push_back(NNRT_DTYPE_I32);
  dtypes.push_back(NNRT_DTYPE_I64);
  for (const Alg &alg : algs)
    for (int32_t t : dtypes) {
      if (!is_float_dtype(t) && alg.alg == NNRT_REDUCE_SUM_SQUARES) continue;
      for (int rep = 0; rep < 3; ++rep) {
        Dims d = random_dims(p, 1, 5);
        const int rank = static_cast<int>(d.size());
        uint32_t all = (1u << rank) - 1;
        uint32_t mask = rep == 0 ? all : static_cast<uint32_t>(p.between(1, all));
        Dims yd = d;
        int64_t reduced = 1;
        for (int i = 0; i < rank; ++i)
          if ((mask >> i) & 1u) {
            reduced *= d[i];
            yd[i] = 1;
          }
        nnrt_op_attrs a = no_attrs();
        a.alg = alg.alg;
        a.axes_mask = mask;
        Layout lx = p.chance(0.3) ? Layout::transposed : Layout::contiguous;
        Layout ly = p.chance(0.2) ? Layout::padded : Layout::contiguous;
        // Sums grow like the square root of their length (random signs); sums of squares like it.
        double scale = alg.alg == NNRT_REDUCE_SUM || alg.alg == NNRT_REDUCE_SUM_SQUARES ? std::sqrt(double(reduced)) : 1;
        Fill f = is_float_dtype(t) ? Fill::U(-2, 2) : Fill::Ints(-1000, 1000);
        std::string group = std::string("reduce/") + alg.name + "/" + dtype_name(t);
        out.push_back(CaseBuilder(NNRT_OP_REDUCE,
                                  group + "/" + dims_name(d) + "/" + mask_name(mask, rank) + "/" + layout_name(lx),
                                  group)
                          .in(make_tensor(t, d, lx), f)
                          .out(make_tensor(t, yd, ly), scale)
                          .attrs(a)
                          .done());
      }
    }
  // NaN and infinities: they show in sums (overflow checks rely on it), max and min propagate NaN.
  for (const Alg &alg : algs)
    for (uint32_t mask : {0b10u, 0b01u}) {
      Dims d{5, 9}, yd{mask == 0b10u ? 5 : 1, mask == 0b10u ? 1 : 9};
      nnrt_op_attrs a = no_attrs();
      a.alg = alg.alg;
      a.axes_mask = mask;
      std::string group = std::string("reduce/") + alg.name + "/f32";
      const bool selects = alg.alg == NNRT_REDUCE_MAX || alg.alg == NNRT_REDUCE_MIN;
      const double reduced = mask == 0b10u ? 9 : 5;
      Case c = CaseBuilder(NNRT_OP_REDUCE, group + "/5x9/" + mask_name(mask, 2) + "/nan-inf", group)
                   .in(make_tensor(NNRT_DTYPE_F32, d), Fill::Special(-1, 1))
                   .out(make_tensor(NNRT_DTYPE_F32, yd), selects ? 1 : std::sqrt(reduced))
                   .attrs(a)
                   .done();
      // Terms of +-3e9 cancel in an order-dependent way: the tolerance of a sum (mean, sum of
      // squares) grows with the magnitude of its own terms, and of that sum only, so that sums of
      // small terms beside it stay tight. Max and min select an element: exact up to rounding.
      c.linear_magnitudes = !selects;
      out.push_back(c);
    }
}

void add_argreduce(Picker &p, std::vector<Case> &out) {
  const std::vector<int32_t> dtypes{NNRT_DTYPE_F32, NNRT_DTYPE_BF16, NNRT_DTYPE_F16, NNRT_DTYPE_F64,
                                    NNRT_DTYPE_I32, NNRT_DTYPE_I64,  NNRT_DTYPE_U8};
  for (int32_t alg : {NNRT_ARG_MAX, NNRT_ARG_MIN})
    for (int32_t t : dtypes)
      for (bool special : {false, true}) {
        if (special && !is_float_dtype(t)) continue;
        Dims d = random_dims(p, 1, 4);
        nnrt_op_attrs a = no_attrs();
        a.alg = alg;
        a.axis = static_cast<int32_t>(p.between(0, static_cast<int64_t>(d.size()) - 1));
        Dims yd = d;
        yd[static_cast<size_t>(a.axis)] = 1;
        // Ties (the first index wins) and, with NaN, "NaN counts as the largest value".
        Fill f = special ? Fill::Special(-2, 2) : (t == NNRT_DTYPE_U8 ? Fill::Ints(0, 4) : Fill::Ties(-3, 3));
        std::string group = std::string("argreduce/") + (alg == NNRT_ARG_MAX ? "max/" : "min/") + dtype_name(t);
        out.push_back(CaseBuilder(NNRT_OP_ARGREDUCE,
                                  group + "/" + dims_name(d) + "/axis" + std::to_string(a.axis) +
                                      (special ? "/nan-inf" : "/ties"),
                                  group)
                          .in(make_tensor(t, d, p.chance(0.3) ? Layout::transposed : Layout::contiguous), f)
                          .out(make_tensor(NNRT_DTYPE_I64, yd))
                          .attrs(a)
                          .exact()
                          .done());
      }
}

void add_softmax(Picker &p, std::vector<Case> &out) {
  for (int32_t alg : {NNRT_SOFTMAX, NNRT_LOG_SOFTMAX})
    for (int32_t t : float_dtypes())
      for (int rep = 0; rep < 3; ++rep) {
        Dims d = random_dims(p, 1, 4);
        nnrt_op_attrs a = no_attrs();
        a.alg = alg;
        a.axis = rep == 0 ? static_cast<int32_t>(d.size()) - 1
                          : static_cast<int32_t>(p.between(0, static_cast<int64_t>(d.size()) - 1));
        const double n = static_cast<double>(d[static_cast<size_t>(a.axis)]);
        const char *algname = alg == NNRT_SOFTMAX ? "softmax" : "log_softmax";
        Layout lx = p.chance(0.3) ? Layout::transposed : Layout::contiguous;
        std::string suffix = "/" + dims_name(d) + "/axis" + std::to_string(a.axis) + "/" + layout_name(lx);
        std::string group = std::string(algname) + "/" + dtype_name(t);
        out.push_back(CaseBuilder(NNRT_OP_SOFTMAX, group + suffix, group)
                          .in(make_tensor(t, d, lx), Fill::U(-4, 4))
                          .out(make_tensor(t, d), alg == NNRT_SOFTMAX ? 0.1 : std::log(n) + 4)
                          .attrs(a)
                          .done());
        Fill y = alg == NNRT_SOFTMAX ? Fill::U(0.01, 1) : Fill::U(-4, -0.01);
        std::string bgroup = std::string(algname) + "_backward/" + dtype_name(t);
        out.push_back(CaseBuilder(NNRT_OP_SOFTMAX_BACKWARD, bgroup + suffix, bgroup)
                          .in(make_tensor(t, d, lx))
                          .in(make_tensor(t, d, p.chance(0.3) ? Layout::padded : Layout::contiguous), y)
                          .out(make_tensor(t, d), std::sqrt(n))
                          .attrs(a)
                          .done());
      }
  for (int32_t alg : {NNRT_SOFTMAX, NNRT_LOG_SOFTMAX}) {
    nnrt_op_attrs a = no_attrs();
    a.alg = alg;
    a.axis = 1;
    std::string group = std::string(alg == NNRT_SOFTMAX ? "softmax" : "log_softmax") + "/f32";
    out.push_back(CaseBuilder(NNRT_OP_SOFTMAX, group + "/7x9/axis1/nan-inf", group)
                      .in(make_tensor(NNRT_DTYPE_F32, {7, 9}), Fill::Special(-4, 4))
                      .out(make_tensor(NNRT_DTYPE_F32, {7, 9}), 5)
                      .attrs(a)
                      .done());
    std::string bgroup = std::string(alg == NNRT_SOFTMAX ? "softmax" : "log_softmax") + "_backward/f32";
    // dy without large finite values: the line's sum of dy is exact in its sign and zeros (a
    // sum cancelling +-3e9 terms rounds to 0.24 in one order and to 0 in another, and
    // exp(+inf) * 0 is NaN where exp(+inf) * 0.24 is inf).
    out.push_back(CaseBuilder(NNRT_OP_SOFTMAX_BACKWARD, bgroup + "/7x9/axis1/nan-inf", bgroup)
                      .in(make_tensor(NNRT_DTYPE_F32, {7, 9}), Fill::NonFinite(-1, 1))
                      .in(make_tensor(NNRT_DTYPE_F32, {7, 9}), alg == NNRT_SOFTMAX ? Fill::Special(0, 1) : Fill::Special(-4, 0))
                      .out(make_tensor(NNRT_DTYPE_F32, {7, 9}), 3)
                      .attrs(a)
                      .done());
  }
  nnrt_op_attrs a = no_attrs();
  a.alg = NNRT_LOG_SOFTMAX;
  a.axis = 1;
  out.push_back(CaseBuilder(NNRT_OP_SOFTMAX, "log_softmax/f32/concurrent/64x10", "log_softmax/f32")
                    .in(make_tensor(NNRT_DTYPE_F32, {64, 10}), Fill::U(-4, 4))
                    .out(make_tensor(NNRT_DTYPE_F32, {64, 10}), 5)
                    .attrs(a)
                    .concurrent()
                    .done());
}

}  // namespace

void add_reduce_softmax_cases(Picker &p, std::vector<Case> &out) {
  add_reduce(p, out);
  add_argreduce(p, out);
  add_softmax(p, out);
}

}  // namespace nnrt::conformance
