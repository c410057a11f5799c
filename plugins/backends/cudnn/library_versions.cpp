#include "library_versions.h"

namespace nnrt::cudnn {

namespace {
LibraryVersion split_decimal(long v) {
  LibraryVersion r;
  if (v < 0) return r;
  r.major = static_cast<int>(v / 10000);
  r.minor = static_cast<int>(v / 100 % 100);
  r.patch = static_cast<int>(v % 100);
  return r;
}
}  // namespace

LibraryVersion cudnn_version_from_int(long v) { return split_decimal(v); }
LibraryVersion cublas_version_from_int(long v) { return split_decimal(v); }

std::string version_text(const LibraryVersion &v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

std::string version_problem(const char *library, const LibraryVersion &built, const LibraryVersion &found) {
  std::string both = std::string(library) + " " + version_text(found) + " was found, the plugin was built for " +
                     version_text(built);
  if (found.major != built.major) return both + ": the major versions differ";
  if (found.minor < built.minor) return both + ": the run-time library is older than the headers";
  return "";
}

}  // namespace nnrt::cudnn
