// How the reference backend reports a failure: code below the table throws OpError (with the
// status and a message that says what was expected and what was given); the table functions catch
// it, pass the message to host->set_error and return the status. Nothing else crosses the ABI.
#pragma once

#include "nnrt/kernels/dtype_info.h"

#include <exception>
#include <string>

#include "nnrt/nnrt_backend.h"

namespace nnrt::reference {

class OpError : public std::exception {
 public:
  OpError(nnrt_status status, std::string message) : status_(status), message_(std::move(message)) {}
  nnrt_status status() const { return status_; }
  const char *what() const noexcept override { return message_.c_str(); }

 private:
  nnrt_status status_;
  std::string message_;
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
