/* Communicator plugins are found, loaded and reported like backends (no launcher needed):
** nnrt_context_describe lists each libnnrt-comm-*.so with whether it loaded (and, for the two broken
** test plugins, why not); a trainer asking for
** a missing communicator fails with NNRT_ERR_BACKEND saying where it looked; the NCCL plugin loads
** and, without a GPU, refuses to start with a clear reason; the Gloo plugin, outside its launcher,
** names the environment variable it missed.
**   test_comm_plugins <plugin names expected to load, e.g. mpi nccl> */
#include <stdio.h>
#include <string.h>

#include "c_test.h"

int main(int argc, char **argv) {
  nnrt_context *ctx = NULL;
  nnrt_model *m = NULL;
  nnrt_trainer *t = NULL;
  static char describe[65536];
  size_t len = 0;
  int i;
  CHECK_OK(nnrt_context_create("{\"backend\": \"reference\"}", &ctx));
  if (!ctx) return c_test_finish("test_comm_plugins");
  CHECK_OK(nnrt_context_describe(ctx, describe, sizeof describe, &len));
  CHECK(strstr(describe, "\"comms\":[") != NULL);
  for (i = 1; i < argc; ++i) {
    char entry[128];
    const char *at;
    snprintf(entry, sizeof entry, "\"name\":\"%s\"", argv[i]);
    at = strstr(strstr(describe, "\"comms\":["), entry);
    CHECK(at != NULL);
    /* Keys are sorted: "loaded" comes before "name" within an entry; look back to its start. */
    if (at) {
      const char *open = at;
      while (open > describe && *open != '{') --open;
      CHECK(strncmp(open, "{\"error\":\"\",", 12) == 0);
      CHECK(strstr(open, "\"loaded\":true") != NULL && strstr(open, "\"loaded\":true") < at);
      if (strncmp(open, "{\"error\":\"\",", 12) != 0) fprintf(stderr, "comm entry: %.300s\n", open);
    }
  }
  /* The broken test plugins beside the real ones: listed, not loaded, with their reason. */
  CHECK(strstr(describe, "\"error\":\"built for communicator ABI 99, this nnrt has 1\",\"loaded\":false,"
                         "\"name\":\"wrongabi\"") != NULL);
  CHECK(strstr(describe, "\"error\":\"refusing: the test engine is switched off\",\"loaded\":false,"
                         "\"name\":\"refusing\"") != NULL);
  CHECK_OK(nnrt_model_create(ctx, "{\"input\": [2], \"layers\": [{\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}", &m));
  CHECK_STATUS(nnrt_trainer_create(m, "{\"distributed\": {\"comm\": \"nosuch\"}}", &t), NNRT_ERR_BACKEND,
               "no communicator plugin \"nosuch\": expected a file libnnrt-comm-nosuch.so");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"distributed\": {\"comm\": \"wrongabi\"}}", &t), NNRT_ERR_BACKEND,
               "did not load: built for communicator ABI 99");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"distributed\": {\"comm\": \"mpi\", \"timeout_s\": 0}}", &t),
               NNRT_ERR_INVALID_ARGUMENT, "timeout_s");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"distributed\": {\"engine\": \"mpi\"}}", &t), NNRT_ERR_INVALID_ARGUMENT,
               "engine");
  CHECK_STATUS(nnrt_trainer_create(m, "{\"distributed\": {\"compression\": \"fp8\"}}", &t), NNRT_ERR_INVALID_ARGUMENT,
               "expected \"none\", \"f16\" or \"bf16\"");
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "gloo") == 0) {
      /* Not started by gloo_launch.sh: the plugin says which variable it expected. */
      CHECK_STATUS(nnrt_trainer_create(m, "{\"distributed\": {\"comm\": \"gloo\"}}", &t), NNRT_ERR_BACKEND,
                   "NNRT_GLOO_RANK is not set: the gloo communicator needs NNRT_GLOO_RANK, NNRT_GLOO_SIZE and");
    }
    if (strcmp(argv[i], "nccl") == 0) {
      /* Without a GPU (as here): a status and the reason; with one, this machine runs it. */
      nnrt_status s = nnrt_trainer_create(m, "{\"distributed\": {\"comm\": \"nccl\"}}", &t);
      printf("nccl: %s: %s\n", nnrt_status_name(s), nnrt_last_error());
      CHECK(s == NNRT_ERR_NO_DEVICE || s == NNRT_ERR_UNSUPPORTED || s == NNRT_ERR_BACKEND);
      if (s == NNRT_OK) nnrt_trainer_release(t);
    }
  }
  nnrt_model_release(m);
  nnrt_context_release(ctx);
  return c_test_finish("test_comm_plugins");
}
