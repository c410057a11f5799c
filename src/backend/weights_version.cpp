#include "backend/weights_version.h"

#include <algorithm>

namespace nnrt::backend {

namespace {
thread_local const WeightsVersionScope *current_scope = nullptr;
}  // namespace

WeightsVersionScope::WeightsVersionScope(uint64_t version, std::vector<const Storage *> stable)
    : version_(version), stable_(std::move(stable)), previous_(current_scope) {
  current_scope = this;
}

WeightsVersionScope::~WeightsVersionScope() { current_scope = previous_; }

uint64_t weights_version(const Storage *s) {
  const WeightsVersionScope *scope = current_scope;
  if (!scope || !s) return 0;
  return std::find(scope->stable_.begin(), scope->stable_.end(), s) != scope->stable_.end() ? scope->version_ : 0;
}

bool takes_weights_version(int32_t kind) {
  return kind == NNRT_OP_CONV2D || kind == NNRT_OP_CONV2D_INT8 || kind == NNRT_OP_MATMUL || kind == NNRT_OP_MATMUL_INT8;
}

}  // namespace nnrt::backend
