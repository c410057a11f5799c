// One reference-backend context, single-threaded, shared by the calls of a fuzz target that needs
// the model stack.
#pragma once

#include <memory>

#include "backend/context.h"

namespace nnrt::fuzz {

inline const std::shared_ptr<Context> &reference_context() {
  static std::shared_ptr<Context> ctx = [] {
    ContextOptions o;
    o.backend = "reference";
    o.threads = 1;
    return Context::create(o);
  }();
  return ctx;
}

}  // namespace nnrt::fuzz
