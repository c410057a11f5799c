/* A program linked statically against libnnrt.a: no libnnrt.so is needed at run time.
**
**   cc static_link.c $(pkg-config --cflags nnrt) -Wl,-Bstatic -lnnrt -Wl,-Bdynamic \
**      $(pkg-config --static --libs-only-l nnrt | sed 's/-lnnrt//') -o static_link
*/
#include <stdio.h>
#include <string.h>

#include <nnrt/nnrt.h>

int main(void) {
  nnrt_context *ctx = NULL;
  nnrt_array *x = NULL, *y = NULL;
  const nnrt_array *in[2];
  int64_t shape[2] = {2, 2};
  float v[4] = {1, 2, 3, 4}, out[4];
  char describe[256];
  size_t len;

  if (nnrt_context_create("{\"threads\": 1}", &ctx) != NNRT_OK) {
    fprintf(stderr, "nnrt_context_create: %s\n", nnrt_last_error());
    return 1;
  }
  nnrt_context_describe(ctx, describe, sizeof describe, &len);
  if (nnrt_array_from_host(ctx, NNRT_DTYPE_F32, 2, shape, v, sizeof v, &x) != NNRT_OK) return 1;
  in[0] = x;
  in[1] = x;
  if (nnrt_op(ctx, "matmul", in, 2, NULL, &y, 1) != NNRT_OK) {
    fprintf(stderr, "matmul: %s\n", nnrt_last_error());
    return 1;
  }
  nnrt_array_to_host(y, out, sizeof out);
  printf("statically linked nnrt %s (ABI %u): [[1,2],[3,4]]^2 = [[%g,%g],[%g,%g]]\n", nnrt_version_string(),
         nnrt_abi_version(), out[0], out[1], out[2], out[3]);
  nnrt_array_release(y);
  nnrt_array_release(x);
  nnrt_context_release(ctx);
  return out[0] == 7 && out[1] == 10 && out[2] == 15 && out[3] == 22 ? 0 : 1;
}
