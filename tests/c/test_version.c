/* Version, status names, last error, dtype sizes and the log callback. */
#include <stdlib.h>

#include "c_test.h"

static int log_calls = 0;
static int last_level = -1;
static void capture_log(int level, const char *message, void *user) {
  (void)message;
  ++*(int *)user;
  last_level = level;
}

int main(void) {
  char expected[32];
  nnrt_context *ctx = NULL;

  CHECK(nnrt_abi_version() == NNRT_ABI_VERSION);
  sprintf(expected, "%d.%d.%d", NNRT_VERSION_MAJOR, NNRT_VERSION_MINOR, NNRT_VERSION_PATCH);
  CHECK(strcmp(nnrt_version_string(), expected) == 0);

  CHECK(strcmp(nnrt_status_name(NNRT_OK), "NNRT_OK") == 0);
  CHECK(strcmp(nnrt_status_name(NNRT_ERR_SHAPE), "NNRT_ERR_SHAPE") == 0);
  CHECK(strcmp(nnrt_status_name(NNRT_ERR_INTERNAL), "NNRT_ERR_INTERNAL") == 0);
  CHECK(strcmp(nnrt_status_name((nnrt_status)99), "NNRT_ERR_UNKNOWN") == 0);
  CHECK(strcmp(nnrt_status_name((nnrt_status)-1), "NNRT_ERR_UNKNOWN") == 0);

  CHECK(strcmp(nnrt_last_error(), "") == 0);

  CHECK(nnrt_dtype_size(NNRT_DTYPE_F32) == 4);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_F64) == 8);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_F16) == 2);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_BF16) == 2);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_I32) == 4);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_I64) == 8);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_U8) == 1);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_BOOL) == 1);
  CHECK(nnrt_dtype_size(NNRT_DTYPE_I8) == 1);
  CHECK(nnrt_dtype_size((nnrt_dtype)0) == 0);
  CHECK(nnrt_dtype_size((nnrt_dtype)10) == 0);

  /* A failure sets a message that names the function; a later success does not clear it. */
  CHECK_STATUS(nnrt_context_create("{\"threads\": 0}", &ctx), NNRT_ERR_INVALID_ARGUMENT, "nnrt_context_create");
  CHECK(strstr(nnrt_last_error(), "threads") != NULL);
  CHECK_OK(nnrt_context_create("{\"threads\": 1}", &ctx));
  CHECK(strstr(nnrt_last_error(), "threads") != NULL);

  /* Log callback: warnings reach it; below the minimum level nothing does. A plugin-free context
  ** with an unusable priority variable logs a warning. */
  nnrt_set_log_callback(capture_log, &log_calls, NNRT_LOG_WARN);
  setenv("NNRT_BACKEND_PRIORITY_CPU", "lots", 1);
  {
    nnrt_context *c2 = NULL;
    CHECK_OK(nnrt_context_create(NULL, &c2));
    nnrt_context_release(c2);
  }
  CHECK(log_calls > 0);
  CHECK(last_level == NNRT_LOG_WARN);
  log_calls = 0;
  nnrt_set_log_callback(capture_log, &log_calls, NNRT_LOG_ERROR);
  {
    nnrt_context *c2 = NULL;
    CHECK_OK(nnrt_context_create(NULL, &c2));
    nnrt_context_release(c2);
  }
  CHECK(log_calls == 0);
  unsetenv("NNRT_BACKEND_PRIORITY_CPU");
  nnrt_set_log_callback(NULL, NULL, NNRT_LOG_WARN);

  nnrt_context_release(ctx);
  nnrt_context_release(NULL);
  return c_test_finish("test_version");
}
