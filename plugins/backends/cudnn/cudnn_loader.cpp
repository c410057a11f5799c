// libnnrt-backend-cudnn.so: the file the host discovers for the cuDNN backend. It links no CUDA
// library. It asks the CUDA driver whether there is a device, and only then loads the backend
// itself (libnnrt-cudnn.so, in the same folder) and hands its function table to the host.
//
// Why: the backend links cuBLASLt, whose loading maps and relocates several hundred megabytes.
// Every context on a machine without a GPU paid for it, about 200 MB of resident memory and 0.3 s
// (AMD EPYC, CUDA 13), for a plugin that would only report "no device". Without a device this file
// returns a table whose probe gives the reason; the host lists the backend as present with no
// device and never opens it.
//
// The driver (libcuda.so.1, installed with the GPU driver, not with the toolkit) is opened with
// dlopen, and only cuInit, cuDeviceGetCount and the error texts are used.
#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "cudnn_plugin.h"
#include "nnrt/nnrt_backend.h"

namespace {

// The backend's library, beside this file.
constexpr const char *kBackendLibrary = "libnnrt-cudnn.so";

// Why there is no device; written once, in nnrt_backend_entry.
std::string g_no_device;

// Empty when the driver reports at least one device; otherwise why not.
std::string driver_problem() {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    const char *why = dlerror();
    return std::string("no CUDA device: the CUDA driver did not load (") + (why ? why : "libcuda.so.1") + ")";
  }
  // The driver stays loaded: the backend's CUDA runtime uses it, and without a device it is small.
  auto init = reinterpret_cast<decltype(&cuInit)>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<decltype(&cuDeviceGetCount)>(dlsym(driver, "cuDeviceGetCount"));
  auto name = reinterpret_cast<decltype(&cuGetErrorName)>(dlsym(driver, "cuGetErrorName"));
  auto text = reinterpret_cast<decltype(&cuGetErrorString)>(dlsym(driver, "cuGetErrorString"));
  if (!init || !count) return "no CUDA device: libcuda.so.1 has no cuInit or cuDeviceGetCount";
  CUresult e = init(0);
  int n = 0;
  if (e == CUDA_SUCCESS) e = count(&n);
  if (e != CUDA_SUCCESS) {
    const char *e_name = nullptr, *e_text = nullptr;
    if (name) name(e, &e_name);
    if (text) text(e, &e_text);
    char buf[512];
    std::snprintf(buf, sizeof buf, "no CUDA device: the driver returned %d, %s (%s)", static_cast<int>(e),
                  e_name ? e_name : "?", e_text ? e_text : "no description");
    return buf;
  }
  if (n <= 0) return "no CUDA device: the driver found 0 devices";
  return "";
}

// The folder of this file, with symbolic links resolved, ending in '/'; empty if unknown.
std::string own_folder() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&driver_problem), &info) || !info.dli_fname) return "";
  char resolved[PATH_MAX];
  if (!realpath(info.dli_fname, resolved)) return "";
  std::string path(resolved);
  return path.substr(0, path.rfind('/') + 1);
}

// ---- the table without a device: its probe says why; the host opens nothing else -------------

int32_t probe_no_device(int32_t *device_count, char *reason, size_t cap) {
  *device_count = 0;
  std::snprintf(reason, cap, "%s", g_no_device.c_str());
  return 0;
}

nnrt_status no_device() { return NNRT_ERR_NO_DEVICE; }

const nnrt_backend_v1 *no_device_table() {
  static nnrt_backend_v1 table = [] {
    nnrt_backend_v1 t = nnrt::plugin_kit::backend_table<nnrt::cudnn::Cudnn>();
    t.name = "cudnn";
    t.version = "cuDNN backend (its CUDA libraries load only where the driver finds a GPU)";
    t.kind = NNRT_DEVICE_GPU;
    t.probe = probe_no_device;
    t.device_props = [](int32_t, nnrt_device_props *) { return no_device(); };
    t.open = [](const nnrt_device_config *, nnrt_backend_instance **) { return no_device(); };
    t.close = [](nnrt_backend_instance *) {};
    t.mem_alloc = [](nnrt_backend_instance *, size_t, void **) { return no_device(); };
    t.mem_free = [](nnrt_backend_instance *, void *) {};
    t.memcpy_async = [](nnrt_backend_instance *, void *, const void *, size_t, int32_t, nnrt_stream *) {
      return no_device();
    };
    t.memset_async = [](nnrt_backend_instance *, void *, int, size_t, nnrt_stream *) { return no_device(); };
    t.stream_create = [](nnrt_backend_instance *, nnrt_stream **) { return no_device(); };
    t.stream_destroy = [](nnrt_backend_instance *, nnrt_stream *) {};
    t.stream_synchronize = [](nnrt_backend_instance *, nnrt_stream *) { return no_device(); };
    t.supports = [](nnrt_backend_instance *, const nnrt_op_desc *) { return int32_t{0}; };
    t.op_create = [](nnrt_backend_instance *, const nnrt_op_desc *, nnrt_backend_op **, size_t *) {
      return no_device();
    };
    t.op_run = [](nnrt_backend_op *, const nnrt_op_args *) { return no_device(); };
    t.op_destroy = [](nnrt_backend_op *) {};
    return t;
  }();
  return &table;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi,
                                                                                          const nnrt_host_api *host) {
  // The backend's entry checks the host again; the checks here come first so that a host this
  // backend cannot serve is refused the same way with or without a GPU.
  if (!nnrt::plugin_kit::accept_host<nnrt::cudnn::Cudnn>(host_abi, host, NNRT_CUDNN_HOST_CALLS)) return nullptr;
  static std::once_flag once;
  static nnrt_backend_entry_fn backend_entry = nullptr;
  static std::string load_error;
  std::call_once(once, [] {
    g_no_device = driver_problem();
    if (!g_no_device.empty()) return;
    const std::string path = own_folder() + kBackendLibrary;
    void *backend = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!backend) {
      const char *why = dlerror();
      load_error = "the backend library " + path + " did not load: " + (why ? why : "unknown error");
      return;
    }
    backend_entry = reinterpret_cast<nnrt_backend_entry_fn>(dlsym(backend, "nnrt_backend_entry"));
    if (!backend_entry) load_error = path + " has no nnrt_backend_entry";
  });
  if (!g_no_device.empty()) return no_device_table();
  if (!backend_entry) {
    nnrt::plugin_kit::report<nnrt::cudnn::Cudnn>(nullptr, load_error);
    return nullptr;
  }
  return backend_entry(host_abi, host);
}
