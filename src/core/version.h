// The library's version as text, "MAJOR.MINOR.PATCH", made from nnrt.h's version macros (by the
// plugin kit, so that the ONNX converter states the same version text it is checked against).
#pragma once

#include "nnrt/plugin_kit.hpp"

namespace nnrt {

using plugin_kit::kVersionString;

}  // namespace nnrt
