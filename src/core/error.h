// Errors inside nnrt: an exception that carries a status, and the thread-local message that the C API
// hands out through nnrt_last_error(). Internals throw nnrt::Error; only src/api catches.
#pragma once

#include <new>
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

// Copies `text` into message[0..size), truncated and NUL-terminated (nothing when size is 0).
void write_message(char *message, size_t size, const std::string &text);

// Runs `fn` at a plain-C boundary (the ONNX converter plugin and its host callbacks): an exception
// becomes the status it stands for (an nnrt::Error its own, std::bad_alloc NNRT_ERR_OUT_OF_MEMORY,
// anything else NNRT_ERR_INTERNAL), its text written into `message`.
template <class Fn>
nnrt_status status_of(char *message, size_t size, Fn &&fn) {
  try {
    fn();
    return NNRT_OK;
  } catch (const Error &e) {
    write_message(message, size, e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    write_message(message, size, "out of memory");
    return NNRT_ERR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    write_message(message, size, e.what());
    return NNRT_ERR_INTERNAL;
  }
}

// The calling thread's last error message, for nnrt_last_error().
void set_last_error(const std::string &message);
const char *last_error();

const char *status_name(nnrt_status status);

}  // namespace nnrt
