/* Hostile input through the public API: JSON nested far too deep, numbers beyond a double, keys
** given twice, sizes whose byte counts overflow, files that are not files. Every call must return a
** status with a message; none may crash, hang or compute something else than asked. */
#include <ctype.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c_test.h"

static nnrt_context *ctx;

/* "<prefix>" + depth x open + "1" + depth x close + "<suffix>", malloc'ed. */
static char *nested(const char *prefix, int depth, char open, char close, const char *suffix) {
  size_t np = strlen(prefix), ns = strlen(suffix), n = np + 2 * (size_t)depth + 1 + ns;
  char *s = (char *)malloc(n + 1), *p = s;
  int i;
  memcpy(p, prefix, np);
  p += np;
  for (i = 0; i < depth; ++i) *p++ = open;
  *p++ = '1';
  for (i = 0; i < depth; ++i) *p++ = close;
  memcpy(p, suffix, ns);
  p += ns;
  *p = 0;
  return s;
}

static const char *mlp =
    "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 3},"
    " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}";

/* Deep nesting at every JSON entry point: refused, not a stack overflow. */
static void test_deep_nesting(void) {
  nnrt_context *c = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_dataset *d = NULL;
  nnrt_array *out = NULL;
  char *deep;
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));

  deep = nested("{\"backend\": ", 100000, '[', ']', "}");
  CHECK_STATUS(nnrt_context_create(deep, &c), NNRT_ERR_INVALID_ARGUMENT, "nested deeper than");
  free(deep);
  deep = nested("", 100000, '[', ']', "");
  CHECK_STATUS(nnrt_context_create(deep, &c), NNRT_ERR_INVALID_ARGUMENT, "nested deeper than");
  free(deep);
  deep = nested("{\"shape\": ", 100000, '[', ']', "}");
  CHECK_STATUS(nnrt_op(ctx, "fill", NULL, 0, deep, &out, 1), NNRT_ERR_INVALID_ARGUMENT, "nested deeper than");
  free(deep);
  deep = nested("{\"input\": ", 100000, '[', ']', ", \"layers\": []}");
  CHECK_STATUS(nnrt_model_create(ctx, deep, &m), NNRT_ERR_INVALID_ARGUMENT, "nested deeper than");
  free(deep);
  {
    /* Objects nest through keys: {"a":{"a":...1}}. */
    int depth = 50000, i;
    size_t n = 6 * (size_t)depth + 8;
    char *s = (char *)malloc(n), *p = s;
    for (i = 0; i < depth; ++i) {
      memcpy(p, "{\"a\":", 5);
      p += 5;
    }
    *p++ = '1';
    for (i = 0; i < depth; ++i) *p++ = '}';
    *p = 0;
    CHECK_STATUS(nnrt_trainer_create(m, s, &t), NNRT_ERR_INVALID_ARGUMENT, "nested deeper than");
    CHECK_STATUS(nnrt_dataset_load(ctx, s, &d), NNRT_ERR_INVALID_ARGUMENT, "nested deeper than");
    free(s);
  }
  /* Nesting that configs really use still parses. */
  CHECK_OK(nnrt_op(ctx, "fill", NULL, 0, "{\"shape\": [2], \"value\": 1}", &out, 1));
  nnrt_array_release(out);
  CHECK(c == NULL && t == NULL && d == NULL);
  nnrt_model_release(m);
}

/* Numbers beyond a double and integers beyond int64: a wrong value, not an internal error. */
static void test_huge_numbers(void) {
  nnrt_context *c = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_array *out = NULL;
  CHECK_STATUS(nnrt_context_create("{\"seed\": 1e999}", &c), NNRT_ERR_INVALID_ARGUMENT, "not valid JSON");
  CHECK_STATUS(nnrt_context_create("{\"threads\": -1e400}", &c), NNRT_ERR_INVALID_ARGUMENT, "not valid JSON");
  CHECK_STATUS(nnrt_op(ctx, "fill", NULL, 0, "{\"shape\": [2], \"value\": 1e309}", &out, 1), NNRT_ERR_INVALID_ARGUMENT,
               "not valid JSON");
  /* 2^64 - 1 as a dimension must not become -1. */
  CHECK_STATUS(nnrt_op(ctx, "fill", NULL, 0, "{\"shape\": [18446744073709551615]}", &out, 1),
               NNRT_ERR_INVALID_ARGUMENT, "shape");
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));
  CHECK_STATUS(nnrt_trainer_create(m, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 1e400}}", &t),
               NNRT_ERR_INVALID_ARGUMENT, "not valid JSON");
  CHECK(c == NULL && t == NULL && out == NULL);
  nnrt_model_release(m);
}

/* A key given twice would silently lose one value. */
static void test_duplicate_keys(void) {
  nnrt_context *c = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  nnrt_array *out = NULL;
  CHECK_STATUS(nnrt_context_create("{\"threads\": 1, \"threads\": 2}", &c), NNRT_ERR_INVALID_ARGUMENT, "twice");
  CHECK_STATUS(nnrt_op(ctx, "fill", NULL, 0, "{\"shape\": [2], \"value\": 1, \"value\": 2}", &out, 1),
               NNRT_ERR_INVALID_ARGUMENT, "\"value\" is given twice");
  CHECK_STATUS(nnrt_model_create(ctx,
                                 "{\"input\": [4], \"layers\": [{\"type\": \"dense\", \"units\": 3, \"units\": 4},"
                                 " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}",
                                 &m),
               NNRT_ERR_INVALID_ARGUMENT, "twice");
  CHECK_OK(nnrt_model_create(ctx, mlp, &m));
  CHECK_STATUS(nnrt_trainer_create(m, "{\"batch_size\": 4, \"batch_size\": 8}", &t), NNRT_ERR_INVALID_ARGUMENT, "twice");
  CHECK(c == NULL && t == NULL && out == NULL);
  nnrt_model_release(m);
}

/* Sizes from attributes: each either fits or is refused, never wrapped or truncated. */
static void test_size_overflow(void) {
  nnrt_array *x = NULL, *w = NULL, *y = NULL;
  nnrt_model *m = NULL;
  const nnrt_array *in[2];
  int64_t xs[4] = {1, 1, 4, 4}, ws[4] = {1, 1, 3, 3}, huge[3] = {INT64_MAX / 4, 4, 4}, big2[2] = {1ll << 30, 1ll << 20};
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, xs, &x));
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, ws, &w));
  in[0] = x;
  in[1] = w;
  /* 2^32 + 1 truncated to 32 bits would be a stride of 1. */
  CHECK_STATUS(nnrt_op(ctx, "conv2d", in, 2, "{\"stride\": 4294967297}", &y, 1), NNRT_ERR_INVALID_ARGUMENT, "32 bits");
  CHECK_STATUS(nnrt_op(ctx, "conv2d", in, 2, "{\"padding\": 4294967296}", &y, 1), NNRT_ERR_INVALID_ARGUMENT, "32 bits");
  CHECK_STATUS(nnrt_op(ctx, "maxpool2d", in, 1, "{\"kernel\": 2, \"stride\": 4294967296}", &y, 1),
               NNRT_ERR_INVALID_ARGUMENT, "32 bits");
  /* The largest padding that fits 32 bits: the output's element count (2^32 x 2^32) overflows. */
  CHECK_STATUS(nnrt_op(ctx, "conv2d", in, 2, "{\"padding\": 2147483647}", &y, 1), NNRT_ERR_INVALID_ARGUMENT, "overflow");
  /* An output of 2e6 x 2e6 floats is more memory than there is: refused before asking for it. */
  CHECK_STATUS(nnrt_op(ctx, "conv2d", in, 2, "{\"padding\": 1000000}", &y, 1), NNRT_ERR_OUT_OF_MEMORY, "bytes");
  CHECK(y == NULL);
  /* Byte counts that overflow, and shapes beyond memory. */
  CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F64, 3, huge, &y), NNRT_ERR_INVALID_ARGUMENT, "overflow");
  CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, big2, &y), NNRT_ERR_OUT_OF_MEMORY, "bytes");
  CHECK(y == NULL);
  /* Layer widths whose weights cannot exist, and padding whose output cannot be counted. */
  CHECK_STATUS(nnrt_model_create(ctx,
                                 "{\"input\": [1099511627776], \"layers\": [{\"type\": \"dense\", \"units\": 1099511627776},"
                                 " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}",
                                 &m),
               NNRT_ERR_INVALID_ARGUMENT, "overflow");
  CHECK_STATUS(nnrt_model_create(ctx,
                                 "{\"input\": [1024], \"layers\": [{\"type\": \"dense\", \"units\": 1099511627776},"
                                 " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}",
                                 &m),
               NNRT_ERR_OUT_OF_MEMORY, "bytes");
  CHECK_STATUS(nnrt_model_create(ctx,
                                 "{\"input\": [1, 4, 4], \"layers\": [{\"type\": \"conv2d\", \"filters\": 1099511627776,"
                                 " \"kernel\": 3, \"padding\": 2147483647},"
                                 " {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}",
                                 &m),
               NNRT_ERR_INVALID_ARGUMENT, "overflow");
  CHECK_STATUS(nnrt_model_create(ctx,
                                 "{\"input\": [1, 4, 4], \"layers\": [{\"type\": \"conv2d\", \"filters\": 1,"
                                 " \"kernel\": 3, \"stride\": 4294967297}]}",
                                 &m),
               NNRT_ERR_INVALID_ARGUMENT, "32 bits");
  /* (2^32 + 1) (2^32 - 1) wraps to -1 in 64 bits: the -1 dim would become -16, and the product of
  ** the dims wrap back to 16, a shape with a negative dim that passed every check. */
  in[0] = x;
  CHECK_STATUS(nnrt_op(ctx, "reshape", in, 1, "{\"shape\": [4294967297, 4294967295, -1]}", &y, 1),
               NNRT_ERR_INVALID_ARGUMENT, "overflow");
  CHECK_STATUS(nnrt_model_create(ctx,
                                 "{\"input\": [16], \"layers\": [{\"type\": \"reshape\","
                                 " \"shape\": [4294967297, 4294967295, -1]}]}",
                                 &m),
               NNRT_ERR_INVALID_ARGUMENT, "overflow");
  CHECK(m == NULL && y == NULL);
  nnrt_array_release(x);
  nnrt_array_release(w);
}

/* One dim just past 2^31 for every op kind nnrt_op reaches. A backend that counts in 32 bits inside
** (oneDNN divided by zero creating a convolution whose output height is 2^31) declares its limits,
** and the op runs on the reference backend instead. Most cases keep the element count at zero with
** another dim of 0, so the op runs whatever the memory; where the tensor is truly huge, the
** context's hard memory limit gives NNRT_ERR_OUT_OF_MEMORY. */
#define PAST_2_31 2147483649ll

/* Runs `name` on `n` inputs and checks that it succeeded with an output of dims `want`. */
static void check_huge_dim_op(nnrt_context *c, const char *name, const nnrt_array *const *in, int n, const char *attrs,
                              int32_t want_ndim, const int64_t *want) {
  nnrt_array *y = NULL;
  nnrt_dtype dt;
  int32_t ndim = -1, i;
  int64_t dims[NNRT_MAX_DIMS];
  nnrt_status s = nnrt_op(c, name, in, n, attrs, &y, 1);
  if (s != NNRT_OK) fprintf(stderr, "  %s %s: %s\n", name, attrs ? attrs : "", nnrt_last_error());
  CHECK(s == NNRT_OK);
  if (!y) return;
  CHECK_OK(nnrt_array_info(y, &dt, &ndim, dims));
  CHECK(ndim == want_ndim);
  for (i = 0; i < ndim && i < want_ndim; ++i) CHECK(dims[i] == want[i]);
  nnrt_array_release(y);
}

/* `options` (NULL or a JSON object: the run's context options) with a hard memory limit of 1 GiB. */
static void with_memory_limit(const char *options, char *out, size_t cap) {
  const char *limit = "\"cache\": {\"max_total_bytes\": 1073741824}";
  const char *end = options ? strrchr(options, '}') : NULL, *p;
  int empty = 1;
  if (!end || !strchr(options, '{')) {
    snprintf(out, cap, "{%s}", limit);
    return;
  }
  for (p = strchr(options, '{') + 1; p < end; ++p)
    if (!isspace((unsigned char)*p)) empty = 0;
  snprintf(out, cap, "%.*s%s%s}", (int)(end - options), options, empty ? "" : ", ", limit);
}

static void test_dim_past_2_31(const char *backend_options) {
  nnrt_context *c = NULL;
  nnrt_array *wide = NULL, *tall = NULL, *img = NULL, *x = NULL, *w = NULL, *y = NULL;
  const nnrt_array *in[2];
  int64_t wide_dims[2] = {0, PAST_2_31}, tall_dims[2] = {PAST_2_31, 0}, img_dims[4] = {0, 1, PAST_2_31, 1};
  int64_t xs[4] = {1, 1, 4, 4}, x0s[4] = {0, 1, 4, 4}, ws[4] = {1, 1, 3, 3};
  char options[256];
  with_memory_limit(backend_options, options, sizeof options);
  CHECK_OK(nnrt_context_create(options, &c));
  if (!c) return;
  CHECK_OK(nnrt_array_create(c, NNRT_DTYPE_F32, 2, wide_dims, &wide));
  CHECK_OK(nnrt_array_create(c, NNRT_DTYPE_F32, 2, tall_dims, &tall));
  CHECK_OK(nnrt_array_create(c, NNRT_DTYPE_F32, 4, img_dims, &img));
  {
    int64_t want_wide[2] = {0, PAST_2_31}, want_rows[1] = {0}, want_mm[2] = {0, 0}, want_t[2] = {PAST_2_31, 0};
    int64_t want_conv[4] = {0, 1, 2147483648ll, 2}, want_img[4] = {0, 1, PAST_2_31, 1};
    in[0] = wide;
    in[1] = wide;
    check_huge_dim_op(c, "add", in, 2, NULL, 2, want_wide);                             /* BINARY */
    check_huge_dim_op(c, "relu", in, 1, NULL, 2, want_wide);                            /* UNARY */
    check_huge_dim_op(c, "sum", in, 1, "{\"axes\": [1]}", 1, want_rows);                /* REDUCE */
    check_huge_dim_op(c, "argmax", in, 1, "{\"axis\": 1}", 1, want_rows);               /* ARGREDUCE */
    check_huge_dim_op(c, "softmax", in, 1, "{\"axis\": 1}", 2, want_wide);              /* SOFTMAX */
    check_huge_dim_op(c, "cast", in, 1, "{\"dtype\": \"f64\"}", 2, want_wide);         /* COPY */
    check_huge_dim_op(c, "transpose", in, 1, NULL, 2, want_t);                          /* COPY, strided */
    in[1] = tall;
    check_huge_dim_op(c, "matmul", in, 2, NULL, 2, want_mm);                            /* MATMUL, K = 2^31 + 1 */
    in[0] = img;
    check_huge_dim_op(c, "maxpool2d", in, 1, "{\"kernel\": 1}", 4, want_img);           /* POOL2D */
    check_huge_dim_op(c, "avgpool2d", in, 1, "{\"kernel\": 1}", 4, want_img);
    check_huge_dim_op(c, "fill", NULL, 0, "{\"shape\": [0, 2147483649]}", 2, want_wide); /* FILL */
    check_huge_dim_op(c, "random_uniform", NULL, 0, "{\"shape\": [0, 2147483649]}", 2, want_wide); /* RANDOM */
    check_huge_dim_op(c, "random_normal", NULL, 0, "{\"shape\": [0, 2147483649]}", 2, want_wide);
    /* CONV2D: an output height of 2^31 from padding, with no images... */
    CHECK_OK(nnrt_array_create(c, NNRT_DTYPE_F32, 4, x0s, &x));
    CHECK_OK(nnrt_array_create(c, NNRT_DTYPE_F32, 4, ws, &w));
    in[0] = x;
    in[1] = w;
    check_huge_dim_op(c, "conv2d", in, 2, "{\"padding\": [1073741823, 0]}", 4, want_conv);
    nnrt_array_release(x);
  }
  /* ... and with one image: 16 GiB of output, beyond the context's limit. */
  CHECK_OK(nnrt_array_create(c, NNRT_DTYPE_F32, 4, xs, &x));
  in[0] = x;
  CHECK_STATUS(nnrt_op(c, "conv2d", in, 2, "{\"padding\": [1073741823, 0]}", &y, 1), NNRT_ERR_OUT_OF_MEMORY, "bytes");
  /* Filled and random tensors of 2^31 + 1 floats. */
  CHECK_STATUS(nnrt_op(c, "fill", NULL, 0, "{\"shape\": [2147483649]}", &y, 1), NNRT_ERR_OUT_OF_MEMORY, "bytes");
  CHECK_STATUS(nnrt_op(c, "random_normal", NULL, 0, "{\"shape\": [2147483649]}", &y, 1), NNRT_ERR_OUT_OF_MEMORY, "bytes");
  CHECK(y == NULL);
  nnrt_array_release(x);
  nnrt_array_release(w);
  nnrt_array_release(img);
  nnrt_array_release(tall);
  nnrt_array_release(wide);
  nnrt_context_release(c);
}

/* mean over integer arrays, as the header documents. */
static void test_integer_mean(void) {
  int32_t v[6] = {1, 2, 4, -3, -4, -6}, got[3];
  int64_t shape[2] = {2, 3};
  uint8_t b[4] = {250, 251, 252, 255}, bm = 0;
  int64_t bs[1] = {4};
  nnrt_array *x = NULL, *y = NULL;
  const nnrt_array *in[1];
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_I32, 2, shape, v, sizeof v, &x));
  in[0] = x;
  CHECK_OK(nnrt_op(ctx, "mean", in, 1, "{\"axes\": [0]}", &y, 1));
  CHECK_OK(nnrt_array_to_host(y, got, sizeof got));
  CHECK(got[0] == -1 && got[1] == -1 && got[2] == -1); /* -2/2, -2/2, -2/2 */
  nnrt_array_release(y);
  CHECK_OK(nnrt_op(ctx, "mean", in, 1, "{\"axes\": [1]}", &y, 1));
  CHECK_OK(nnrt_array_to_host(y, got, 2 * sizeof(int32_t)));
  CHECK(got[0] == 2 && got[1] == -4); /* 7/3 and -13/3, truncated toward zero */
  nnrt_array_release(y);
  nnrt_array_release(x);
  /* u8: the sum (1008) does not fit a byte, the mean does. */
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_U8, 1, bs, b, sizeof b, &x));
  in[0] = x;
  CHECK_OK(nnrt_op(ctx, "mean", in, 1, NULL, &y, 1));
  CHECK_OK(nnrt_array_to_host(y, &bm, 1));
  CHECK(bm == 252);
  nnrt_array_release(y);
  nnrt_array_release(x);
}

/* A checkpoint path that is not a regular file: refused at once, never read without end. */
static void test_special_files(void) {
  nnrt_model *m = NULL;
  char dir[] = "/tmp/nnrt_hostile_XXXXXX", fifo[64];
  CHECK_STATUS(nnrt_model_load(ctx, "/dev/zero", &m), NNRT_ERR_IO, "not a regular file");
  CHECK_STATUS(nnrt_model_load(ctx, "/dev/null", &m), NNRT_ERR_IO, "not a regular file");
  CHECK_STATUS(nnrt_model_load(ctx, "/tmp", &m), NNRT_ERR_IO, "directory");
  if (mkdtemp(dir)) {
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    if (mkfifo(fifo, 0600) == 0) {
      /* Without a writer, opening a FIFO for reading would block for ever. */
      CHECK_STATUS(nnrt_model_load(ctx, fifo, &m), NNRT_ERR_IO, "FIFO");
      unlink(fifo);
    }
    rmdir(dir);
  }
  CHECK(m == NULL);
  {
    nnrt_dataset *d = NULL;
    CHECK_STATUS(nnrt_dataset_load(ctx, "{\"format\": \"csv\", \"path\": \"/dev/zero\"}", &d), NNRT_ERR_IO, "device");
    CHECK(d == NULL);
  }
}

int main(int argc, char **argv) {
  CHECK_OK(nnrt_context_create(argc > 1 ? argv[1] : NULL, &ctx));
  test_deep_nesting();
  test_huge_numbers();
  test_duplicate_keys();
  test_size_overflow();
  test_dim_past_2_31(argc > 1 ? argv[1] : NULL);
  test_integer_mean();
  test_special_files();
  nnrt_context_release(ctx);
  return c_test_finish("test_hostile");
}
