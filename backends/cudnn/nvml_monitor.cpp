#include "nvml_monitor.h"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>

namespace nnrt::cudnn {

namespace {

// The few NVML declarations used, as in nvml.h (a stable C API; the header is not in the toolkit).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st *;
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
constexpr int kNvmlTemperatureGpu = 0;

struct Nvml {
  std::string unavailable;  // "" when loaded
  nvmlReturn_t (*device_by_index)(unsigned int, nvmlDevice_t *) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *) = nullptr;
  const char *(*error_string)(nvmlReturn_t) = nullptr;
};

template <class F>
bool bind(void *lib, const char *name, F *out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

// Loaded once and kept for the life of the process (never dlclose'd, as plugins are not).
const Nvml &nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      n.unavailable = std::string("NVML not available: ") + (e ? e : "dlopen failed");
      return;
    }
    nvmlReturn_t (*init)() = nullptr;
    if (!bind(lib, "nvmlInit_v2", &init) || !bind(lib, "nvmlDeviceGetHandleByIndex_v2", &n.device_by_index) ||
        !bind(lib, "nvmlDeviceGetUtilizationRates", &n.utilization) ||
        !bind(lib, "nvmlDeviceGetMemoryInfo", &n.memory) || !bind(lib, "nvmlDeviceGetTemperature", &n.temperature) ||
        !bind(lib, "nvmlErrorString", &n.error_string)) {
      n.unavailable = "NVML not available: libnvidia-ml.so.1 lacks a function nnrt uses";
      return;
    }
    nvmlReturn_t r = init();
    if (r != 0) n.unavailable = std::string("NVML not available: nvmlInit failed: ") + n.error_string(r);
  });
  return n;
}

}  // namespace

std::string nvml_unavailable_reason() { return nvml().unavailable; }

std::string nvml_status_line(int device) {
  const Nvml &n = nvml();
  if (!n.unavailable.empty()) return n.unavailable;
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = n.device_by_index(static_cast<unsigned>(device), &d);
  if (r != 0) return "NVML: GPU " + std::to_string(device) + ": " + n.error_string(r);
  nvmlUtilization_t u{};
  nvmlMemory_t m{};
  unsigned int celsius = 0;
  char line[160];
  bool have_u = n.utilization(d, &u) == 0, have_m = n.memory(d, &m) == 0;
  bool have_t = n.temperature(d, kNvmlTemperatureGpu, &celsius) == 0;
  std::string s = "NVML: GPU " + std::to_string(device) + ":";
  if (have_u) {
    std::snprintf(line, sizeof line, " %u%% busy,", u.gpu);
    s += line;
  }
  if (have_m) {
    std::snprintf(line, sizeof line, " %.1f GiB of %.1f GiB in use,", m.used / 1073741824.0, m.total / 1073741824.0);
    s += line;
  }
  if (have_t) s += " " + std::to_string(celsius) + " C";
  if (!have_u && !have_m && !have_t) s += " no readings";
  if (s.back() == ',') s.pop_back();
  return s;
}

}  // namespace nnrt::cudnn
