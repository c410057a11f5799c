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
  nvmlReturn_t (*device_by_pci_bus_id)(const char *, nvmlDevice_t *) = nullptr;  // may be absent
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
    bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", &n.device_by_pci_bus_id);
    nvmlReturn_t r = init();
    if (r != 0) n.unavailable = std::string("NVML not available: nvmlInit failed: ") + n.error_string(r);
  });
  return n;
}

}  // namespace

std::string nvml_unavailable_reason() { return nvml().unavailable; }

NvmlReading nvml_read(const std::string &pci_bus_id, int index) {
  NvmlReading out;
  const Nvml &n = nvml();
  if (!n.unavailable.empty()) {
    out.error = n.unavailable;
    return out;
  }
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = !pci_bus_id.empty() && n.device_by_pci_bus_id
                       ? n.device_by_pci_bus_id(pci_bus_id.c_str(), &d)
                       : n.device_by_index(static_cast<unsigned>(index), &d);
  if (r != 0) {
    out.error = std::string("no NVML handle: ") + n.error_string(r);
    return out;
  }
  nvmlUtilization_t u{};
  nvmlMemory_t m{};
  unsigned int celsius = 0;
  if (n.utilization(d, &u) == 0) out.utilization_percent = static_cast<int>(u.gpu);
  if (n.memory(d, &m) == 0) {
    out.memory_used_bytes = static_cast<long long>(m.used);
    out.memory_total_bytes = static_cast<long long>(m.total);
  }
  if (n.temperature(d, kNvmlTemperatureGpu, &celsius) == 0) out.temperature_celsius = static_cast<int>(celsius);
  return out;
}

std::string nvml_status_line(const std::string &pci_bus_id, int device) {
  NvmlReading r = nvml_read(pci_bus_id, device);
  if (r.error.rfind("NVML not available", 0) == 0) return r.error;
  std::string s = "NVML: GPU " + std::to_string(device) + ":";
  if (!r.error.empty()) return s + " " + r.error;
  char line[160];
  if (r.utilization_percent >= 0) {
    std::snprintf(line, sizeof line, " %d%% busy,", r.utilization_percent);
    s += line;
  }
  if (r.memory_total_bytes >= 0) {
    std::snprintf(line, sizeof line, " %.1f GiB of %.1f GiB in use,", r.memory_used_bytes / 1073741824.0,
                  r.memory_total_bytes / 1073741824.0);
    s += line;
  }
  if (r.temperature_celsius >= 0) s += " " + std::to_string(r.temperature_celsius) + " C";
  if (r.utilization_percent < 0 && r.memory_total_bytes < 0 && r.temperature_celsius < 0) s += " no readings";
  if (s.back() == ',') s.pop_back();
  return s;
}

}  // namespace nnrt::cudnn
