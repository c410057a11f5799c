// ATTENTION and ATTENTION_BACKWARD: the formulas computed here in double (scores, a causal mask
// aligned to the last positions, an additive mask, softmax, the weighted sum), for every float
// dtype; finite-difference gradients of q, k and v in f64; layouts and thread counts that must not
// change a bit; masked rows; descriptor checks.
#include <math.h>

#include <gtest/gtest.h>

#include "harness.h"

namespace nnrt::reftest {
namespace {

nnrt_op_attrs att_attrs(int32_t alg, double alpha) {
  nnrt_op_attrs a = attrs_with(alg);
  a.alpha = alpha;
  return a;
}

struct Dims {
  int64_t n, h, tq, tk, d, dv;
};

// o in double from row-major q, k, v and an optional row-major [N, H, Tq, Tk] mask.
std::vector<double> expected(const Dims &s, int32_t alg, double alpha, const std::vector<double> &q,
                             const std::vector<double> &k, const std::vector<double> &v, const std::vector<double> &mask) {
  std::vector<double> o;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t i = 0; i < s.tq; ++i) {
        const int64_t head = n * s.h + h;
        std::vector<double> p(static_cast<size_t>(s.tk), -INFINITY);
        double m = -INFINITY;
        for (int64_t j = 0; j < s.tk; ++j) {
          if (alg == NNRT_ATTENTION_CAUSAL && j > i + s.tk - s.tq) continue;
          double dot = 0;
          for (int64_t c = 0; c < s.d; ++c)
            dot += q[static_cast<size_t>((head * s.tq + i) * s.d + c)] * k[static_cast<size_t>((head * s.tk + j) * s.d + c)];
          p[static_cast<size_t>(j)] = alpha * dot + (mask.empty() ? 0 : mask[static_cast<size_t>((head * s.tq + i) * s.tk + j)]);
          m = fmax(m, p[static_cast<size_t>(j)]);
        }
        double sum = 0;
        for (double &x : p) sum += (x = exp(x - m));
        for (int64_t e = 0; e < s.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < s.tk; ++j) acc += p[static_cast<size_t>(j)] / sum * v[static_cast<size_t>((head * s.tk + j) * s.dv + e)];
          o.push_back(acc);
        }
      }
  return o;
}

Tensor forward(int32_t alg, double alpha, const Tensor &q, const Tensor &k, const Tensor &v, const Tensor *mask,
               int threads = 1) {
  Tensor o = Tensor::zeros(q.dtype, {q.dims[0], q.dims[1], q.dims[2], v.dims[3]});
  RunOptions opt;
  opt.threads = threads;
  nnrt_status st = mask ? run_op(NNRT_OP_ATTENTION, att_attrs(alg, alpha), {&q, &k, &v, mask}, {&o}, opt)
                        : run_op(NNRT_OP_ATTENTION, att_attrs(alg, alpha), {&q, &k, &v}, {&o}, opt);
  if (st != NNRT_OK) ADD_FAILURE() << last_error();
  return o;
}

struct Grads {
  Tensor dq, dk, dv;
};

Grads backward(int32_t alg, double alpha, const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &dout,
               const Tensor *mask, int threads = 1) {
  Grads g{Tensor::zeros(q.dtype, q.dims), Tensor::zeros(q.dtype, k.dims), Tensor::zeros(q.dtype, v.dims)};
  RunOptions opt;
  opt.threads = threads;
  nnrt_status st = mask ? run_op(NNRT_OP_ATTENTION_BACKWARD, att_attrs(alg, alpha), {&q, &k, &v, &dout, mask},
                                 {&g.dq, &g.dk, &g.dv}, opt)
                        : run_op(NNRT_OP_ATTENTION_BACKWARD, att_attrs(alg, alpha), {&q, &k, &v, &dout},
                                 {&g.dq, &g.dk, &g.dv}, opt);
  if (st != NNRT_OK) ADD_FAILURE() << last_error();
  return g;
}

TEST(Attention, MatchesFormula) {
  for (Dims s : {Dims{1, 1, 1, 1, 1, 1}, Dims{2, 3, 5, 5, 4, 3}, Dims{1, 2, 3, 7, 8, 8}})
    for (int32_t alg : {NNRT_ATTENTION_FULL, NNRT_ATTENTION_CAUSAL})
      for (bool masked : {false, true})
        for (int32_t dtype : kFloatDtypes) {
          Tensor q = Tensor::random(dtype, {s.n, s.h, s.tq, s.d}, 1, -2, 2);
          Tensor k = Tensor::random(dtype, {s.n, s.h, s.tk, s.d}, 2, -2, 2);
          Tensor v = Tensor::random(dtype, {s.n, s.h, s.tk, s.dv}, 3);
          Tensor mask = Tensor::random(dtype, {s.n, s.h, s.tq, s.tk}, 4, -3, 0);
          Tensor o = forward(alg, 0.4, q, k, v, masked ? &mask : nullptr);
          std::vector<double> want =
              expected(s, alg, 0.4, q.values(), k.values(), v.values(), masked ? mask.values() : std::vector<double>{});
          const double tol = dtype == NNRT_DTYPE_F64 ? 1e-12 : dtype == NNRT_DTYPE_F32 ? 1e-5 : 2e-2;
          EXPECT_LT(max_relative_error(o.values(), want), tol) << dtype_label(dtype) << " alg " << alg << " mask " << masked;
        }
}

TEST(Attention, CausalRowsSeeTheKeysUpToTheirPosition) {
  // Keys equal to their index, q of ones, a huge scale: each row picks its last visible key.
  const int64_t tq = 3, tk = 5;
  std::vector<double> kv;
  for (int64_t j = 0; j < tk; ++j) kv.push_back(static_cast<double>(j));
  Tensor k = Tensor::of(NNRT_DTYPE_F64, {1, 1, tk, 1}, kv), v = k;
  Tensor q = Tensor::of(NNRT_DTYPE_F64, {1, 1, tq, 1}, {1, 1, 1});
  Tensor o = forward(NNRT_ATTENTION_CAUSAL, 100.0, q, k, v, nullptr);
  // The queries are positions 2, 3 and 4 of 5.
  EXPECT_NEAR(o.at(0), 2, 1e-9);
  EXPECT_NEAR(o.at(1), 3, 1e-9);
  EXPECT_NEAR(o.at(2), 4, 1e-9);
}

TEST(Attention, RowsWithNothingToSeeAreNaN) {
  // A mask of minus infinity over a whole row, and causal rows before the first key.
  Tensor q = Tensor::random(NNRT_DTYPE_F32, {1, 1, 2, 4}, 1), k = Tensor::random(NNRT_DTYPE_F32, {1, 1, 3, 4}, 2);
  Tensor v = Tensor::random(NNRT_DTYPE_F32, {1, 1, 3, 2}, 3);
  Tensor mask = Tensor::of(NNRT_DTYPE_F32, {1, 1, 2, 3}, {0, -INFINITY, 0, -INFINITY, -INFINITY, -INFINITY});
  Tensor o = forward(NNRT_ATTENTION_FULL, 1.0, q, k, v, &mask);
  EXPECT_FALSE(isnan(o.at(0)));
  EXPECT_TRUE(isnan(o.at(2)) && isnan(o.at(3)));
  Tensor q5 = Tensor::random(NNRT_DTYPE_F32, {1, 1, 5, 4}, 4);
  Tensor o5 = forward(NNRT_ATTENTION_CAUSAL, 1.0, q5, k, v, nullptr);  // rows 0 and 1 come before key 0
  EXPECT_TRUE(isnan(o5.at(0)) && isnan(o5.at(3)));
  EXPECT_FALSE(isnan(o5.at(4)));
}

TEST(Attention, GradientsMatchFiniteDifferences) {
  const Dims s{2, 2, 3, 4, 3, 2};
  for (int32_t alg : {NNRT_ATTENTION_FULL, NNRT_ATTENTION_CAUSAL})
    for (bool masked : {false, true}) {
      Tensor q = Tensor::random(NNRT_DTYPE_F64, {s.n, s.h, s.tq, s.d}, 1);
      Tensor k = Tensor::random(NNRT_DTYPE_F64, {s.n, s.h, s.tk, s.d}, 2);
      Tensor v = Tensor::random(NNRT_DTYPE_F64, {s.n, s.h, s.tk, s.dv}, 3);
      Tensor mask = Tensor::random(NNRT_DTYPE_F64, {s.n, s.h, s.tq, s.tk}, 4, -2, 0);
      Tensor dout = Tensor::random(NNRT_DTYPE_F64, {s.n, s.h, s.tq, s.dv}, 5);
      const Tensor *m = masked ? &mask : nullptr;
      Grads g = backward(alg, 0.7, q, k, v, dout, m);
      auto output = [&](const Tensor &qq, const Tensor &kk, const Tensor &vv) { return forward(alg, 0.7, qq, kk, vv, m).values(); };
      auto with = [](const Tensor &t, const std::vector<double> &x) { return Tensor::of(t.dtype, t.dims, x); };
      std::vector<double> nq = numeric_gradient([&](const std::vector<double> &x) { return output(with(q, x), k, v); },
                                                q.values(), dout.values());
      std::vector<double> nk = numeric_gradient([&](const std::vector<double> &x) { return output(q, with(k, x), v); },
                                                k.values(), dout.values());
      std::vector<double> nv = numeric_gradient([&](const std::vector<double> &x) { return output(q, k, with(v, x)); },
                                                v.values(), dout.values());
      EXPECT_LT(max_relative_error(g.dq.values(), nq), 1e-6) << "alg " << alg << " mask " << masked;
      EXPECT_LT(max_relative_error(g.dk.values(), nk), 1e-6) << "alg " << alg << " mask " << masked;
      EXPECT_LT(max_relative_error(g.dv.values(), nv), 1e-6) << "alg " << alg << " mask " << masked;
    }
}

TEST(Attention, LayoutsAndThreadsDoNotChangeABit) {
  const Dims s{2, 3, 9, 9, 5, 5};
  Tensor q = Tensor::random(NNRT_DTYPE_F32, {s.n, s.h, s.tq, s.d}, 1), k = Tensor::random(NNRT_DTYPE_F32, {s.n, s.h, s.tk, s.d}, 2);
  Tensor v = Tensor::random(NNRT_DTYPE_F32, {s.n, s.h, s.tk, s.dv}, 3), dout = Tensor::random(NNRT_DTYPE_F32, {s.n, s.h, s.tq, s.dv}, 4);
  Tensor shared = Tensor::random(NNRT_DTYPE_F32, {1, 1, s.tq, s.tk}, 5, -2, 0).broadcast_to({s.n, s.h, s.tq, s.tk});
  const std::vector<unsigned char> o1 = forward(NNRT_ATTENTION_CAUSAL, 0.5, q, k, v, &shared).bytes();
  // Heads as views of [N, T, H, D] (what the multi_head_attention layer passes), spread strides,
  // four threads.
  Tensor qt = q.relayout({0, 2, 1, 3}), kt = k.relayout({0, 2, 1, 3}, 2), vt = v.relayout({0, 2, 1, 3});
  EXPECT_EQ(forward(NNRT_ATTENTION_CAUSAL, 0.5, qt, kt, vt, &shared, 4).bytes(), o1);
  Grads g1 = backward(NNRT_ATTENTION_CAUSAL, 0.5, q, k, v, dout, &shared);
  Grads g4 = backward(NNRT_ATTENTION_CAUSAL, 0.5, qt, kt, vt, dout.relayout({3, 2, 1, 0}), &shared, 4);
  EXPECT_EQ(g4.dq.bytes(), g1.dq.bytes());
  EXPECT_EQ(g4.dk.bytes(), g1.dk.bytes());
  EXPECT_EQ(g4.dv.bytes(), g1.dv.bytes());
}

TEST(Attention, MalformedDescriptorsAreRefused) {
  Tensor q = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 3, 4}), k = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 5, 4});
  Tensor v = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 5, 6}), o = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 3, 6});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(NNRT_ATTENTION_FULL, 1), {&q, &k, &v}, {&o})), NNRT_OK);
  Tensor k3 = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 5, 3});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(NNRT_ATTENTION_FULL, 1), {&q, &k3, &v}, {&o})), NNRT_ERR_SHAPE);
  EXPECT_NE(last_error().find("input k"), std::string::npos) << last_error();
  Tensor vh = Tensor::zeros(NNRT_DTYPE_F16, {1, 2, 5, 6});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(NNRT_ATTENTION_FULL, 1), {&q, &k, &vh}, {&o})), NNRT_ERR_DTYPE);
  Tensor wrong_mask = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 3, 4});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(NNRT_ATTENTION_FULL, 1), {&q, &k, &v, &wrong_mask}, {&o})),
            NNRT_ERR_SHAPE);
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(3, 1), {&q, &k, &v}, {&o})), NNRT_ERR_UNSUPPORTED);
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(NNRT_ATTENTION_FULL, NAN), {&q, &k, &v}, {&o})),
            NNRT_ERR_INVALID_ARGUMENT);
  Tensor i32 = Tensor::zeros(NNRT_DTYPE_I32, {1, 2, 3, 4});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION, att_attrs(NNRT_ATTENTION_FULL, 1), {&i32, &k, &v}, {&o})), NNRT_ERR_DTYPE);
  Tensor dq = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 3, 4}), dk = Tensor::zeros(NNRT_DTYPE_F32, {1, 2, 5, 4});
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION_BACKWARD, att_attrs(NNRT_ATTENTION_CAUSAL, 1), {&q, &k, &v, &o},
                                {&dq, &dk, &v})),
            NNRT_OK);
  EXPECT_EQ(create_op(make_desc(NNRT_OP_ATTENTION_BACKWARD, att_attrs(NNRT_ATTENTION_CAUSAL, 1), {&q, &k, &v, &o},
                                {&dq, &dq, &v})),
            NNRT_ERR_SHAPE);
}

}  // namespace
}  // namespace nnrt::reftest
