// GPU monitoring through NVML (utilisation, memory in use, temperature), loaded with dlopen when
// first asked for: NVML ships with the driver, not the toolkit, so a machine without a driver has
// none and that is a line of text, never an error.
#pragma once

#include <string>

namespace nnrt::cudnn {

// One reading of a GPU; -1 for what NVML did not give. `error` says why there is none at all
// ("NVML not available: libnvidia-ml.so.1: cannot open shared object file ...").
struct NvmlReading {
  int utilization_percent = -1;
  int temperature_celsius = -1;
  long long memory_used_bytes = -1;
  long long memory_total_bytes = -1;
  std::string error;
};

// The GPU with this PCI bus id (as cudaDeviceGetPCIBusId writes it: CUDA's device numbers follow
// CUDA_VISIBLE_DEVICES, NVML's do not), or NVML's device `index` when pci_bus_id is empty.
NvmlReading nvml_read(const std::string &pci_bus_id, int index);

// "NVML: GPU 0: 37% busy, 1.2 GiB of 80.0 GiB in use, 41 C" for CUDA device `device` (named by
// its number in the line), or why NVML cannot say.
std::string nvml_status_line(const std::string &pci_bus_id, int device);

// Whether NVML loaded and initialised, and if not, why ("" when it did).
std::string nvml_unavailable_reason();

}  // namespace nnrt::cudnn
