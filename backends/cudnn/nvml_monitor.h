// GPU monitoring through NVML (utilisation, memory in use, temperature), loaded with dlopen when
// first asked for: NVML ships with the driver, not the toolkit, so a machine without a driver has
// none and that is a line of text, never an error.
#pragma once

#include <string>

namespace nnrt::cudnn {

// "NVML: GPU 0: 37% busy, 1.2 GiB of 80.0 GiB in use, 41 C", or why NVML cannot say
// ("NVML not available: libnvidia-ml.so.1: cannot open shared object file ...").
std::string nvml_status_line(int device);

// Whether NVML loaded and initialised, and if not, why ("" when it did).
std::string nvml_unavailable_reason();

}  // namespace nnrt::cudnn
