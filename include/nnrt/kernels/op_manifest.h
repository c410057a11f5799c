// The op-kind manifest: one line per op kind of nnrt_backend.h, the single list that names, arity
// checks and scalar slots are drawn from (the library's dispatch, the reference backend, plugins and
// tests). Adding an op kind: append its value and its documentation to nnrt_op_kind in
// nnrt_backend.h, add its line here (static_asserts below catch a line out of order), then write
// its kernels (src/README.md has the whole checklist).
#pragma once

#include <cstdint>

#include "nnrt/nnrt_backend.h"

// X(KIND, name, inputs_min, inputs_max, input_names, outputs_min, outputs_max, output_names, scalars)
//   KIND     the enum's suffix (NNRT_OP_<KIND>), also the kind's name in the reference's messages
//   name     the kind's name in placements and the library's messages
//   inputs / outputs: the counts a descriptor may have, and their names for messages ("[opt]" marks
//            the optional ones); kinds whose counts depend on attributes refine them in their kernels
//   scalars  how many nnrt_op_args.scalars the kind reads (their slots: NNRT_SCALAR_* below)
#define NNRT_OP_MANIFEST(X)                                                                                   \
  X(COPY, "copy", 1, 1, "(x)", 1, 1, "(y)", 0)                                                                \
  X(FILL, "fill", 0, 0, "", 1, 1, "(y)", 1)                                                                   \
  X(RANDOM, "random", 0, 0, "", 1, 1, "(y)", 2)                                                               \
  X(UNARY, "unary", 1, 1, "(x)", 1, 1, "(y)", 0)                                                              \
  X(UNARY_BACKWARD, "unary_backward", 2, 2, "(dy, s)", 1, 1, "(dx)", 0)                                       \
  X(BINARY, "binary", 2, 2, "(a, b)", 1, 1, "(c)", 0)                                                         \
  X(REDUCE, "reduce", 1, 1, "(x)", 1, 1, "(y)", 0)                                                            \
  X(ARGREDUCE, "argreduce", 1, 1, "(x)", 1, 1, "(y)", 0)                                                      \
  X(MATMUL, "matmul", 2, 3, "(a, b, bias [opt])", 1, 1, "(c)", 0)                                             \
  X(SOFTMAX, "softmax", 1, 1, "(x)", 1, 1, "(y)", 0)                                                          \
  X(SOFTMAX_BACKWARD, "softmax_backward", 2, 2, "(dy, y)", 1, 1, "(dx)", 0)                                   \
  X(CONV2D, "conv2d", 2, 3, "(x, w, bias [opt])", 1, 1, "(y)", 0)                                             \
  X(CONV2D_BACKWARD_DATA, "conv2d_backward_data", 2, 2, "(dy, w)", 1, 1, "(dx)", 0)                           \
  X(CONV2D_BACKWARD_WEIGHTS, "conv2d_backward_weights", 2, 2, "(x, dy)", 1, 2, "(dw, db [opt])", 0)           \
  X(POOL2D, "pool2d", 1, 1, "(x)", 1, 1, "(y)", 0)                                                            \
  X(POOL2D_BACKWARD, "pool2d_backward", 2, 2, "(dy, x)", 1, 1, "(dx)", 0)                                     \
  X(BATCHNORM, "batchnorm", 3, 5, "(x, gamma, beta[, mean, var])", 1, 3, "(y[, mean, var])", 0)               \
  X(BATCHNORM_BACKWARD, "batchnorm_backward", 5, 5, "(x, dy, mean, var, gamma)", 3, 3, "(dx, dgamma, dbeta)", \
    0)                                                                                                        \
  X(LOSS, "loss", 2, 2, "(pred, target)", 1, 1, "(loss)", 0)                                                  \
  X(LOSS_BACKWARD, "loss_backward", 2, 2, "(pred, target)", 1, 1, "(dpred)", 1)                               \
  X(DROPOUT, "dropout", 1, 1, "(x)", 2, 2, "(y, mask)", 0)                                                    \
  X(DROPOUT_BACKWARD, "dropout_backward", 2, 2, "(dy, mask)", 1, 1, "(dx)", 0)                                \
  X(GATHER, "gather", 2, 2, "(table, indices)", 1, 1, "(y)", 0)                                               \
  X(SCATTER_ADD, "scatter_add", 2, 2, "(dy, indices)", 1, 1, "(dtable)", 0)                                   \
  X(OPTIMIZER_UPDATE, "optimizer_update", 1, 1, "(grad)", 1, 3, "(param, state0 [opt], state1 [opt])", 3)   \
  X(LAYERNORM, "layernorm", 1, 3, "(x, gamma [opt], beta [opt])", 1, 3, "(y[, mean, var])", 0)               \
  X(LAYERNORM_BACKWARD, "layernorm_backward", 4, 5, "(x, dy, mean, var, gamma [opt])", 1, 3,                  \
    "(dx[, dgamma, dbeta])", 0)                                                                               \
  X(QUANTIZE, "quantize", 1, 1, "(x)", 1, 1, "(y)", 0)                                                        \
  X(MATMUL_INT8, "matmul_int8", 3, 4, "(a, b, scales, bias [opt])", 1, 1, "(c)", 0)                           \
  X(CONV2D_INT8, "conv2d_int8", 3, 4, "(x, w, scales, bias [opt])", 1, 1, "(y)", 0)                           \
  X(ATTENTION, "attention", 3, 4, "(q, k, v, mask [opt])", 1, 1, "(o)", 0)                                     \
  X(ATTENTION_BACKWARD, "attention_backward", 4, 5, "(q, k, v, dout, mask [opt])", 3, 3, "(dq, dk, dv)", 0)

namespace nnrt::kernels {

struct OpKindInfo {
  const char *upper_name;  // "CONV2D_BACKWARD_DATA"
  const char *name;        // "conv2d_backward_data"
  int inputs_min, inputs_max;
  const char *input_names;
  int outputs_min, outputs_max;
  const char *output_names;
  int scalars;
};

// Indexed by nnrt_op_kind; entry 0 stands for every value that is not a kind.
inline constexpr OpKindInfo kOpKinds[] = {
    {"unknown op kind", "invalid", 0, 0, "", 0, 0, "", 0},
#define NNRT_OP_KIND_INFO(KIND, name, imin, imax, inames, omin, omax, onames, scalars) \
  {#KIND, name, imin, imax, inames, omin, omax, onames, scalars},
    NNRT_OP_MANIFEST(NNRT_OP_KIND_INFO)
#undef NNRT_OP_KIND_INFO
};
static_assert(sizeof kOpKinds / sizeof kOpKinds[0] == NNRT_OP_KIND_COUNT,
              "op_manifest.h: one line per nnrt_op_kind, and NNRT_OP_KIND_COUNT one past the last");

// Each line sits at its kind's value.
namespace manifest_order {
enum : int {
  kFirst = 0,
#define NNRT_OP_KIND_POSITION(KIND, ...) KIND,
  NNRT_OP_MANIFEST(NNRT_OP_KIND_POSITION)
#undef NNRT_OP_KIND_POSITION
};
#define NNRT_OP_KIND_CHECK(KIND, ...)                                 \
  static_assert(static_cast<int>(KIND) == static_cast<int>(NNRT_OP_##KIND), \
                "op_manifest.h: the line of NNRT_OP_" #KIND " is out of order");
NNRT_OP_MANIFEST(NNRT_OP_KIND_CHECK)
#undef NNRT_OP_KIND_CHECK
}  // namespace manifest_order

constexpr bool op_kind_valid(int32_t kind) { return kind > 0 && kind < NNRT_OP_KIND_COUNT; }
// The manifest line of a kind; entry 0 for a value that is not a kind.
constexpr const OpKindInfo &op_kind_info(int32_t kind) { return kOpKinds[op_kind_valid(kind) ? kind : 0]; }

// The state tensors an optimizer rule reads and writes (NNRT_OP_OPTIMIZER_UPDATE outputs 1 and 2):
// SGD keeps a velocity only with momentum; ADAGRAD and RMSPROP keep one sum; the Adam family two
// moments. -1 for a value that is not an nnrt_optimizer_alg.
constexpr int optimizer_state_count(int32_t alg, double momentum) {
  switch (alg) {
    case NNRT_OPTIMIZER_SGD: return momentum > 0 ? 1 : 0;
    case NNRT_OPTIMIZER_ADAGRAD:
    case NNRT_OPTIMIZER_RMSPROP: return 1;
    case NNRT_OPTIMIZER_ADAM:
    case NNRT_OPTIMIZER_ADAMW:
    case NNRT_OPTIMIZER_ADAMAX: return 2;
    default: return -1;
  }
}

}  // namespace nnrt::kernels
