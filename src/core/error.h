// Errors inside nnrt: an exception that carries a status, and the thread-local message that the C API
// hands out through nnrt_last_error(). Internals throw nnrt::Error; only src/api catches.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "nnrt/nnrt.h"

namespace nnrt {

class Error : public std::runtime_error {
 public:
  Error(nnrt_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  nnrt_status status() const { return status_; }

 private:
  nnrt_status status_;
};

// Concatenates anything streamable into a string: cat("expected ", n, " dims, got ", m).
template <class... Parts>
std::string cat(Parts &&...parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

template <class... Parts>
[[noreturn]] void fail(nnrt_status status, Parts &&...parts) {
  throw Error(status, cat(std::forward<Parts>(parts)...));
}

// The calling thread's last error message, for nnrt_last_error().
void set_last_error(const std::string &message);
const char *last_error();

const char *status_name(nnrt_status status);

}  // namespace nnrt
