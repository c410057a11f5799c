/* The real cuDNN plugin, built here, as the host sees it. It must always load (its libraries are
** present wherever it was built). Without a usable GPU (this test's usual case: a CI machine with
** the CUDA toolkit but no driver) its probe reports no device with the driver's reason, "auto"
** selects a CPU backend and the context description says why the GPU was not chosen,
** "backend": "cudnn" is NNRT_ERR_NO_DEVICE with that reason, and neither cuBLASLt nor cuDNN is mapped
** into the process (the plugin loads the backend, which links them, only where there is a GPU).
** With a GPU, the backend (libnnrt-cudnn.so) is loaded, "auto" selects cudnn under the default
** priorities and a CPU backend when the CPU priority is higher. */
#include <stdlib.h>

#include "../c/c_test.h"

/* The JSON object of the cudnn plugin in a context description, cut at its end; NULL if absent. */
static char *cudnn_plugin_entry(const char *d) {
  const char *start = strstr(d, "\"name\":\"cudnn\"");
  const char *open, *close;
  char *entry;
  if (!start) return NULL;
  for (open = start; open > d && *open != '{'; --open) {
  }
  close = strchr(start, '}');
  if (!close) return NULL;
  entry = (char *)malloc((size_t)(close - open) + 2);
  memcpy(entry, open, (size_t)(close - open) + 1);
  entry[close - open + 1] = 0;
  return entry;
}

/* 1 if a file whose name contains `name` is mapped into this process; -1 if that cannot be read. */
static int mapped(const char *name) {
  char line[4096];
  int found = 0;
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return -1;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, name) != NULL;
  fclose(maps);
  return found;
}

int main(void) {
  nnrt_context *ctx = NULL;
  char *d, *entry;
  int gpu;

  CHECK_OK(nnrt_context_create(NULL, &ctx));
  if (!ctx) return c_test_finish("test_cudnn_selection");
  d = c_test_describe(ctx);
  entry = cudnn_plugin_entry(d);
  CHECK(entry != NULL);
  if (!entry) {
    fprintf(stderr, "no cudnn plugin in the description: %s\n", d);
    free(d);
    nnrt_context_release(ctx);
    return c_test_finish("test_cudnn_selection");
  }
  CHECK(strstr(entry, "\"loaded\":true") != NULL);
  gpu = strstr(entry, "\"usable\":true") != NULL;
  if (!gpu) {
    /* No device: the reason is the CUDA driver's, and auto chose a CPU backend. */
    printf("no usable GPU here: %s\n", entry);
    CHECK(strstr(entry, "no CUDA device: the") != NULL && strstr(entry, "driver") != NULL);
    CHECK(strstr(d, "\"backend\":\"cudnn\"") == NULL);
    CHECK_STATUS(nnrt_context_create("{\"backend\": \"cudnn\"}", &ctx), NNRT_ERR_NO_DEVICE, "no CUDA device");
    if (mapped("libnnrt-backend-cudnn") == 1) {
      CHECK(mapped("libcublas") == 0);
      CHECK(mapped("libcudnn") == 0);
      CHECK(mapped("libnnrt-cudnn.so") == 0);
    } else {
      printf("/proc/self/maps does not show the plugin here: the check of mapped CUDA libraries is skipped\n");
    }
  }
  free(entry);
  free(d);
  nnrt_context_release(ctx);

  if (gpu) {
    CHECK(mapped("libnnrt-cudnn.so") != 0);
    CHECK_OK(nnrt_context_create(NULL, &ctx));
    d = c_test_describe(ctx);
    CHECK(strstr(d, "\"backend\":\"cudnn\"") != NULL);
    free(d);
    nnrt_context_release(ctx);
    setenv("NNRT_BACKEND_PRIORITY_CPU", "200", 1);
    CHECK_OK(nnrt_context_create(NULL, &ctx));
    d = c_test_describe(ctx);
    CHECK(strstr(d, "\"backend\":\"cudnn\"") == NULL);
    free(d);
    nnrt_context_release(ctx);
    unsetenv("NNRT_BACKEND_PRIORITY_CPU");
    CHECK_STATUS(nnrt_context_create("{\"backend\": \"cudnn\", \"device\": 4096}", &ctx), NNRT_ERR_NO_DEVICE,
                 "does not exist");
  }
  return c_test_finish("test_cudnn_selection");
}
