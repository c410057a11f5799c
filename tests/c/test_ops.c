/* nnrt_op: exact results for array math by name, and every kind of bad input. */
#include <stdint.h>
#include <stdlib.h>

#include "c_test.h"

static nnrt_context *ctx;

static nnrt_array *f32(int32_t ndim, const int64_t *shape, const float *data) {
  nnrt_array *a = NULL;
  size_t n = 1;
  int32_t i;
  for (i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  if (nnrt_array_from_host(ctx, NNRT_DTYPE_F32, ndim, shape, data, n * sizeof(float), &a) != NNRT_OK) {
    fprintf(stderr, "from_host failed: %s\n", nnrt_last_error());
    exit(2);
  }
  return a;
}

static nnrt_array *i32(int32_t ndim, const int64_t *shape, const int32_t *data) {
  nnrt_array *a = NULL;
  size_t n = 1;
  int32_t i;
  for (i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  if (nnrt_array_from_host(ctx, NNRT_DTYPE_I32, ndim, shape, data, n * sizeof(int32_t), &a) != NNRT_OK) exit(2);
  return a;
}

/* Runs a one-output op; returns NULL (and reports) on failure. */
static nnrt_array *run1(const char *name, nnrt_array *x, nnrt_array *y, const char *attrs) {
  const nnrt_array *in[2];
  nnrt_array *out = NULL;
  int32_t n = 0;
  nnrt_status s;
  if (x) in[n++] = x;
  if (y) in[n++] = y;
  s = nnrt_op(ctx, name, in, n, attrs, &out, 1);
  if (!C_TEST_RECORD(s == NNRT_OK)) {
    fprintf(stderr, "op %s failed: %s: %s\n", name, nnrt_status_name(s), nnrt_last_error());
    return NULL;
  }
  return out;
}

/* Checks an f32 result's shape and values exactly, then releases it; the checks count toward the
** caller's test case. */
static void expect_f32(nnrt_array *a, int32_t ndim, const int64_t *shape, const float *want, double tol, int line,
                       const char *caller) {
  float got[64];
  int64_t dims[NNRT_MAX_DIMS];
  int32_t nd, i;
  nnrt_dtype dt;
  size_t n = 1, nb;
  int same_shape = 1;
  if (!a) return;
  nnrt_array_info(a, &dt, &nd, dims);
  if (!c_test_record(caller, dt == NNRT_DTYPE_F32 && nd == ndim)) {
    fprintf(stderr, "line %d: dtype %d rank %d, expected f32 rank %d\n", line, (int)dt, nd, ndim);
    nnrt_array_release(a);
    return;
  }
  for (i = 0; i < ndim; ++i) {
    same_shape = c_test_record(caller, dims[i] == shape[i]) && same_shape;
    n *= (size_t)shape[i];
  }
  nnrt_array_nbytes(a, &nb);
  if (!c_test_record(caller, nb == n * sizeof(float)) || !same_shape) {
    fprintf(stderr, "line %d: the shape differs (%zu bytes)\n", line, nb);
    nnrt_array_release(a);
    return;
  }
  nnrt_array_to_host(a, got, nb);
  for (i = 0; i < (int32_t)n; ++i) {
    if (!c_test_record(caller, fabs(got[i] - want[i]) <= tol * fabs(want[i]) || (want[i] != want[i] && got[i] != got[i]))) {
      fprintf(stderr, "line %d: element %d is %.9g, expected %.9g\n", line, i, got[i], want[i]);
    }
  }
  nnrt_array_release(a);
}
/* Exact, or to a relative tolerance. */
#define EXPECT_F32(a, nd, shape, want) expect_f32((a), (nd), (shape), (want), 0, __LINE__, __func__)
#define EXPECT_F32_NEAR(a, nd, shape, want) expect_f32((a), (nd), (shape), (want), 1e-6, __LINE__, __func__)

static void test_binary(void) {
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s21[2] = {2, 1};
  float a_[6] = {1, 2, 3, 4, 5, 6}, b_[3] = {10, 20, 30}, c_[2] = {100, 200}, two = 2;
  nnrt_array *a = f32(2, s23, a_), *b = f32(1, s3, b_), *c = f32(2, s21, c_), *k = f32(0, NULL, &two);
  {
    float w[6] = {11, 22, 33, 14, 25, 36};
    EXPECT_F32(run1("add", a, b, NULL), 2, s23, w);
  }
  {
    float w[6] = {101, 102, 103, 204, 205, 206};
    EXPECT_F32(run1("add", c, a, NULL), 2, s23, w);
  }
  {
    float w[6] = {-9, -18, -27, -6, -15, -24};
    EXPECT_F32(run1("sub", a, b, NULL), 2, s23, w);
  }
  {
    float w[6] = {2, 4, 6, 8, 10, 12};
    EXPECT_F32(run1("mul", k, a, "{}"), 2, s23, w);
  }
  {
    float w[6] = {0.5f, 1, 1.5f, 2, 2.5f, 3};
    EXPECT_F32(run1("div", a, k, NULL), 2, s23, w);
  }
  {
    float w[6] = {2, 2, 3, 4, 5, 6};
    EXPECT_F32(run1("maximum", a, k, NULL), 2, s23, w);
  }
  {
    float w[6] = {1, 2, 2, 2, 2, 2};
    EXPECT_F32(run1("minimum", a, k, NULL), 2, s23, w);
  }
  {
    /* [2,1] with [3]: both broadcast, to [2,3] */
    float w[6] = {110, 120, 130, 210, 220, 230};
    EXPECT_F32(run1("add", c, b, NULL), 2, s23, w);
  }
  {
    /* NaN propagates through maximum and minimum */
    float n_[2] = {NAN, 1}, one_[2] = {1, NAN};
    int64_t s2[1] = {2};
    nnrt_array *n = f32(1, s2, n_), *o = f32(1, s2, one_);
    float w[2] = {NAN, NAN};
    EXPECT_F32(run1("maximum", n, o, NULL), 1, s2, w);
    EXPECT_F32(run1("minimum", n, o, NULL), 1, s2, w);
    nnrt_array_release(n);
    nnrt_array_release(o);
  }
  {
    /* integer division truncates toward zero */
    int64_t s4[1] = {4};
    int32_t x_[4] = {7, -7, 7, 9}, y_[4] = {2, 2, -2, 3}, got[4];
    nnrt_array *x = i32(1, s4, x_), *y = i32(1, s4, y_), *q = run1("div", x, y, NULL);
    if (q) {
      CHECK_OK(nnrt_array_to_host(q, got, sizeof got));
      CHECK(got[0] == 3 && got[1] == -3 && got[2] == -3 && got[3] == 3);
      nnrt_array_release(q);
    }
    q = run1("add", x, y, NULL);
    if (q) {
      CHECK_OK(nnrt_array_to_host(q, got, sizeof got));
      CHECK(got[0] == 9 && got[1] == -5 && got[2] == 5 && got[3] == 12);
      nnrt_array_release(q);
    }
    nnrt_array_release(x);
    nnrt_array_release(y);
  }
  {
    /* size-0 broadcast: [0,3] + [3] is [0,3] */
    int64_t s03[2] = {0, 3};
    nnrt_array *e = NULL, *r;
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, s03, &e));
    r = run1("add", e, b, NULL);
    EXPECT_F32(r, 2, s03, b_);
    nnrt_array_release(e);
  }
  nnrt_array_release(a);
  nnrt_array_release(b);
  nnrt_array_release(c);
  nnrt_array_release(k);
}

static void test_unary(void) {
  int64_t s4[1] = {4};
  float x_[4] = {-1, 0, 1, 4};
  nnrt_array *x = f32(1, s4, x_), *r;
  float got[4];
  {
    float w[4] = {1, 0, -1, -4};
    EXPECT_F32(run1("neg", x, NULL, NULL), 1, s4, w);
  }
  {
    float w[4] = {1, 0, 1, 4};
    EXPECT_F32(run1("abs", x, NULL, NULL), 1, s4, w);
  }
  {
    float w[4] = {0, 0, 1, 4};
    EXPECT_F32(run1("relu", x, NULL, NULL), 1, s4, w);
  }
  {
    float w[4] = {-0.25f, 0, 1, 4};
    EXPECT_F32(run1("leaky_relu", x, NULL, "{\"alpha\": 0.25}"), 1, s4, w);
  }
  r = run1("sqrt", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK(got[0] != got[0] && got[1] == 0 && got[2] == 1 && got[3] == 2);
    nnrt_array_release(r);
  }
  r = run1("exp", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], 0.36787944117144233, 1e-7);
    CHECK(got[1] == 1);
    CHECK_NEAR(got[2], 2.718281828459045, 1e-6);
    nnrt_array_release(r);
  }
  r = run1("log", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK(got[0] != got[0] && got[1] == -INFINITY && got[2] == 0);
    CHECK_NEAR(got[3], 1.3862943611198906, 1e-6);
    nnrt_array_release(r);
  }
  r = run1("sigmoid", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], 0.2689414213699951, 1e-7);
    CHECK(got[1] == 0.5f);
    nnrt_array_release(r);
  }
  r = run1("tanh", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], -0.7615941559557649, 1e-7);
    CHECK(got[1] == 0);
    nnrt_array_release(r);
  }
  r = run1("gelu", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], -0.15865525393145707, 1e-6);
    CHECK(got[1] == 0);
    CHECK_NEAR(got[2], 0.8413447460685429, 1e-6);
    nnrt_array_release(r);
  }
  r = run1("elu", x, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], -0.6321205588285577, 1e-7);
    CHECK(got[3] == 4);
    nnrt_array_release(r);
  }
  nnrt_array_release(x);
}

static void test_matmul(void) {
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s22[2] = {2, 2}, s223[3] = {2, 2, 3}, s31[2] = {3, 1}, s221[3] = {2, 2, 1};
  float a_[6] = {1, 2, 3, 4, 5, 6}, b_[6] = {7, 8, 9, 10, 11, 12};
  float bb_[12] = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, v_[3] = {1, 0, 2};
  nnrt_array *a = f32(2, s23, a_), *b = f32(2, s32, b_), *bt = f32(2, s23, b_), *bb = f32(3, s223, bb_),
             *v = f32(2, s31, v_);
  {
    float w[4] = {58, 64, 139, 154};
    EXPECT_F32(run1("matmul", a, b, NULL), 2, s22, w);
  }
  {
    /* a [2,3] x bt^T where bt holds b's values as [2,3]: rows 7 8 9 / 10 11 12 */
    float w[4] = {50, 68, 122, 167};
    EXPECT_F32(run1("matmul", a, bt, "{\"transpose_b\": true}"), 2, s22, w);
  }
  {
    /* a^T [3,2] x a [2,3] = [3,3]; check via transpose_a on a itself */
    int64_t s33[2] = {3, 3};
    float w[9] = {17, 22, 27, 22, 29, 36, 27, 36, 45};
    EXPECT_F32(run1("matmul", a, a, "{\"transpose_a\": true}"), 2, s33, w);
  }
  {
    /* batched [2,2,3] x [3,1]: the matrix broadcasts over the batch */
    float w[4] = {7, 16, -7, -16};
    EXPECT_F32(run1("matmul", bb, v, NULL), 3, s221, w);
  }
  CHECK_STATUS(nnrt_op(ctx, "matmul", (const nnrt_array *const[]){a, a}, 2, NULL, &a, 1), NNRT_ERR_SHAPE, "[2, 3]");
  nnrt_array_release(a);
  nnrt_array_release(b);
  nnrt_array_release(bt);
  nnrt_array_release(bb);
  nnrt_array_release(v);
}

static void test_reductions(void) {
  int64_t s23[2] = {2, 3}, s2[1] = {2}, s3[1] = {3}, s21[2] = {2, 1}, s13[2] = {1, 3};
  float a_[6] = {1, 5, 3, 4, 2, 6};
  nnrt_array *a = f32(2, s23, a_), *r;
  {
    float w[2] = {9, 12};
    EXPECT_F32(run1("sum", a, NULL, "{\"axes\": [1]}"), 1, s2, w);
  }
  {
    float w[2] = {9, 12};
    EXPECT_F32(run1("sum", a, NULL, "{\"axes\": [-1], \"keepdims\": true}"), 2, s21, w);
  }
  {
    float w[1] = {3.5f};
    EXPECT_F32(run1("mean", a, NULL, NULL), 0, NULL, w);
  }
  {
    float w[3] = {4, 5, 6};
    EXPECT_F32(run1("max", a, NULL, "{\"axes\": [0], \"keepdims\": true}"), 2, s13, w);
  }
  {
    float w[3] = {1, 2, 3};
    EXPECT_F32(run1("min", a, NULL, "{\"axes\": [0]}"), 1, s3, w);
  }
  {
    float w[1] = {21};
    EXPECT_F32(run1("sum", a, NULL, "{\"axes\": [0, 1]}"), 0, NULL, w);
  }
  r = run1("argmax", a, NULL, "{\"axis\": 1}");
  if (r) {
    int64_t got[2];
    nnrt_dtype dt;
    nnrt_array_info(r, &dt, NULL, NULL);
    CHECK(dt == NNRT_DTYPE_I64);
    nnrt_array_to_host(r, got, sizeof got);
    CHECK(got[0] == 1 && got[1] == 2);
    nnrt_array_release(r);
  }
  {
    /* ties: the first index wins */
    float t_[4] = {3, 7, 7, 1};
    int64_t s4[1] = {4}, got = -1;
    nnrt_array *t = f32(1, s4, t_);
    r = run1("argmax", t, NULL, "{\"axes\": [0]}");
    if (r) {
      nnrt_array_to_host(r, &got, sizeof got);
      CHECK(got == 1);
      nnrt_array_release(r);
    }
    nnrt_array_release(t);
  }
  {
    /* argmin: the smallest, first on ties, NaN skipped (it counts as the largest value); and its
    ** own name in messages */
    float t_[5] = {4, 1, NAN, 1, 9};
    int64_t s5[1] = {5}, got = -1;
    nnrt_array *t = f32(1, s5, t_), *empty = NULL;
    int64_t s20[2] = {2, 0};
    r = run1("argmin", t, NULL, NULL);
    if (r) {
      nnrt_dtype dt;
      nnrt_array_info(r, &dt, NULL, NULL);
      CHECK(dt == NNRT_DTYPE_I64);
      nnrt_array_to_host(r, &got, sizeof got);
      CHECK(got == 1);
      nnrt_array_release(r);
    }
    r = run1("argmin", a, NULL, "{\"axes\": [0], \"keepdims\": true}");
    if (r) {
      int64_t got3[3];
      int32_t nd = 0;
      nnrt_array_info(r, NULL, &nd, NULL);
      CHECK(nd == 2);
      nnrt_array_to_host(r, got3, sizeof got3);
      CHECK(got3[0] == 0 && got3[1] == 1 && got3[2] == 0);
      nnrt_array_release(r);
    }
    CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, s20, &empty));
    CHECK_STATUS(nnrt_op(ctx, "argmin", (const nnrt_array *const[]){empty}, 1, "{\"axis\": 1}", &r, 1), NNRT_ERR_SHAPE,
                 "argmin: axis 1 of [2, 0] is empty");
    CHECK_STATUS(nnrt_op(ctx, "argmin", (const nnrt_array *const[]){a}, 1, "{\"axes\": [0, 1]}", &r, 1),
                 NNRT_ERR_INVALID_ARGUMENT, "argmin takes exactly one axis, got 2");
    nnrt_array_release(empty);
    nnrt_array_release(t);
  }
  {
    /* integer sums */
    int32_t x_[6] = {1, 2, 3, 4, 5, 6}, got[3];
    nnrt_array *x = i32(2, s23, x_);
    r = run1("sum", x, NULL, "{\"axes\": [0]}");
    if (r) {
      nnrt_array_to_host(r, got, sizeof got);
      CHECK(got[0] == 5 && got[1] == 7 && got[2] == 9);
      nnrt_array_release(r);
    }
    nnrt_array_release(x);
  }
  CHECK_STATUS(nnrt_op(ctx, "sum", (const nnrt_array *const[]){a}, 1, "{\"axes\": [2]}", &r, 1),
               NNRT_ERR_INVALID_ARGUMENT, "axis 2 is out of range");
  CHECK_STATUS(nnrt_op(ctx, "sum", (const nnrt_array *const[]){a}, 1, "{\"axes\": [1, -1]}", &r, 1),
               NNRT_ERR_INVALID_ARGUMENT, "twice");
  nnrt_array_release(a);
}

static void test_softmax(void) {
  int64_t s23[2] = {2, 3};
  float a_[6] = {0, 0, 0, 1, 2, 3}, got[6];
  nnrt_array *a = f32(2, s23, a_), *r;
  double e1 = exp(1.0), e2 = exp(2.0), e3 = exp(3.0), z = e1 + e2 + e3;
  r = run1("softmax", a, NULL, NULL);
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], 1.0 / 3, 1e-7);
    CHECK_NEAR(got[3], e1 / z, 1e-7);
    CHECK_NEAR(got[5], e3 / z, 1e-7);
    nnrt_array_release(r);
  }
  r = run1("log_softmax", a, NULL, "{\"axis\": 1}");
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    /* 1e-5: oneDNN computes log_softmax with an approximate log (about 20 ulp here). */
    CHECK_NEAR(got[1], -log(3.0), 1e-5);
    CHECK_NEAR(got[4], 2 - log(z), 1e-5);
    nnrt_array_release(r);
  }
  r = run1("softmax", a, NULL, "{\"axis\": 0}");
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK_NEAR(got[0], 1 / (1 + e1), 1e-7);
    CHECK_NEAR(got[2] + got[5], 1, 1e-7);
    nnrt_array_release(r);
  }
  nnrt_array_release(a);
}

/* attention: one head, two queries over three keys, values one-hot: each output row is that row's
** probabilities, softmax(scale q.k + mask); causal hides the keys after each query's position. */
static void test_attention(void) {
  int64_t sq[4] = {1, 1, 2, 1}, sk[4] = {1, 1, 3, 1}, sv[4] = {1, 1, 3, 3}, smask[2] = {2, 3}, so[4] = {1, 1, 2, 3};
  float q_[2] = {1, 2}, k_[3] = {0, 1, 2}, v_[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, mask_[6] = {0, 0, -INFINITY, 0, 0, 0};
  float want[6];
  nnrt_array *q = f32(4, sq, q_), *k = f32(4, sk, k_), *v = f32(4, sv, v_), *mask = f32(2, smask, mask_), *out = NULL;
  const nnrt_array *in[4] = {q, k, v, mask};
  int i, j;
  /* full, scale 0.5, with the mask: row 0 sees keys 0 and 1, row 1 all three */
  for (i = 0; i < 2; ++i) {
    double z = 0, e[3];
    for (j = 0; j < 3; ++j) z += (e[j] = mask_[i * 3 + j] == -INFINITY ? 0 : exp(0.5 * q_[i] * k_[j]));
    for (j = 0; j < 3; ++j) want[i * 3 + j] = (float)(e[j] / z);
  }
  if (C_TEST_RECORD(nnrt_op(ctx, "attention", in, 4, "{\"scale\": 0.5}", &out, 1) == NNRT_OK))
    expect_f32(out, 4, so, want, 1e-6, __LINE__, __func__);
  /* causal, default scale 1/sqrt(1): the two queries are positions 1 and 2 of 3 */
  for (i = 0; i < 2; ++i) {
    double z = 0, e[3];
    for (j = 0; j < 3; ++j) z += (e[j] = j > i + 1 ? 0 : exp(q_[i] * k_[j]));
    for (j = 0; j < 3; ++j) want[i * 3 + j] = (float)(e[j] / z);
  }
  if (C_TEST_RECORD(nnrt_op(ctx, "attention", in, 3, "{\"causal\": true}", &out, 1) == NNRT_OK))
    expect_f32(out, 4, so, want, 1e-6, __LINE__, __func__);
  /* bad input: k's head size differs from q's; a mask that does not broadcast; an unknown attr */
  in[1] = v;
  CHECK_STATUS(nnrt_op(ctx, "attention", in, 3, NULL, &out, 1), NNRT_ERR_SHAPE, "k [N, H, Tk, D]");
  in[1] = k;
  in[3] = v;
  CHECK_STATUS(nnrt_op(ctx, "attention", in, 4, NULL, &out, 1), NNRT_ERR_SHAPE, "does not broadcast");
  CHECK_STATUS(nnrt_op(ctx, "attention", in, 3, "{\"casual\": true}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "casual");
  nnrt_array_release(q);
  nnrt_array_release(k);
  nnrt_array_release(v);
  nnrt_array_release(mask);
}

/* Casts to f16/bf16 round to nearest even; the bit patterns are checked exactly. */
static void test_casts(void) {
  int64_t s8[1] = {8};
  float x_[8];
  uint16_t got[8];
  nnrt_array *x, *r;
  uint32_t bits[8] = {0x3eaaaaabu, /* 1/3 */
                      0x477fe000u, /* 65504, the largest f16 */
                      0x477ff000u, /* 65520: halfway to 65536, rounds up to inf */
                      0x33800000u, /* 2^-24, the smallest f16 subnormal */
                      0x33000000u, /* 2^-25: a tie between 0 and 2^-24, to even (0) */
                      0x33c00000u, /* 3 * 2^-25: a tie between 2^-24 and 2^-23, to even (2^-23) */
                      0x3f801000u, /* 1 + 2^-11: halfway between two f16 values, to even (1) */
                      0xc0490fdbu}; /* -pi */
  int i;
  for (i = 0; i < 8; ++i) memcpy(&x_[i], &bits[i], 4);
  x = f32(1, s8, x_);
  r = run1("cast", x, NULL, "{\"dtype\": \"f16\"}");
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK(got[0] == 0x3555);
    CHECK(got[1] == 0x7bff);
    CHECK(got[2] == 0x7c00);
    CHECK(got[3] == 0x0001);
    CHECK(got[4] == 0x0000);
    CHECK(got[5] == 0x0002);
    CHECK(got[6] == 0x3c00);
    CHECK(got[7] == 0xc248);
    nnrt_array_release(r);
  }
  r = run1("cast", x, NULL, "{\"dtype\": \"bf16\"}");
  if (r) {
    nnrt_array_to_host(r, got, sizeof got);
    CHECK(got[0] == 0x3eab);
    CHECK(got[1] == 0x4780);
    CHECK(got[3] == 0x3380);
    CHECK(got[6] == 0x3f80); /* below bf16's halfway point 0x3f808000: rounds down */
    CHECK(got[7] == 0xc049);
    nnrt_array_release(r);
  }
  nnrt_array_release(x);
  {
    /* bf16 ties: 1 + 2^-8 (halfway) goes to even 1.0; 1 + 3 * 2^-8 goes to even 1 + 2^-6 */
    uint32_t t[2] = {0x3f808000u, 0x3f818000u};
    float tf[2];
    int64_t s2[1] = {2};
    memcpy(tf, t, sizeof tf);
    x = f32(1, s2, tf);
    r = run1("cast", x, NULL, "{\"dtype\": \"bf16\"}");
    if (r) {
      nnrt_array_to_host(r, got, 4);
      CHECK(got[0] == 0x3f80);
      CHECK(got[1] == 0x3f82);
      nnrt_array_release(r);
    }
    nnrt_array_release(x);
  }
  {
    /* float -> int truncates toward zero; -> bool is (x != 0); f16 -> f32 is exact */
    float v_[4] = {-2.7f, 2.7f, 0.5f, 0};
    int64_t s4[1] = {4};
    int32_t gi[4];
    unsigned char gb[4];
    x = f32(1, s4, v_);
    r = run1("cast", x, NULL, "{\"dtype\": \"i32\"}");
    if (r) {
      nnrt_array_to_host(r, gi, sizeof gi);
      CHECK(gi[0] == -2 && gi[1] == 2 && gi[2] == 0 && gi[3] == 0);
      nnrt_array_release(r);
    }
    r = run1("cast", x, NULL, "{\"dtype\": \"bool\"}");
    if (r) {
      nnrt_array_to_host(r, gb, sizeof gb);
      CHECK(gb[0] == 1 && gb[1] == 1 && gb[2] == 1 && gb[3] == 0);
      nnrt_array_release(r);
    }
    nnrt_array_release(x);
  }
  {
    uint16_t h[3] = {0x3555, 0x0001, 0xfc00};
    int64_t s3[1] = {3};
    nnrt_array *hx = NULL;
    float back[3];
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F16, 1, s3, h, sizeof h, &hx));
    r = run1("cast", hx, NULL, "{\"dtype\": \"f32\"}");
    if (r) {
      nnrt_array_to_host(r, back, sizeof back);
      CHECK(back[0] == 0.333251953125f);
      CHECK(back[1] == 5.9604644775390625e-08f);
      CHECK(back[2] == -INFINITY);
      nnrt_array_release(r);
    }
    /* f16 math: 1/3 + 1/3 in f16 rounds once */
    r = run1("add", hx, hx, NULL);
    if (r) {
      uint16_t s[3];
      nnrt_array_to_host(r, s, sizeof s);
      CHECK(s[0] == 0x3955);
      CHECK(s[1] == 0x0002);
      nnrt_array_release(r);
    }
    nnrt_array_release(hx);
  }
}

static void test_layout(void) {
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s6[1] = {6};
  float a_[6] = {1, 2, 3, 4, 5, 6};
  nnrt_array *a = f32(2, s23, a_), *t;
  {
    float w[6] = {1, 2, 3, 4, 5, 6};
    EXPECT_F32(run1("reshape", a, NULL, "{\"shape\": [3, -1]}"), 2, s32, w);
    EXPECT_F32(run1("reshape", a, NULL, "{\"shape\": [-1]}"), 1, s6, w);
  }
  t = run1("transpose", a, NULL, NULL);
  if (t) {
    /* a non-contiguous view: read it, and feed it to ops */
    float w[6] = {1, 4, 2, 5, 3, 6}, w2[6] = {2, 8, 4, 10, 6, 12}, w3[6] = {1, 4, 2, 5, 3, 6};
    float got[6];
    nnrt_array *r;
    CHECK_OK(nnrt_array_to_host(t, got, sizeof got));
    CHECK(memcmp(got, w, sizeof w) == 0);
    EXPECT_F32(run1("add", t, t, NULL), 2, s32, w2);
    EXPECT_F32(run1("reshape", t, NULL, "{\"shape\": [3, 2]}"), 2, s32, w3);
    r = run1("reshape", t, NULL, "{\"shape\": [6]}");
    EXPECT_F32(r, 1, s6, w);
    {
      float ws[3] = {5, 7, 9};
      int64_t s3[1] = {3};
      EXPECT_F32(run1("sum", t, NULL, "{\"axes\": [1]}"), 1, s3, ws);
    }
    nnrt_array_release(t);
  }
  {
    int64_t s234[3] = {2, 3, 4}, s423[3] = {4, 2, 3};
    float x_[24], w[24];
    int i, j, k;
    nnrt_array *x;
    for (i = 0; i < 24; ++i) x_[i] = (float)i;
    for (k = 0; k < 4; ++k)
      for (i = 0; i < 2; ++i)
        for (j = 0; j < 3; ++j) w[(k * 2 + i) * 3 + j] = x_[(i * 3 + j) * 4 + k];
    x = f32(3, s234, x_);
    t = run1("transpose", x, NULL, "{\"perm\": [2, 0, 1]}");
    if (t) {
      nnrt_array *c = run1("cast", t, NULL, "{\"dtype\": \"f32\"}");
      EXPECT_F32(c, 3, s423, w);
      nnrt_array_release(t);
    }
    nnrt_array_release(x);
  }
  {
    nnrt_array *r = NULL;
    CHECK_STATUS(nnrt_op(ctx, "reshape", (const nnrt_array *const[]){a}, 1, "{\"shape\": [4, 2]}", &r, 1),
                 NNRT_ERR_SHAPE, "[2, 3]");
    CHECK_STATUS(nnrt_op(ctx, "transpose", (const nnrt_array *const[]){a}, 1, "{\"perm\": [0, 0]}", &r, 1),
                 NNRT_ERR_INVALID_ARGUMENT, "repeats");
  }
  nnrt_array_release(a);
}

static void test_conv_pool(void) {
  int64_t sx[4] = {1, 1, 3, 3}, sw[4] = {1, 1, 2, 2}, sy[4] = {1, 1, 2, 2};
  float x_[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w_[4] = {1, 0, 0, 1};
  nnrt_array *x = f32(4, sx, x_), *w = f32(4, sw, w_);
  {
    float want[4] = {6, 8, 12, 14};
    EXPECT_F32(run1("conv2d", x, w, NULL), 4, sy, want);
  }
  {
    /* padding 1, stride 2: windows at (-1,-1), (-1,1), (1,-1), (1,1) */
    float want[4] = {1, 3, 7, 14};
    EXPECT_F32(run1("conv2d", x, w, "{\"padding\": 1, \"stride\": [2, 2]}"), 4, sy, want);
  }
  {
    int64_t s14[4] = {1, 1, 4, 4}, s12[4] = {1, 1, 2, 2};
    float p_[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    nnrt_array *p = f32(4, s14, p_);
    float wmax[4] = {6, 8, 14, 16}, wavg[4] = {3.5f, 5.5f, 11.5f, 13.5f};
    EXPECT_F32(run1("maxpool2d", p, NULL, "{\"kernel\": [2, 2]}"), 4, s12, wmax);
    EXPECT_F32(run1("avgpool2d", p, NULL, "{\"kernel\": 2, \"stride\": 2}"), 4, s12, wavg);
    {
      /* 3x3 windows, stride 3, padding 1: padded positions count in the average (PyTorch default) */
      float wa[4] = {14.0f / 9, 22.0f / 9, 46.0f / 9, 54.0f / 9};
      float we[4] = {14.0f / 4, 22.0f / 4, 46.0f / 4, 54.0f / 4};
      EXPECT_F32_NEAR(run1("avgpool2d", p, NULL, "{\"kernel\": 3, \"stride\": 3, \"padding\": 1}"), 4, s12, wa);
      EXPECT_F32_NEAR(run1("avgpool2d", p, NULL, "{\"kernel\": 3, \"stride\": 3, \"padding\": 1, \"count_include_pad\": false}"),
                 4, s12, we);
    }
    nnrt_array_release(p);
  }
  {
    nnrt_array *r = NULL;
    int64_t sw3[4] = {1, 2, 2, 2};
    float w3_[8] = {0};
    nnrt_array *w3 = f32(4, sw3, w3_);
    CHECK_STATUS(nnrt_op(ctx, "conv2d", (const nnrt_array *const[]){x, w3}, 2, NULL, &r, 1), NNRT_ERR_SHAPE,
                 "1 channels");
    CHECK_STATUS(nnrt_op(ctx, "maxpool2d", (const nnrt_array *const[]){x}, 1, NULL, &r, 1),
                 NNRT_ERR_INVALID_ARGUMENT, "kernel");
    CHECK_STATUS(nnrt_op(ctx, "conv2d", (const nnrt_array *const[]){x, w}, 2, "{\"stride\": [1, 2, 3]}", &r, 1),
                 NNRT_ERR_INVALID_ARGUMENT, "attrs.stride");
    nnrt_array_release(w3);
  }
  nnrt_array_release(x);
  nnrt_array_release(w);
}

static void test_creation(void) {
  int64_t s22[2] = {2, 2};
  float three[4] = {3, 3, 3, 3}, u1[64], u2[64], u3[64];
  nnrt_array *r1, *r2, *r3;
  int i, differ = 0, in_range = 1;
  EXPECT_F32(run1("fill", NULL, NULL, "{\"shape\": [2, 2], \"value\": 3}"), 2, s22, three);
  r1 = run1("random_uniform", NULL, NULL, "{\"shape\": [64], \"seed\": 7, \"low\": -1, \"high\": 1}");
  r2 = run1("random_uniform", NULL, NULL, "{\"shape\": [64], \"seed\": 7, \"low\": -1, \"high\": 1}");
  r3 = run1("random_uniform", NULL, NULL, "{\"shape\": [64], \"seed\": 8, \"low\": -1, \"high\": 1}");
  if (r1 && r2 && r3) {
    nnrt_array_to_host(r1, u1, sizeof u1);
    nnrt_array_to_host(r2, u2, sizeof u2);
    nnrt_array_to_host(r3, u3, sizeof u3);
    CHECK(memcmp(u1, u2, sizeof u1) == 0);
    for (i = 0; i < 64; ++i) {
      differ += u1[i] != u3[i];
      in_range &= u1[i] >= -1 && u1[i] < 1;
    }
    CHECK(differ > 60);
    CHECK(in_range);
  }
  nnrt_array_release(r1);
  nnrt_array_release(r2);
  nnrt_array_release(r3);
  r1 = run1("random_normal", NULL, NULL, "{\"shape\": [4096], \"seed\": 3, \"mean\": 2, \"std\": 0.5}");
  if (r1) {
    static float n[4096];
    double sum = 0, sq = 0;
    nnrt_array_to_host(r1, n, sizeof n);
    for (i = 0; i < 4096; ++i) sum += n[i];
    for (i = 0; i < 4096; ++i) sq += (n[i] - sum / 4096) * (n[i] - sum / 4096);
    CHECK_NEAR(sum / 4096, 2, 0.05);
    CHECK_NEAR(sqrt(sq / 4096), 0.5, 0.05);
    nnrt_array_release(r1);
  }
}

static void test_bad_input(void) {
  int64_t s23[2] = {2, 3}, s4[1] = {4};
  float a_[6] = {0}, b_[4] = {0};
  nnrt_array *a = f32(2, s23, a_), *b = f32(1, s4, b_), *out = (nnrt_array *)0x1, *outs[2];
  const nnrt_array *ab[2];
  int64_t s3[1] = {3};
  int32_t i_[3] = {1, 2, 3};
  nnrt_array *ints = i32(1, s3, i_);
  ab[0] = a;
  ab[1] = b;
  CHECK_STATUS(nnrt_op(ctx, "frobnicate", ab, 2, NULL, &out, 1), NNRT_ERR_UNSUPPORTED, "unknown op \"frobnicate\"");
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, &out, 1), NNRT_ERR_SHAPE, "[2, 3]");
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, &out, 1), NNRT_ERR_SHAPE, "[4]");
  CHECK_STATUS(nnrt_op(NULL, "add", ab, 2, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_STATUS(nnrt_op(ctx, NULL, ab, 2, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "name is NULL");
  CHECK_STATUS(nnrt_op(ctx, "add", NULL, 2, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "inputs is NULL");
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, NULL, 1), NNRT_ERR_INVALID_ARGUMENT, "outputs is NULL");
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 1, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "takes 2 input(s), got 1");
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, outs, 2), NNRT_ERR_INVALID_ARGUMENT, "n_outputs 2");
  CHECK_STATUS(nnrt_op(ctx, "add", ab, -1, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, ">= 0");
  ab[1] = NULL;
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "inputs[1] is NULL");
  ab[1] = (const nnrt_array *)ctx;
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "inputs[1] is not a live");
  ab[1] = ints;
  CHECK_STATUS(nnrt_op(ctx, "add", ab, 2, NULL, &out, 1), NNRT_ERR_DTYPE, "different dtypes");
  CHECK_STATUS(nnrt_op(ctx, "exp", (const nnrt_array *const[]){ints}, 1, NULL, &out, 1), NNRT_ERR_DTYPE, "i32");
  CHECK_STATUS(nnrt_op(ctx, "sum", ab, 1, "{\"axes\": 1", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "not valid JSON");
  CHECK_STATUS(nnrt_op(ctx, "sum", ab, 1, "{\"axes\": \"all\"}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "attrs.axes");
  CHECK_STATUS(nnrt_op(ctx, "sum", ab, 1, "{\"axis\": [0]}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "attrs.axis");
  CHECK_STATUS(nnrt_op(ctx, "softmax", ab, 1, "{\"axis\": 5}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "axis 5");
  CHECK_STATUS(nnrt_op(ctx, "cast", ab, 1, "{\"dtype\": \"f128\"}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "f128");
  CHECK_STATUS(nnrt_op(ctx, "matmul", ab, 1, "{\"transpose_a\": 1}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "takes 2");
  CHECK_STATUS(nnrt_op(ctx, "fill", NULL, 0, "{\"shape\": [2, -2]}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "-2");
  CHECK_STATUS(nnrt_op(ctx, "fill", NULL, 0, "{}", &out, 1), NNRT_ERR_INVALID_ARGUMENT, "attrs.shape is required");
  CHECK_STATUS(nnrt_op(ctx, "random_uniform", NULL, 0, "{\"shape\": [2], \"low\": 1, \"high\": 0}", &out, 1),
               NNRT_ERR_INVALID_ARGUMENT, "low");
  CHECK_STATUS(nnrt_op(ctx, "random_normal", NULL, 0, "{\"shape\": [2], \"std\": -1}", &out, 1),
               NNRT_ERR_INVALID_ARGUMENT, "attrs.std");
  CHECK(out == (nnrt_array *)0x1);
  nnrt_array_release(a);
  nnrt_array_release(b);
  nnrt_array_release(ints);
}

int main(int argc, char **argv) {
  const char *options = argc > 1 ? argv[1] : NULL;
  if (nnrt_context_create(options, &ctx) != NNRT_OK) {
    fprintf(stderr, "context: %s\n", nnrt_last_error());
    return 1;
  }
  test_binary();
  test_unary();
  test_matmul();
  test_reductions();
  test_softmax();
  test_attention();
  test_casts();
  test_layout();
  test_conv_pool();
  test_creation();
  test_bad_input();
  nnrt_context_release(ctx);
  return c_test_finish("test_ops");
}
