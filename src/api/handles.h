// The C API's opaque handles and the guard every entry point runs its body in.
//
// A handle is a small struct with a type tag in front of a C++ object, so that a handle of the
// wrong type (or a stray pointer) is refused with NNRT_ERR_INVALID_ARGUMENT instead of being
// used. The tag is cleared when the handle is released.
#pragma once

#include <memory>
#include <new>
#include <string>

#include "backend/array.h"
#include "backend/context.h"
#include "core/error.h"
#include "core/run_control.h"
#include "data/dataset.h"
#include "model/model.h"
#include "train/evaluation.h"
#include "train/trainer.h"
#include "nnrt/nnrt.h"

namespace nnrt::api {

enum HandleTag : uint32_t {
  kDeadTag = 0,
  kContextTag = 0x6e6e4358,  // "nnCX"
  kArrayTag = 0x6e6e4152,    // "nnAR"
  kDatasetTag = 0x6e6e4453,  // "nnDS"
  kModelTag = 0x6e6e4d44,    // "nnMD"
  kTrainerTag = 0x6e6e5452,  // "nnTR"
  kEvaluationTag = 0x6e6e4556,  // "nnEV"
  kRunOptionsTag = 0x6e6e524f,  // "nnRO"
};

}  // namespace nnrt::api

struct nnrt_context {
  uint32_t tag = nnrt::api::kContextTag;
  std::shared_ptr<nnrt::Context> impl;
};

struct nnrt_array {
  uint32_t tag = nnrt::api::kArrayTag;
  nnrt::Array impl;
};

struct nnrt_dataset {
  uint32_t tag = nnrt::api::kDatasetTag;
  std::shared_ptr<nnrt::data::Dataset> impl;
};

struct nnrt_model {
  uint32_t tag = nnrt::api::kModelTag;
  std::shared_ptr<nnrt::model::Model> impl;
};

struct nnrt_trainer {
  uint32_t tag = nnrt::api::kTrainerTag;
  std::unique_ptr<nnrt::train::Trainer> impl;
};

struct nnrt_evaluation {
  uint32_t tag = nnrt::api::kEvaluationTag;
  nnrt::train::Evaluation impl;
};

struct nnrt_run_options {
  uint32_t tag = nnrt::api::kRunOptionsTag;
  nnrt::RunControl impl;
};

namespace nnrt::api {

template <class Handle>
const char *handle_type_name();
template <> inline const char *handle_type_name<nnrt_context>() { return "nnrt_context"; }
template <> inline const char *handle_type_name<nnrt_array>() { return "nnrt_array"; }
template <> inline const char *handle_type_name<nnrt_dataset>() { return "nnrt_dataset"; }
template <> inline const char *handle_type_name<nnrt_model>() { return "nnrt_model"; }
template <> inline const char *handle_type_name<nnrt_trainer>() { return "nnrt_trainer"; }
template <> inline const char *handle_type_name<nnrt_evaluation>() { return "nnrt_evaluation"; }
template <> inline const char *handle_type_name<nnrt_run_options>() { return "nnrt_run_options"; }

template <class Handle>
constexpr uint32_t handle_tag();
template <> constexpr uint32_t handle_tag<nnrt_context>() { return kContextTag; }
template <> constexpr uint32_t handle_tag<nnrt_array>() { return kArrayTag; }
template <> constexpr uint32_t handle_tag<nnrt_dataset>() { return kDatasetTag; }
template <> constexpr uint32_t handle_tag<nnrt_model>() { return kModelTag; }
template <> constexpr uint32_t handle_tag<nnrt_trainer>() { return kTrainerTag; }
template <> constexpr uint32_t handle_tag<nnrt_evaluation>() { return kEvaluationTag; }
template <> constexpr uint32_t handle_tag<nnrt_run_options>() { return kRunOptionsTag; }

// Returns the handle, or throws NNRT_ERR_INVALID_ARGUMENT naming the parameter.
template <class Handle>
Handle *check_handle(Handle *h, const char *param) {
  if (!h) fail(NNRT_ERR_INVALID_ARGUMENT, param, " is NULL; expected a live ", handle_type_name<Handle>());
  if (h->tag != handle_tag<Handle>()) {
    fail(NNRT_ERR_INVALID_ARGUMENT, param, " is not a live ", handle_type_name<Handle>(),
         " (a released handle, or a handle of another type)");
  }
  return h;
}

template <class Handle>
const Handle *check_handle(const Handle *h, const char *param) {
  return check_handle(const_cast<Handle *>(h), param);
}

// check_handle for element `index` of an array parameter ("inputs[2]"): the name is only built
// when the check fails, so that checking a call's inputs costs no string work.
template <class Handle>
const Handle *check_handle(const Handle *h, const char *param, int64_t index) {
  if (h && h->tag == handle_tag<Handle>()) return h;
  return check_handle(h, (std::string(param) + "[" + std::to_string(index) + "]").c_str());
}

// Releases a handle made with new; NULL does nothing, a wrong handle is ignored (and logged).
void log_bad_release(const char *function, const char *type);
template <class Handle>
void release_handle(Handle *h, const char *function) {
  if (!h) return;
  if (h->tag != handle_tag<Handle>()) {
    log_bad_release(function, handle_type_name<Handle>());
    return;
  }
  h->tag = kDeadTag;
  delete h;
}

inline void require(bool ok, const char *message) {
  if (!ok) fail(NNRT_ERR_INVALID_ARGUMENT, message);
}

// Runs body; turns any exception into a status and this thread's last error message.
template <class Body>
nnrt_status guard(const char *function, Body &&body) noexcept {
  try {
    body();
    return NNRT_OK;
  } catch (const Error &e) {
    set_last_error(std::string(function) + ": " + e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    set_last_error(std::string(function) + ": out of memory");
    return NNRT_ERR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    set_last_error(std::string(function) + ": internal error: " + e.what());
    return NNRT_ERR_INTERNAL;
  } catch (...) {
    set_last_error(std::string(function) + ": internal error: unknown exception");
    return NNRT_ERR_INTERNAL;
  }
}

// The control behind optional run options (NULL: none), checked to be a live handle.
inline const RunControl *run_control(const nnrt_run_options *o, const char *param) {
  return o ? &check_handle(o, param)->impl : nullptr;
}

// Writes a string into a caller's buffer, snprintf-style (see the header's conventions).
void write_string(const std::string &s, char *buf, size_t cap, size_t *len);

}  // namespace nnrt::api
