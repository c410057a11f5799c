/* Arrays: create, copy in and out, info, bad input. */
#include <stdint.h>
#include <stdlib.h>

#include "c_test.h"

int main(void) {
  nnrt_context *ctx = NULL;
  nnrt_array *a = NULL, *keep = (nnrt_array *)0x1;
  int64_t shape[NNRT_MAX_DIMS + 1] = {2, 3, 1, 1, 1, 1, 1, 1, 1};
  int64_t got[NNRT_MAX_DIMS];
  float data[6] = {1, 2, 3, 4, 5, 6}, back[6] = {0};
  nnrt_dtype dt;
  int32_t nd;
  size_t nb;
  int i;

  CHECK_OK(nnrt_context_create(NULL, &ctx));

  /* zero-filled create, info, nbytes */
  CHECK_OK(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, shape, &a));
  CHECK_OK(nnrt_array_info(a, &dt, &nd, got));
  CHECK(dt == NNRT_DTYPE_F32 && nd == 2 && got[0] == 2 && got[1] == 3);
  CHECK_OK(nnrt_array_info(a, NULL, NULL, NULL));
  CHECK_OK(nnrt_array_nbytes(a, &nb));
  CHECK(nb == 24);
  CHECK_OK(nnrt_array_to_host(a, back, sizeof back));
  for (i = 0; i < 6; ++i) CHECK(back[i] == 0);
  nnrt_array_release(a);

  /* round trip */
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, data, sizeof data, &a));
  CHECK_OK(nnrt_array_to_host(a, back, sizeof back));
  CHECK(memcmp(data, back, sizeof data) == 0);

  /* to_host with the wrong size names both sizes */
  CHECK_STATUS(nnrt_array_to_host(a, back, 20), NNRT_ERR_INVALID_ARGUMENT, "24 bytes");
  CHECK_STATUS(nnrt_array_to_host(a, back, 20), NNRT_ERR_INVALID_ARGUMENT, "20");
  CHECK_STATUS(nnrt_array_to_host(a, NULL, 24), NNRT_ERR_INVALID_ARGUMENT, "data is NULL");
  CHECK_STATUS(nnrt_array_to_host(NULL, back, 24), NNRT_ERR_INVALID_ARGUMENT, "a is NULL");
  CHECK_STATUS(nnrt_array_nbytes(a, NULL), NNRT_ERR_INVALID_ARGUMENT, "nbytes is NULL");
  CHECK_STATUS(nnrt_array_nbytes(NULL, &nb), NNRT_ERR_INVALID_ARGUMENT, "a is NULL");
  CHECK_STATUS(nnrt_array_info(NULL, &dt, &nd, got), NNRT_ERR_INVALID_ARGUMENT, "a is NULL");
  CHECK_STATUS(nnrt_array_info((nnrt_array *)ctx, &dt, &nd, got), NNRT_ERR_INVALID_ARGUMENT, "not a live nnrt_array");
  nnrt_array_release(a);

  /* scalars and empty arrays */
  {
    double v = 2.5, w = 0;
    int64_t empty_shape[2] = {0, 4};
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F64, 0, NULL, &v, sizeof v, &a));
    CHECK_OK(nnrt_array_info(a, NULL, &nd, NULL));
    CHECK(nd == 0);
    CHECK_OK(nnrt_array_to_host(a, &w, sizeof w));
    CHECK(w == 2.5);
    nnrt_array_release(a);
    CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, empty_shape, NULL, 0, &a));
    CHECK_OK(nnrt_array_nbytes(a, &nb));
    CHECK(nb == 0);
    CHECK_OK(nnrt_array_to_host(a, NULL, 0));
    nnrt_array_release(a);
  }

  /* every dtype round-trips its bytes */
  {
    unsigned char raw[48], out[48];
    int t;
    for (i = 0; i < 48; ++i) raw[i] = (unsigned char)(i & 1);
    for (t = NNRT_DTYPE_F32; t <= NNRT_DTYPE_BOOL; ++t) {
      size_t n = 6 * nnrt_dtype_size((nnrt_dtype)t);
      CHECK_OK(nnrt_array_from_host(ctx, (nnrt_dtype)t, 2, shape, raw, n, &a));
      CHECK_OK(nnrt_array_to_host(a, out, n));
      CHECK(memcmp(raw, out, n) == 0);
      nnrt_array_release(a);
    }
  }

  /* bad input: each gets its status, out untouched */
  CHECK_STATUS(nnrt_array_create(NULL, NNRT_DTYPE_F32, 2, shape, &keep), NNRT_ERR_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, shape, NULL), NNRT_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, -1, shape, &keep), NNRT_ERR_INVALID_ARGUMENT, "rank");
  CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, NNRT_MAX_DIMS + 1, shape, &keep), NNRT_ERR_INVALID_ARGUMENT,
               "rank from 0 to 8");
  CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, NULL, &keep), NNRT_ERR_INVALID_ARGUMENT, "shape is NULL");
  {
    int64_t neg[2] = {2, -3}, huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 4};
    CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, 2, neg, &keep), NNRT_ERR_INVALID_ARGUMENT, "-3");
    CHECK_STATUS(nnrt_array_create(ctx, NNRT_DTYPE_F32, 3, huge, &keep), NNRT_ERR_INVALID_ARGUMENT, "overflows");
  }
  CHECK_STATUS(nnrt_array_create(ctx, (nnrt_dtype)0, 2, shape, &keep), NNRT_ERR_DTYPE, "dtype");
  CHECK_STATUS(nnrt_array_create(ctx, (nnrt_dtype)42, 2, shape, &keep), NNRT_ERR_DTYPE, "got 42");
  CHECK_STATUS(nnrt_array_from_host(ctx, (nnrt_dtype)42, 2, shape, data, sizeof data, &keep), NNRT_ERR_DTYPE, "got 42");
  CHECK_STATUS(nnrt_array_from_host(ctx, (nnrt_dtype)0, 2, shape, data, sizeof data, &keep), NNRT_ERR_DTYPE, "dtype");
  CHECK_STATUS(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, data, 20, &keep), NNRT_ERR_INVALID_ARGUMENT,
               "needs 24 bytes");
  CHECK_STATUS(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, NULL, 24, &keep), NNRT_ERR_INVALID_ARGUMENT,
               "data is NULL");
  {
    unsigned char bools[6] = {0, 1, 2, 0, 1, 0};
    CHECK_STATUS(nnrt_array_from_host(ctx, NNRT_DTYPE_BOOL, 2, shape, bools, 6, &keep), NNRT_ERR_INVALID_ARGUMENT,
                 "bool element 2");
  }
  CHECK(keep == (nnrt_array *)0x1);

  /* An array keeps its context alive: release the context first. */
  CHECK_OK(nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, data, sizeof data, &a));
  nnrt_context_release(ctx);
  memset(back, 0, sizeof back);
  CHECK_OK(nnrt_array_to_host(a, back, sizeof back));
  CHECK(memcmp(data, back, sizeof data) == 0);
  nnrt_array_release(a);
  nnrt_array_release(NULL);
  return c_test_finish("test_array");
}
