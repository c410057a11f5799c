// Turns a runtime nnrt_unary_alg into a compile-time constant, so that each alg gets its own
// (vectorizable where possible) loop: fn(std::integral_constant<int, ALG>{}).
#pragma once

#include <type_traits>

#include "errors.h"
#include "nnrt/kernels/eltwise.h"

namespace nnrt::reference {

template <int Alg>
using UnaryAlg = std::integral_constant<int, Alg>;

using kernels::is_unary_alg;

template <class Fn>
decltype(auto) visit_unary_alg(int alg, Fn &&fn) {
  switch (alg) {
    case NNRT_UNARY_IDENTITY: return fn(UnaryAlg<NNRT_UNARY_IDENTITY>{});
    case NNRT_UNARY_NEG: return fn(UnaryAlg<NNRT_UNARY_NEG>{});
    case NNRT_UNARY_ABS: return fn(UnaryAlg<NNRT_UNARY_ABS>{});
    case NNRT_UNARY_EXP: return fn(UnaryAlg<NNRT_UNARY_EXP>{});
    case NNRT_UNARY_LOG: return fn(UnaryAlg<NNRT_UNARY_LOG>{});
    case NNRT_UNARY_SQRT: return fn(UnaryAlg<NNRT_UNARY_SQRT>{});
    case NNRT_UNARY_SQUARE: return fn(UnaryAlg<NNRT_UNARY_SQUARE>{});
    case NNRT_UNARY_RELU: return fn(UnaryAlg<NNRT_UNARY_RELU>{});
    case NNRT_UNARY_LEAKY_RELU: return fn(UnaryAlg<NNRT_UNARY_LEAKY_RELU>{});
    case NNRT_UNARY_ELU: return fn(UnaryAlg<NNRT_UNARY_ELU>{});
    case NNRT_UNARY_GELU: return fn(UnaryAlg<NNRT_UNARY_GELU>{});
    case NNRT_UNARY_SIGMOID: return fn(UnaryAlg<NNRT_UNARY_SIGMOID>{});
    case NNRT_UNARY_TANH: return fn(UnaryAlg<NNRT_UNARY_TANH>{});
    case NNRT_UNARY_LINEAR: return fn(UnaryAlg<NNRT_UNARY_LINEAR>{});
    case NNRT_UNARY_CLIP: return fn(UnaryAlg<NNRT_UNARY_CLIP>{});
    case NNRT_UNARY_SIGN: return fn(UnaryAlg<NNRT_UNARY_SIGN>{});
    case NNRT_UNARY_SWISH: return fn(UnaryAlg<NNRT_UNARY_SWISH>{});
    case NNRT_UNARY_HARD_SIGMOID: return fn(UnaryAlg<NNRT_UNARY_HARD_SIGMOID>{});
    case NNRT_UNARY_HARD_SWISH: return fn(UnaryAlg<NNRT_UNARY_HARD_SWISH>{});
    case NNRT_UNARY_GELU_TANH: return fn(UnaryAlg<NNRT_UNARY_GELU_TANH>{});
    case NNRT_UNARY_ERF: return fn(UnaryAlg<NNRT_UNARY_ERF>{});
    case NNRT_UNARY_SOFTPLUS: return fn(UnaryAlg<NNRT_UNARY_SOFTPLUS>{});
  }
  fail(NNRT_ERR_INTERNAL, "unary alg %d reached a kernel", alg);
}

// The algs whose cost is a libm call: they get a smaller parallel grain.
inline bool unary_alg_is_expensive(int alg) {
  return alg == NNRT_UNARY_EXP || alg == NNRT_UNARY_LOG || alg == NNRT_UNARY_ELU ||
         alg == NNRT_UNARY_GELU || alg == NNRT_UNARY_SIGMOID || alg == NNRT_UNARY_TANH || alg == NNRT_UNARY_SWISH ||
         alg == NNRT_UNARY_GELU_TANH || alg == NNRT_UNARY_ERF || alg == NNRT_UNARY_SOFTPLUS;
}

}  // namespace nnrt::reference
