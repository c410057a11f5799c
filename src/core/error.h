// Errors inside nnrt: an exception that carries a status, and the thread-local message that the C API
// hands out through nnrt_last_error(). Internals throw nnrt::Error; only src/api catches.
#pragma once

#include <string>
#include <utility>

#include "nnrt/nnrt.h"
#include "nnrt/plugin_kit.hpp"

namespace nnrt {

// An exception that carries a status: the plugin kit's (nnrt/plugin_kit.hpp), so that libnnrt and
// its plugins throw the same kind of error. cat("expected ", n, " dims, got ", m) concatenates
// anything streamable; fail(status, parts...) throws Error(status, cat(parts...)).
using plugin_kit::cat;
using plugin_kit::Error;
using plugin_kit::fail;

// Runs `fn` at a plain-C boundary (the ONNX converter's host callbacks): an exception becomes the
// status it stands for (an Error its own, std::bad_alloc NNRT_ERR_OUT_OF_MEMORY, anything else
// NNRT_ERR_INTERNAL), its text written into `message`. The plugin kit's barrier, as the converter
// uses it on its side.
struct CBoundary {};
template <class Fn>
nnrt_status status_of(char *message, size_t size, Fn &&fn) {
  return plugin_kit::guarded_into<CBoundary>(message, size, std::forward<Fn>(fn));
}

// The calling thread's last error message, for nnrt_last_error().
void set_last_error(const std::string &message);
const char *last_error();

const char *status_name(nnrt_status status);

}  // namespace nnrt
