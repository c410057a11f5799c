// How the reference backend reports a failure: code below the table throws OpError (with the
// status and a message that says what was expected and what was given); the plugin kit's barrier
// around the table functions passes the message to host->set_error and returns the status.
#pragma once

#include "nnrt/kernels/dtype_info.h"

#include <string>

#include "nnrt/nnrt_backend.h"
#include "nnrt/plugin_kit.hpp"

namespace nnrt::reference {

// A plugin kit error (nnrt/plugin_kit.hpp), so that the kit's barrier returns its status.
class OpError : public plugin_kit::Error {
 public:
  using plugin_kit::Error::Error;
};

// Throws OpError with a printf-style message.
[[noreturn]] void fail(nnrt_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

// Names for messages: "f32", "CONV2D", "[2, 3, 4]", "f32 [2, 3] strides [3, 1]".
using kernels::dtype_name;  // "f32", ...; "invalid" for a value that is not a dtype
const char *op_kind_name(int32_t kind);
std::string dims_string(const int64_t *dims, int ndim);
std::string dims_string(const nnrt_tensor_desc &t);
std::string tensor_string(const nnrt_tensor_desc &t);

}  // namespace nnrt::reference
