// The library's version as text, "MAJOR.MINOR.PATCH", made from nnrt.h's version macros.
#pragma once

#include "nnrt/nnrt.h"

#define NNRT_VERSION_TEXT2(x) #x
#define NNRT_VERSION_TEXT(x) NNRT_VERSION_TEXT2(x)

namespace nnrt {

inline constexpr const char *kVersionString = NNRT_VERSION_TEXT(NNRT_VERSION_MAJOR) "." NNRT_VERSION_TEXT(
    NNRT_VERSION_MINOR) "." NNRT_VERSION_TEXT(NNRT_VERSION_PATCH);

}  // namespace nnrt
