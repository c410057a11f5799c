// The run-time check of the vendor libraries against the versions the plugin was built for.
//
// cuDNN and cuBLAS keep their ABI within a major version and add to it in minor versions, so a
// plugin built against X.Y runs with X.Z for Z >= Y. Anything else is refused when the plugin
// loads, with both versions named, instead of failing later in an op with a missing symbol or a
// changed struct. Pure functions, so that the rule is unit-tested without the libraries.
#pragma once

#include <string>

namespace nnrt::cudnn {

struct LibraryVersion {
  int major = 0, minor = 0, patch = 0;
};

// cuDNN 9 writes its version as major * 10000 + minor * 100 + patch (cudnnGetVersion()).
LibraryVersion cudnn_version_from_int(long v);
// cuBLAS writes its version as major * 10000 + minor * 100 + patch (cublasLtGetVersion()).
LibraryVersion cublas_version_from_int(long v);

std::string version_text(const LibraryVersion &v);  // "9.19.0"

// "" when a library found at run time can serve a plugin built for `built`; otherwise why not,
// naming the library and both versions.
std::string version_problem(const char *library, const LibraryVersion &built, const LibraryVersion &found);

}  // namespace nnrt::cudnn
