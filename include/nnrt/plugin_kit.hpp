/*
** plugin_kit.hpp - what every nnrt plugin does at its boundary, written once (C++17, header-only).
**
** For people who write plugins: backends (nnrt_backend.h), communicators (nnrt_comm.h) and the ONNX
** converter. It depends on those headers only. Three things:
**
**   1. Entry checks. A plugin's entry point calls accept_host<Plugin>() first: the host's ABI major
**      must be the plugin's, the host struct large enough for every host function the plugin calls,
**      and each of them present; otherwise the plugin returns NULL after host->set_error() said why,
**      naming both versions or the missing function.
**
**   2. The exception barrier. No C++ exception may cross a plugin's C ABI. guarded<Plugin>() runs a
**      table function's body and barrier<Plugin, fn> wraps a whole table function; either turns
**      every exception into a status plus a message for host->set_error(): plugin_kit::Error keeps
**      its status, std::bad_alloc is NNRT_ERR_OUT_OF_MEMORY, anything else NNRT_ERR_INTERNAL, and a
**      plugin's own exception types (a vendor library's error) keep theirs through the plugin's
**      optional translate() hook.
**
**   3. Size limits (backends). A backend declares the largest dim and element count it handles
**      (nnrt_backend_v1::max_dim, max_elements); supports<Plugin, fn> and op_create<Plugin, fn>
**      refuse a larger op before the backend's code sees it, so that the op falls back to the
**      reference backend instead of reaching a vendor library's 32-bit internals.
**
** A plugin describes itself to the kit with a traits struct:
**
**     struct MyBackend {
**       static constexpr const char *name = "mybackend backend";  // the start of every message
**       using Host = nnrt_host_api;                               // or nnrt_comm_host_api
**       static constexpr int64_t max_dim = INT32_MAX;             // backends: 0 = no limit
**       static constexpr int64_t max_elements = INT32_MAX;
**       // Optional: called inside a catch block; rethrows (throw;) and catches the plugin's own
**       // exception types, sets status and message and returns true, or returns false.
**       static bool translate(nnrt_status &status, std::string &message);
**     };
**
** Every plugin's traits type is its own, so the kit's per-plugin state (the host pointer) is too,
** even when several plugins are linked into one program.
*/
#ifndef NNRT_PLUGIN_KIT_HPP
#define NNRT_PLUGIN_KIT_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "nnrt_backend.h"
#include "nnrt_comm.h"

namespace nnrt::plugin_kit {

/* ============================================================================================== */
/* Errors                                                                                         */
/* ============================================================================================== */

// An error that carries the status it stands for. Plugin code throws it (or a type derived from
// it); the barrier returns its status.
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

// Throws Error(status, cat(parts...)).
template <class... Parts>
[[noreturn]] void fail(nnrt_status status, Parts &&...parts) {
  throw Error(status, cat(std::forward<Parts>(parts)...));
}

#define NNRT_PLUGIN_KIT_TEXT2(x) #x
#define NNRT_PLUGIN_KIT_TEXT(x) NNRT_PLUGIN_KIT_TEXT2(x)
// The version of these headers as text, "MAJOR.MINOR.PATCH" (nnrt.h's NNRT_VERSION_*): which nnrt
// a plugin was built against.
inline constexpr const char *kVersionString = NNRT_PLUGIN_KIT_TEXT(NNRT_VERSION_MAJOR) "." NNRT_PLUGIN_KIT_TEXT(
    NNRT_VERSION_MINOR) "." NNRT_PLUGIN_KIT_TEXT(NNRT_VERSION_PATCH);
#undef NNRT_PLUGIN_KIT_TEXT
#undef NNRT_PLUGIN_KIT_TEXT2

/* ============================================================================================== */
/* The host a plugin was given                                                                    */
/* ============================================================================================== */

// What the kit knows of each kind of host API: its ABI major and the word for messages.
template <class HostApi>
struct HostAbi;
template <>
struct HostAbi<nnrt_host_api> {
  static constexpr uint32_t major = NNRT_BACKEND_ABI_MAJOR;
  static constexpr const char *kind = "backend";
};
template <>
struct HostAbi<nnrt_comm_host_api> {
  static constexpr uint32_t major = NNRT_COMM_ABI_MAJOR;
  static constexpr const char *kind = "communicator";
};

// The host API accept_host<Plugin>() accepted; NULL before (or for a plugin without one).
template <class Plugin>
struct HostOf {
  static inline const typename Plugin::Host *api = nullptr;
};

template <class Plugin>
const typename Plugin::Host *host() {
  return HostOf<Plugin>::api;
}

// Passes "<plugin name>: <what>: <message>" (what may be NULL) to host->set_error. Never throws:
// when building the text runs out of memory, the plugin's name alone goes.
template <class Plugin>
void report(const char *what, const std::string &message) noexcept {
  const auto *h = host<Plugin>();
  if (!h || !h->set_error) return;
  try {
    std::string text = std::string(Plugin::name) + ": ";
    if (what && *what) text += std::string(what) + ": ";
    h->set_error((text + message).c_str());
  } catch (...) {
    h->set_error(Plugin::name);
  }
}

// Logs through host->log (level NNRT_LOG_*), prefixed with the plugin's name. Never throws.
template <class Plugin>
void log(int level, const std::string &message) noexcept {
  const auto *h = host<Plugin>();
  if (!h || !h->log) return;
  try {
    h->log(level, (std::string(Plugin::name) + ": " + message).c_str());
  } catch (...) {
  }
}

/* ============================================================================================== */
/* 1. Entry checks                                                                                */
/* ============================================================================================== */

// One function of a host API that a plugin calls: its name and where it sits in the struct.
struct HostFunction {
  const char *name;
  size_t offset;
  size_t end;  // offset + its size: the host's struct_size must reach this far
};
#define NNRT_HOST_FUNCTION(HostType, member)                                                         \
  ::nnrt::plugin_kit::HostFunction {                                                                 \
    #member, offsetof(HostType, member), offsetof(HostType, member) + sizeof(((HostType *)0)->member) \
  }

// Checks the host an entry point was given and, when it will do, remembers it for report(), log()
// and host(). `calls` lists the host functions the plugin calls besides set_error (always needed:
// it is how a plugin reports). Returns false, after host->set_error() said why where the host has
// one, when: host_abi or host->abi_major is not the plugin's ABI major (the message names both);
// host->struct_size is too small for a function in `calls` (the message names the function and
// both sizes); or one of them is NULL.
template <class Plugin>
bool accept_host(uint32_t host_abi, const typename Plugin::Host *h, std::initializer_list<HostFunction> calls) noexcept {
  using Host = typename Plugin::Host;
  using Abi = HostAbi<Host>;
  if (!h) return false;
  const HostFunction set_error = NNRT_HOST_FUNCTION(Host, set_error);
  if (h->struct_size < set_error.end || !h->set_error) return false;  // nobody to tell
  auto refuse = [h](const std::string &why) {
    try {
      h->set_error((std::string(Plugin::name) + ": " + why).c_str());
    } catch (...) {
      h->set_error(Plugin::name);
    }
    return false;
  };
  try {
    if (host_abi != Abi::major || h->abi_major != Abi::major) {
      return refuse(cat("built for ", Abi::kind, " ABI ", Abi::major, ", the host has ", Abi::kind, " ABI ",
                        host_abi != Abi::major ? host_abi : h->abi_major));
    }
    for (const HostFunction &f : calls) {
      if (h->struct_size < f.end) {
        return refuse(cat("it calls the host's ", f.name, ", which needs a host API of at least ", f.end,
                          " bytes; the host's is ", h->struct_size, " bytes"));
      }
      void (*fn)() = nullptr;  // every member in `calls` is a function pointer
      std::memcpy(&fn, reinterpret_cast<const char *>(h) + f.offset, sizeof fn);
      if (!fn) return refuse(cat("the host API lacks ", f.name));
    }
  } catch (...) {
    return refuse("out of memory while checking the host");
  }
  HostOf<Plugin>::api = h;
  return true;
}

/* ============================================================================================== */
/* 2. The exception barrier                                                                       */
/* ============================================================================================== */

namespace detail {
template <class P, class = void>
struct has_translate : std::false_type {};
template <class P>
struct has_translate<P, std::void_t<decltype(P::translate(std::declval<nnrt_status &>(), std::declval<std::string &>()))>>
    : std::true_type {};
}  // namespace detail

// Inside a catch block: the status the exception being handled stands for, its text in `message`.
template <class Plugin>
nnrt_status current_status(std::string &message) noexcept {
  try {
    if constexpr (detail::has_translate<Plugin>::value) {
      nnrt_status status = NNRT_ERR_INTERNAL;
      if (Plugin::translate(status, message)) return status;
    }
    try {
      throw;
    } catch (const Error &e) {
      message = e.what();
      return e.status();
    } catch (const std::bad_alloc &) {
      message = "out of memory";
      return NNRT_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
      message = e.what();
      return NNRT_ERR_INTERNAL;
    } catch (...) {
      message = "unknown exception";
      return NNRT_ERR_INTERNAL;
    }
  } catch (...) {  // building the message ran out of memory
    message.clear();
    return NNRT_ERR_OUT_OF_MEMORY;
  }
}

// Runs f (returning an nnrt_status); an exception becomes its status, its message reported as
// "<plugin>: <what>: <message>".
template <class Plugin, class F>
nnrt_status guarded(const char *what, F &&f) noexcept {
  try {
    return f();
  } catch (...) {
    std::string message;
    nnrt_status status = current_status<Plugin>(message);
    report<Plugin>(what, message);
    return status;
  }
}

// Runs f; an exception becomes its status, its message written into message[0..size) (truncated,
// NUL-terminated), for ABIs that pass a message buffer instead of a host (the ONNX converter).
template <class Plugin, class F>
nnrt_status guarded_into(char *message, size_t size, F &&f) noexcept {
  try {
    f();
    return NNRT_OK;
  } catch (...) {
    std::string text;
    nnrt_status status = current_status<Plugin>(text);
    if (message && size > 0) {
      size_t n = text.size() < size - 1 ? text.size() : size - 1;
      std::memcpy(message, text.data(), n);
      message[n] = 0;
    }
    return status;
  }
}

// What a wrapped table function returns after an exception: the status for nnrt_status, 0 for a
// number (probe, supports: "no"), "" for a text (a communicator's last_error).
template <class R>
R failed_result(nnrt_status status) {
  if constexpr (std::is_same_v<R, nnrt_status>) return status;
  else if constexpr (std::is_same_v<R, const char *>) return "";
  else return R{};
}

// barrier<Plugin, fn>: fn with every exception turned into failed_result() and a reported message.
// Put it in the table: `table.wait = plugin_kit::barrier<Mpi, mpi_wait>;`.
template <class Plugin, auto Fn>
struct Barrier;
template <class Plugin, class R, class... Args, R (*Fn)(Args...)>
struct Barrier<Plugin, Fn> {
  static R call(Args... args) noexcept {
    try {
      return Fn(args...);
    } catch (...) {
      std::string message;
      nnrt_status status = current_status<Plugin>(message);
      report<Plugin>(nullptr, message);
      if constexpr (!std::is_void_v<R>) return failed_result<R>(status);
    }
  }
};
template <class Plugin, auto Fn>
constexpr auto barrier = &Barrier<Plugin, Fn>::call;

/* ============================================================================================== */
/* 3. Size limits (backends)                                                                      */
/* ============================================================================================== */

// Why `desc` is beyond a backend's declared limits (0 = none), or "" when it is within them: a
// dim above max_dim, or a tensor of more than max_elements elements.
inline std::string limit_refusal(const nnrt_op_desc &desc, int64_t max_dim, int64_t max_elements) {
  auto check = [&](const nnrt_tensor_desc &t, const char *role, int index) -> std::string {
    // Every dim is checked, those of an empty tensor too: a library may size its plans from dims
    // whatever their product.
    int64_t elements = 1;
    bool counted = true;  // false once the product passes 2^63
    for (int d = 0; d < t.ndim && d < NNRT_MAX_DIMS; ++d) {
      if (max_dim > 0 && t.dims[d] > max_dim) {
        return cat(role, " ", index, " has dim ", d, " of ", t.dims[d], ", above this backend's largest dim ", max_dim);
      }
      if (t.dims[d] <= 0) elements = 0;
      else if (elements > INT64_MAX / t.dims[d]) counted = false;
      else elements *= t.dims[d];
    }
    if (elements == 0) counted = true;
    if (max_elements > 0 && (!counted || elements > max_elements)) {
      return cat(role, " ", index, " has ", counted ? std::to_string(elements) : std::string("more than 2^63"),
                 " elements, above this backend's largest tensor of ", max_elements);
    }
    return "";
  };
  if (max_dim <= 0 && max_elements <= 0) return "";
  for (int i = 0; i < desc.n_inputs && i < NNRT_OP_MAX_INPUTS; ++i) {
    std::string why = check(desc.inputs[i], "input", i);
    if (!why.empty()) return why;
  }
  for (int i = 0; i < desc.n_outputs && i < NNRT_OP_MAX_OUTPUTS; ++i) {
    std::string why = check(desc.outputs[i], "output", i);
    if (!why.empty()) return why;
  }
  return "";
}

// supports<Plugin, fn>: 0 for NULL arguments, an op beyond Plugin::max_dim / max_elements or an
// exception; otherwise fn's answer.
template <class Plugin, int32_t (*Fn)(nnrt_backend_instance *, const nnrt_op_desc *)>
int32_t supports(nnrt_backend_instance *instance, const nnrt_op_desc *desc) noexcept {
  if (!instance || !desc) return 0;
  try {
    if (!limit_refusal(*desc, Plugin::max_dim, Plugin::max_elements).empty()) return 0;
    return Fn(instance, desc);
  } catch (...) {
    return 0;
  }
}

// op_create<Plugin, fn>: NNRT_ERR_UNSUPPORTED, with a message naming the dim or count and the
// limit, for an op beyond the limits; NNRT_ERR_INVALID_ARGUMENT for NULL arguments; otherwise fn,
// behind the barrier.
template <class Plugin, nnrt_status (*Fn)(nnrt_backend_instance *, const nnrt_op_desc *, nnrt_backend_op **, size_t *)>
nnrt_status op_create(nnrt_backend_instance *instance, const nnrt_op_desc *desc, nnrt_backend_op **out,
                      size_t *workspace_bytes) noexcept {
  return guarded<Plugin>("op_create", [&] {
    if (!instance || !desc || !out || !workspace_bytes) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "instance, desc, out and workspace_bytes must not be NULL");
    }
    std::string why = limit_refusal(*desc, Plugin::max_dim, Plugin::max_elements);
    if (!why.empty()) fail(NNRT_ERR_UNSUPPORTED, "op kind ", desc->kind, ": ", why);
    return Fn(instance, desc, out, workspace_bytes);
  });
}

// A backend table with struct_size, abi_major and the limits filled in, every other member zero
// (NULL), for the plugin to fill.
template <class Plugin>
nnrt_backend_v1 backend_table() {
  nnrt_backend_v1 t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.abi_major = NNRT_BACKEND_ABI_MAJOR;
  t.max_dim = Plugin::max_dim;
  t.max_elements = Plugin::max_elements;
  return t;
}

}  // namespace nnrt::plugin_kit

#endif /* NNRT_PLUGIN_KIT_HPP */
