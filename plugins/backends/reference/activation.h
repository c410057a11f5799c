// A fused activation (attrs.fused of MATMUL and CONV2D) applied in place to a row of results in the
// compute type, before they are stored.
#pragma once

#include <stdint.h>

#include "unary_dispatch.h"
#include "nnrt/kernels/eltwise.h"

namespace nnrt::reference {

template <class C>
void apply_activation(int alg, C *values, int64_t n, C alpha, C beta) {
  if (alg == NNRT_UNARY_NONE || alg == NNRT_UNARY_IDENTITY) return;
  visit_unary_alg(alg, [&](auto a) {
    constexpr int Alg = decltype(a)::value;
    for (int64_t i = 0; i < n; ++i) values[i] = kernels::unary_forward<Alg>(values[i], alpha, beta);
  });
}

}  // namespace nnrt::reference
