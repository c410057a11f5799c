/* Array math through nnrt's C API: matmul, broadcasting, a reduction, softmax and a bf16 cast.
**
**   cc array_math.c $(pkg-config --cflags --libs nnrt) -o array_math && ./array_math
*/
#include <stdio.h>
#include <stdlib.h>

#include <nnrt/nnrt.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    nnrt_status s_ = (call);                                                             \
    if (s_ != NNRT_OK) {                                                                 \
      fprintf(stderr, "%s failed: %s: %s\n", #call, nnrt_status_name(s_), nnrt_last_error()); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static void print_matrix(const char *name, const nnrt_array *a) {
  int64_t shape[NNRT_MAX_DIMS];
  int32_t ndim;
  float values[64];
  size_t nbytes;
  int64_t rows, cols, r, c;
  CHECK(nnrt_array_info(a, NULL, &ndim, shape));
  CHECK(nnrt_array_nbytes(a, &nbytes));
  CHECK(nnrt_array_to_host(a, values, nbytes));
  rows = ndim == 2 ? shape[0] : 1;
  cols = ndim == 2 ? shape[1] : (ndim == 1 ? shape[0] : 1);
  printf("%s =\n", name);
  for (r = 0; r < rows; ++r) {
    printf("  ");
    for (c = 0; c < cols; ++c) printf("%9.4f", values[r * cols + c]);
    printf("\n");
  }
}

int main(void) {
  nnrt_context *ctx = NULL;
  nnrt_array *a = NULL, *b = NULL, *bias = NULL, *ab = NULL, *shifted = NULL, *sums = NULL, *probs = NULL;
  nnrt_array *half = NULL;
  const nnrt_array *in[2];
  int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sbias[1] = {2};
  float va[6] = {1, 2, 3, 4, 5, 6}, vb[6] = {1, 0, 0, 1, 1, 1}, vbias[2] = {0.5f, -0.5f};
  uint16_t halves[4];
  char describe[4096];
  size_t len;

  CHECK(nnrt_context_create(NULL, &ctx));
  CHECK(nnrt_context_describe(ctx, describe, sizeof describe, &len));
  printf("nnrt %s; context: %.120s...\n\n", nnrt_version_string(), describe);

  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, sa, va, sizeof va, &a));
  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, sb, vb, sizeof vb, &b));
  CHECK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 1, sbias, vbias, sizeof vbias, &bias));

  in[0] = a;
  in[1] = b;
  CHECK(nnrt_op(ctx, "matmul", in, 2, NULL, &ab, 1));
  print_matrix("a x b", ab);

  in[0] = ab;
  in[1] = bias; /* [2] broadcasts over the rows of [2, 2] */
  CHECK(nnrt_op(ctx, "add", in, 2, NULL, &shifted, 1));
  print_matrix("a x b + bias", shifted);

  in[0] = shifted;
  CHECK(nnrt_op(ctx, "sum", in, 1, "{\"axes\": [1]}", &sums, 1));
  print_matrix("row sums", sums);

  CHECK(nnrt_op(ctx, "softmax", in, 1, "{\"axis\": -1}", &probs, 1));
  print_matrix("softmax", probs);

  CHECK(nnrt_op(ctx, "cast", in, 1, "{\"dtype\": \"bf16\"}", &half, 1));
  CHECK(nnrt_array_to_host(half, halves, sizeof halves));
  printf("as bf16 bits = %04x %04x %04x %04x\n", halves[0], halves[1], halves[2], halves[3]);

  /* Errors come back as a status and a message, never a crash. */
  in[0] = a;
  in[1] = a;
  if (nnrt_op(ctx, "matmul", in, 2, NULL, &ab, 1) != NNRT_OK) printf("\nexpected error: %s\n", nnrt_last_error());

  nnrt_array_release(half);
  nnrt_array_release(probs);
  nnrt_array_release(sums);
  nnrt_array_release(shifted);
  nnrt_array_release(ab);
  nnrt_array_release(bias);
  nnrt_array_release(b);
  nnrt_array_release(a);
  nnrt_context_release(ctx);
  return 0;
}
