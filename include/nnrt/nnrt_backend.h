/*
** nnrt_backend.h - the backend plugin ABI of nnrt.
**
** For people who write backends. Applications need only nnrt.h.
**
** A backend is a shared library named libnnrt-backend-<name>.so that exports one symbol:
**
**     const nnrt_backend_v1 *nnrt_backend_entry(uint32_t host_abi, const nnrt_host_api *host);
**
** nnrt loads it with dlopen(RTLD_NOW | RTLD_LOCAL), calls the entry point once, and keeps the
** library loaded for the life of the process. The entry point returns the backend's function table,
** or NULL after host->set_error() said why (for example "built for backend ABI 2, host has 1").
** The built-in reference backend is registered through this same table, and a static build links a
** backend in with nnrt_register_backend().
**
** Versioning. Every struct that crosses the boundary starts with `uint32_t struct_size` and only ever
** grows at its end. A reader checks struct_size before it reads a member added later (see
** NNRT_HAS_MEMBER). The ABI major (NNRT_BACKEND_ABI_MAJOR) changes only for an incompatible change;
** the host refuses a table of another major, and a plugin should refuse a host of another major.
**
** Memory. A backend owns the memory of its devices. If it sets NNRT_BACKEND_HOST_MEMORY, its
** "device pointers" are ordinary host pointers: nnrt allocates them from its host memory cache and
** the memory functions of the table may be NULL. Otherwise (a GPU) the host never dereferences a
** device pointer; it moves data with memcpy_async on the context's stream and waits with
** stream_synchronize. When the backend also has host_alloc and the event functions, training
** batches are copied from page-locked memory on a second stream instead, while the context's stream
** computes (see event_create). Device pointers passed to op_run may be offset into an allocation
** (views).
**
** Ops. An op is described by an nnrt_op_desc: an op kind from the fixed op set below, the dtype,
** dims and strides of every input and output, and static attributes. The host asks supports(); if
** yes it calls op_create() once per distinct descriptor and caches the result (a oneDNN primitive, a
** cuDNN plan), then op_run() with data pointers, a workspace of the size op_create() asked for, the
** stream and per-call values (learning rate, step, RNG counter, fill value: in nnrt_op_args, never in
** the descriptor, so that cached ops are reused). An op the backend does not support runs on the
** reference backend. CONV2D, CONV2D_INT8, MATMUL, MATMUL_INT8: args.counter is 0 or a version of input 1
** (w or b): a call with it at an address and nonzero version seen before finds the same bytes there.
**
** Errors. Functions return an nnrt_status (nnrt.h). Before returning a failure they should call
** host->set_error() with a message that says what was expected and what was given. No C++ exception
** may cross the boundary. A backend never aborts, exits or prints; it logs through host->log().
**
** Threads. op_run may be called concurrently from several threads with different arguments on the
** same op object; a backend that cannot allow this must lock internally.
*/
#ifndef NNRT_BACKEND_H
#define NNRT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "nnrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNRT_BACKEND_ABI_MAJOR 1

/* True when a struct of the size the writer declared in struct_size holds `member`. */
#define NNRT_HAS_MEMBER(ptr, type, member) \
  ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* ============================================================================================== */
/* Tensors and the op set                                                                         */
/* ============================================================================================== */

/* The most inputs, outputs and per-call scalars an op has. */
#define NNRT_OP_MAX_INPUTS 6
#define NNRT_OP_MAX_OUTPUTS 4
#define NNRT_OP_MAX_SCALARS 8

/* One tensor of an op: dtype, dims and strides in elements (not bytes). A stride of 0 repeats an
** element along that dimension: this is how broadcasting reaches a backend (a binary op's inputs
** always have the output's rank and dims, with stride 0 where numpy would broadcast). Rank 0 is a
** scalar. nnrt_tensor_desc is embedded in arrays inside nnrt_op_desc, so its layout is fixed for the
** whole of ABI major 1; struct_size is there so that a reader can check it. Members added within
** ABI major 1 take the place of `reserved` members, front first, and mean "as before" when 0: the
** host zero-fills every descriptor, and a backend that does not know a member never reads it.
** Layouts are strides only: dims keep their logical order (images are [N, C, H, W], conv weights
** [O, I/groups, KH, KW]) whatever the memory order. In particular, during inference the host keeps
** images channels-last between convolutions and poolings: dims [N, C, H, W] with strides
** [H*W*C, 1, W*C, C] (NHWC memory), converting to row-major only where a layer needs it
** (flatten, and at the model's output). Training passes row-major images. A backend takes every
** layout (the reference backend, which checks the others in the conformance suite, does) and
** may convert internally to the layouts its kernels prefer. */
typedef struct nnrt_tensor_desc {
  uint32_t struct_size; /* sizeof(nnrt_tensor_desc) */
  int32_t dtype;        /* nnrt_dtype */
  int32_t ndim;         /* 0..NNRT_MAX_DIMS */
  int32_t reserved;     /* 0 */
  int64_t dims[NNRT_MAX_DIMS];
  int64_t strides[NNRT_MAX_DIMS];
  int64_t reserved_tail[4]; /* 0; room for later members (a memory format, quantization) */
} nnrt_tensor_desc;

/* The op set. Inputs (in) and outputs (out) are listed in order; optional ones are marked "[opt]"
** and are present when n_inputs / n_outputs is large enough. "scalar k" is nnrt_op_args.scalars[k].
** Unless stated, inputs and outputs have the same dtype, output strides may be anything (outputs
** are usually contiguous) and an output never overlaps an input. */
typedef enum nnrt_op_kind {
  /* in x; out y of the same dims and any dtype: copies with dtype conversion. Floats to f16/bf16
  ** round to nearest even; floats to integers truncate toward zero (NaN gives 0, out-of-range
  ** values saturate); anything to BOOL is (x != 0). Also how strided views become contiguous. */
  NNRT_OP_COPY = 1,
  /* out y; every element = scalar 0. */
  NNRT_OP_FILL = 2,
  /* out y (float); alg nnrt_random_alg; attrs.seed; args.counter is the offset of element 0 in the
  ** stream of counter-based (Philox-4x32-10) numbers, so results do not depend on the backend.
  ** UNIFORM: scalar 0 low, scalar 1 high. NORMAL: scalar 0 mean, scalar 1 std. */
  NNRT_OP_RANDOM = 3,
  /* in x; out y; alg nnrt_unary_alg; attrs.alpha/beta as the alg says. y may alias x exactly. */
  NNRT_OP_UNARY = 4,
  /* in dy, s; out dx; alg nnrt_unary_alg. s is the forward input x, or the forward output y when
  ** attrs.flags has NNRT_FLAG_USE_DST (allowed for RELU, LEAKY_RELU, ELU, SIGMOID, TANH, LINEAR). */
  NNRT_OP_UNARY_BACKWARD = 5,
  /* in a, b; out c; alg nnrt_binary_alg. a and b have c's dims (stride 0 where broadcast). c may
  ** alias a exactly (in-place accumulation). */
  NNRT_OP_BINARY = 6,
  /* in x; out y of x's rank with size 1 along every reduced dimension; alg nnrt_reduce_alg;
  ** attrs.axes_mask has bit d set for each reduced dimension d. */
  NNRT_OP_REDUCE = 7,
  /* in x; out y (I64) of x's rank with size 1 along attrs.axis; alg NNRT_ARG_MAX or NNRT_ARG_MIN;
  ** the first index wins ties; NaN counts as the largest value. */
  NNRT_OP_ARGREDUCE = 8,
  /* in a [..., M, K], b [..., K, N], bias [opt] [N]; out c [..., M, N]. Batch dims of a and b have
  ** c's batch dims (stride 0 where broadcast). A transposed operand is a strided view. attrs.fused
  ** (nnrt_unary_alg or 0) is applied to a*b+bias, with attrs.alpha for LEAKY_RELU/ELU. */
  NNRT_OP_MATMUL = 9,
  /* in x; out y; alg NNRT_SOFTMAX or NNRT_LOG_SOFTMAX along attrs.axis. */
  NNRT_OP_SOFTMAX = 10,
  /* in dy, y (the forward output); out dx; alg and axis as in the forward op. */
  NNRT_OP_SOFTMAX_BACKWARD = 11,
  /* in x [N,C,H,W], w [O,C/groups,KH,KW], bias [opt] [O]; out y [N,O,OH,OW]. attrs.stride, pad
  ** (top, left, bottom, right), dilation (1 = dense) and groups; attrs.fused as for MATMUL. */
  NNRT_OP_CONV2D = 12,
  /* in dy [N,O,OH,OW], w; out dx [N,C,H,W]; attrs as in the forward op (fused is 0). */
  NNRT_OP_CONV2D_BACKWARD_DATA = 13,
  /* in x, dy; out dw [O,C/groups,KH,KW], db [opt] [O]; attrs as in the forward op. */
  NNRT_OP_CONV2D_BACKWARD_WEIGHTS = 14,
  /* in x [N,C,H,W]; out y [N,C,OH,OW]; alg nnrt_pool_alg; attrs.kernel, stride, pad. Padded
  ** positions never win a max; a window that lies wholly in padding gives 0 (avg) or -inf (max). */
  NNRT_OP_POOL2D = 15,
  /* in dy, x (the forward input); out dx; alg and attrs as in the forward op. A max window passes
  ** its gradient to the first position holding the maximum. */
  NNRT_OP_POOL2D_BACKWARD = 16,
  /* Batch normalization over every dimension but 1 (channels) of x [N,C,...].
  ** Training (attrs.flags has NNRT_FLAG_TRAINING): in x, gamma [C], beta [C]; out y, mean [C],
  ** var [C] (the biased batch variance). Inference: in x, gamma, beta, mean, var; out y.
  ** y = gamma * (x - mean) / sqrt(var + attrs.eps) + beta. gamma, beta, mean, var are F32 whatever
  ** x's dtype is. */
  NNRT_OP_BATCHNORM = 17,
  /* in x, dy, mean, var, gamma; out dx, dgamma, dbeta; attrs.eps. The gradient of the training
  ** forward pass (mean and var are the batch statistics it returned). */
  NNRT_OP_BATCHNORM_BACKWARD = 18,
  /* in pred, target; out loss (rank 0, pred's dtype); alg nnrt_loss_alg. The loss is averaged over
  ** every element for MSE, L1, BCE and BCE_WITH_LOGITS, and over the N examples for the two class
  ** losses, whose pred is [N, C] and target is class indices [N] (I32 or I64) or a float [N, C]
  ** distribution. An index outside [0, C) is an error (NNRT_ERR_INVALID_ARGUMENT). */
  NNRT_OP_LOSS = 19,
  /* in pred, target; out dpred: the gradient of the LOSS above times scalar 0 (1 for the plain
  ** gradient; the loss scale in mixed precision). */
  NNRT_OP_LOSS_BACKWARD = 20,
  /* in x; out y, mask (U8: 1 kept, 0 dropped); attrs.alpha = the drop probability p in [0, 1);
  ** attrs.seed, args.counter as for RANDOM. y = x * mask / (1 - p). */
  NNRT_OP_DROPOUT = 21,
  /* in dy, mask; out dx = dy * mask / (1 - p); attrs.alpha = p. */
  NNRT_OP_DROPOUT_BACKWARD = 22,
  /* in table [V, D], indices [...] (I32 or I64); out y [..., D]: rows of the table. An index outside
  ** [0, V) is an error (NNRT_ERR_INVALID_ARGUMENT). */
  NNRT_OP_GATHER = 23,
  /* in dy [..., D], indices [...]; out dtable [V, D] (overwritten): the sum of the dy rows of every
  ** index. The gradient of GATHER. */
  NNRT_OP_SCATTER_ADD = 24,
  /* A fused optimizer step, updated in place. in grad; out param, state0 [opt], state1 [opt] (all
  ** F32, same dims; outputs are read and written). alg nnrt_optimizer_alg; static hyperparameters in
  ** attrs; scalar 0 the learning rate, scalar 1 the step number t (1 for the first step), scalar 2
  ** a factor the gradient is multiplied by first (1, or the inverse loss scale, or a clipping
  ** factor). Then, per element: g = clamp(g, -clip_value, clip_value) when clip_value > 0;
  ** g += l2 * p + l1 * sign(p); p -= lr * weight_decay * p (decoupled); and the optimizer's rule.
  ** The rules and their states are those of nnrt_optimizer_alg, as in PyTorch. */
  NNRT_OP_OPTIMIZER_UPDATE = 25,
  /* Normalization over the trailing dims attrs.axis .. ndim-1 of x (0 <= axis < ndim), float
  ** dtypes: each of the leading positions (a "row") is normalized on its own. in x, gamma [opt],
  ** beta [opt] (F32, dims x.dims[axis..]; stride 0 repeats an element); out y [, mean, var] (F32,
  ** dims x.dims[0..axis): the row statistics the backward pass takes). alg nnrt_norm_alg, attrs.eps.
  **   LAYER  mean and var (biased) of each row: y = gamma * (x - mean) / sqrt(var + eps) + beta
  **   RMS    mean is 0 and var = mean(x^2) of each row: y = gamma * x / sqrt(var + eps) + beta
  ** An absent gamma is 1, an absent beta 0. Sums accumulate in f32 (f64 for f64 x). */
  NNRT_OP_LAYERNORM = 26,
  /* in x, dy, mean, var, gamma [opt]; out dx, dgamma [opt], dbeta [opt] (F32, gamma's dims); alg,
  ** attrs.axis and attrs.eps as in the forward pass, whose mean and var it takes. With N the
  ** elements of a row, xhat = (x - mean) / sqrt(var + eps) and g = gamma * dy:
  **   dx = (g - sum(g)/N - xhat * sum(g * xhat)/N) / sqrt(var + eps)   (RMS: without sum(g)/N)
  **   dgamma = sum over rows of dy * xhat; dbeta = sum over rows of dy. */
  NNRT_OP_LAYERNORM_BACKWARD = 27,
  /* Quantization to 8 bits. in x (F32); out y (U8 or I8) of x's dims, any strides:
  ** y = saturate(round_half_to_even(x / attrs.scale) + attrs.zero_point) into y's range; NaN gives
  ** the zero point. */
  NNRT_OP_QUANTIZE = 28,
  /* Integer matrix product, scaled to float. in a (U8 or I8) [M, K], b (I8) [K, N], scales (F32
  ** [N]: b's scale per column), bias [opt] (F32 [N]); out c (F32) [M, N]; any strides. With
  ** acc[m, n] = sum over k of (a[m, k] - attrs.zero_point) * b[k, n], exact in 32 bits (K * 255 * 128
  ** < 2^31): c = fused(attrs.scale * scales[n] * acc + bias[n]), attrs.fused and alpha/beta as for
  ** MATMUL. attrs.flags may have NNRT_FLAG_WEIGHTS_7BIT: the host promises |b| <= 63 (so that CPUs
  ** whose int8 instructions sum pairs of products in 16 bits, without VNNI, are exact). */
  NNRT_OP_MATMUL_INT8 = 29,
  /* Integer convolution, scaled to float. in x (U8 or I8) [N, C, H, W], w (I8) [O, C/groups, KH, KW],
  ** scales (F32 [O]), bias [opt] (F32 [O]); out y (F32) [N, O, OH, OW]; any strides. Windows as for
  ** CONV2D (attrs.stride, pad, dilation, groups); padding holds the zero point (a real 0). With acc
  ** the sum over a window of (x - attrs.zero_point) * w: y = fused(attrs.scale * scales[o] * acc +
  ** bias[o]), exact in 32 bits as for MATMUL_INT8, attrs.fused and NNRT_FLAG_WEIGHTS_7BIT as there. */
  NNRT_OP_CONV2D_INT8 = 30,
  /* Scaled dot-product attention, as one op: float dtypes, every operand of q's dtype. in q
  ** [N, H, Tq, D], k [N, H, Tk, D], v [N, H, Tk, Dv], mask [opt] (dims [N, H, Tq, Tk]; stride 0
  ** repeats along a dim, so one [Tq, Tk] or [N, 1, 1, Tk] mask serves every head); out o
  ** [N, H, Tq, Dv]; any strides (a head view of a [N, T, H * D] product needs no copy). alg
  ** nnrt_attention_alg, attrs.alpha the scale (1 / sqrt(D) for the usual attention). For each n, h
  ** and query row i, over the key rows j:
  **   s_ij = alpha * (q_i . k_j) + mask_ij       (CAUSAL: minus infinity where j > i + Tk - Tq)
  **   p_ij = softmax over j of s_ij;  o_i = sum over j of p_ij v_j
  ** CAUSAL takes the queries to be the last Tq of the Tk positions (Tq = Tk: each position sees
  ** itself and those before it; Tq = 1: a new position sees every key). A row whose scores are all
  ** minus infinity gives NaN, as SOFTMAX does. Sums accumulate in f32 (f64 for f64). Memory: a
  ** backend keeps scores for a block of query rows at a time, never a head's [Tq, Tk] matrix. */
  NNRT_OP_ATTENTION = 31,
  /* in q, k, v, dout (o's dims), mask [opt]; out dq, dk, dv (the dims of q, k and v); alg and alpha as
  ** in the forward pass, whose probabilities p it computes again row by row (no saved state):
  **   dv_j = sum over i of p_ij dout_i;  dp_ij = dout_i . v_j;  ds_ij = p_ij (dp_ij - sum_j p_ij dp_ij)
  **   dq_i = alpha * sum over j of ds_ij k_j;  dk_j = alpha * sum over i of ds_ij q_i
  ** The mask gets no gradient. */
  NNRT_OP_ATTENTION_BACKWARD = 32,
  NNRT_OP_KIND_COUNT = 33 /* one past the last kind; grows as kinds are appended */
} nnrt_op_kind;

/* The slots of nnrt_op_args.scalars that the kinds above read (nnrt/kernels/op_manifest.h lists
** how many each kind reads; the others are 0). */
#define NNRT_SCALAR_FILL_VALUE 0    /* FILL: the value */
#define NNRT_SCALAR_RANDOM_A 0      /* RANDOM: UNIFORM's low, NORMAL's mean */
#define NNRT_SCALAR_RANDOM_B 1      /* RANDOM: UNIFORM's high, NORMAL's std */
#define NNRT_SCALAR_LOSS_SCALE 0    /* LOSS_BACKWARD: the factor on the gradient */
#define NNRT_SCALAR_LEARNING_RATE 0 /* OPTIMIZER_UPDATE */
#define NNRT_SCALAR_STEP 1          /* OPTIMIZER_UPDATE: t, 1 for the first step */
#define NNRT_SCALAR_GRAD_FACTOR 2   /* OPTIMIZER_UPDATE: the factor the gradient is multiplied by first */

typedef enum nnrt_unary_alg {
  NNRT_UNARY_NONE = 0, /* as attrs.fused: no activation */
  NNRT_UNARY_IDENTITY = 1,
  NNRT_UNARY_NEG = 2,
  NNRT_UNARY_ABS = 3,
  NNRT_UNARY_EXP = 4,
  NNRT_UNARY_LOG = 5,
  NNRT_UNARY_SQRT = 6,
  NNRT_UNARY_SQUARE = 7,
  NNRT_UNARY_RELU = 8,
  NNRT_UNARY_LEAKY_RELU = 9, /* x > 0 ? x : alpha * x */
  NNRT_UNARY_ELU = 10,       /* x > 0 ? x : alpha * (exp(x) - 1) */
  NNRT_UNARY_GELU = 11,      /* x * Phi(x), with erf */
  NNRT_UNARY_SIGMOID = 12,
  NNRT_UNARY_TANH = 13,
  NNRT_UNARY_LINEAR = 14, /* alpha * x + beta */
  NNRT_UNARY_CLIP = 15,   /* min(max(x, alpha), beta) */
  NNRT_UNARY_SIGN = 16,   /* -1, 0 or 1 */
  NNRT_UNARY_SWISH = 17,  /* x * sigmoid(alpha * x); alpha 1 is SiLU */
  NNRT_UNARY_HARD_SIGMOID = 18, /* max(0, min(1, alpha * x + beta)) (PyTorch: 1/6, 1/2; ONNX: 0.2, 0.5) */
  NNRT_UNARY_HARD_SWISH = 19,   /* x * HARD_SIGMOID(x) with alpha, beta (PyTorch and ONNX: 1/6, 1/2) */
  NNRT_UNARY_GELU_TANH = 20,    /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
  NNRT_UNARY_ERF = 21,
  NNRT_UNARY_SOFTPLUS = 22 /* log(1 + exp(x)) */
} nnrt_unary_alg;
/* The last nnrt_unary_alg of this version of the ABI: a backend refuses algs above the one it was
** built with (an older plugin under a newer host says so instead of computing something else). */
#define NNRT_UNARY_LAST NNRT_UNARY_SOFTPLUS

typedef enum nnrt_binary_alg {
  NNRT_BINARY_ADD = 1,
  NNRT_BINARY_SUB = 2,
  NNRT_BINARY_MUL = 3,
  NNRT_BINARY_DIV = 4, /* integers: truncating; division by zero gives 0 */
  NNRT_BINARY_MAX = 5, /* NaN propagates */
  NNRT_BINARY_MIN = 6  /* NaN propagates */
} nnrt_binary_alg;

typedef enum nnrt_reduce_alg {
  NNRT_REDUCE_SUM = 1,
  NNRT_REDUCE_MEAN = 2,
  NNRT_REDUCE_MAX = 3,
  NNRT_REDUCE_MIN = 4,
  NNRT_REDUCE_SUM_SQUARES = 5 /* sum of x*x: gradient norms, and overflow checks (NaN/Inf show) */
} nnrt_reduce_alg;

typedef enum nnrt_argreduce_alg { NNRT_ARG_MAX = 1, NNRT_ARG_MIN = 2 } nnrt_argreduce_alg;

typedef enum nnrt_softmax_alg { NNRT_SOFTMAX = 1, NNRT_LOG_SOFTMAX = 2 } nnrt_softmax_alg;

typedef enum nnrt_pool_alg {
  NNRT_POOL_MAX = 1,
  NNRT_POOL_AVG_INCLUDE_PAD = 2, /* divide by the kernel area */
  NNRT_POOL_AVG_EXCLUDE_PAD = 3  /* divide by the window's positions inside the input */
} nnrt_pool_alg;

typedef enum nnrt_loss_alg {
  NNRT_LOSS_SOFTMAX_CROSS_ENTROPY = 1, /* pred are logits: -sum(t * log_softmax(pred)) / N */
  NNRT_LOSS_NLL = 2,                   /* pred are log-probabilities: -sum(t * pred) / N */
  NNRT_LOSS_MSE = 3,
  NNRT_LOSS_L1 = 4,
  NNRT_LOSS_BCE = 5,            /* pred are probabilities; each log is clamped at -100 */
  NNRT_LOSS_BCE_WITH_LOGITS = 6 /* pred are logits */
} nnrt_loss_alg;

typedef enum nnrt_norm_alg {
  NNRT_NORM_LAYER = 1, /* layer normalization: subtract each row's mean, divide by its deviation */
  NNRT_NORM_RMS = 2    /* RMS normalization: divide by each row's root mean square */
} nnrt_norm_alg;

typedef enum nnrt_attention_alg {
  NNRT_ATTENTION_FULL = 1,  /* every query row sees every key row (but what the mask hides) */
  NNRT_ATTENTION_CAUSAL = 2 /* a query row sees the key rows up to its own position */
} nnrt_attention_alg;

typedef enum nnrt_random_alg { NNRT_RANDOM_UNIFORM = 1, NNRT_RANDOM_NORMAL = 2 } nnrt_random_alg;

/* Optimizer rules (g is the gradient after the common steps of NNRT_OP_OPTIMIZER_UPDATE):
**  SGD      state0 = velocity when momentum > 0: v = momentum * v + g; g' = nesterov ? g + momentum
**           * v : v; p -= lr * g'. Without momentum: p -= lr * g (no state).
**  ADAGRAD  state0 = sum of squares: s += g^2; p -= lr * g / (sqrt(s) + eps).
**  ADAM     state0 = m, state1 = v: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
**           p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
**  ADAMW    ADAM with its weight decay decoupled (set attrs.weight_decay).
**  RMSPROP  state0 = mean square: s = rho s + (1-rho) g^2; p -= lr * g / (sqrt(s) + eps).
**  ADAMAX   state0 = m, state1 = u: m = b1 m + (1-b1) g; u = max(b2 u, |g| + eps);
**           p -= lr / (1 - b1^t) * m / u. */
typedef enum nnrt_optimizer_alg {
  NNRT_OPTIMIZER_SGD = 1,
  NNRT_OPTIMIZER_ADAGRAD = 2,
  NNRT_OPTIMIZER_ADAM = 3,
  NNRT_OPTIMIZER_ADAMW = 4,
  NNRT_OPTIMIZER_RMSPROP = 5,
  NNRT_OPTIMIZER_ADAMAX = 6
} nnrt_optimizer_alg;

/* attrs.flags bits. */
#define NNRT_FLAG_USE_DST 1u  /* UNARY_BACKWARD: the second input is the forward output */
#define NNRT_FLAG_TRAINING 2u /* BATCHNORM: training forward pass */
#define NNRT_FLAG_NESTEROV 4u /* OPTIMIZER_UPDATE, SGD: Nesterov momentum */
#define NNRT_FLAG_WEIGHTS_7BIT 8u /* MATMUL_INT8, CONV2D_INT8: every weight is within [-63, 63] */

/* Static attributes of an op: part of the descriptor, so part of the cache key. Members an op kind
** does not use are 0. Fixed in layout within ABI major 1, like nnrt_tensor_desc, and growing the
** same way: a later member takes the place of reserved space and is 0 for today's behaviour. */
typedef struct nnrt_op_attrs {
  int32_t alg;       /* the kind's algorithm enum */
  uint32_t flags;    /* NNRT_FLAG_* */
  int32_t axis;      /* SOFTMAX*, ARGREDUCE, LAYERNORM*: a dimension index (not negative) */
  uint32_t axes_mask;/* REDUCE: bit d set for each reduced dimension */
  int32_t fused;     /* MATMUL, CONV2D: nnrt_unary_alg applied to the result, 0 for none */
  int32_t groups;    /* CONV2D*: 1 for a dense convolution */
  int32_t kernel[2]; /* POOL2D*: [h, w] (convolutions take it from w's dims) */
  int32_t stride[2]; /* CONV2D*, POOL2D*: [h, w] */
  int32_t pad[4];    /* CONV2D*, POOL2D*: top, left, bottom, right */
  int32_t dilation[2]; /* CONV2D*: [h, w], 1 = dense */
  double alpha;      /* UNARY*, fused activations, DROPOUT*: see each alg; ATTENTION*: the scale */
  double beta;       /* UNARY*: see each alg */
  double eps;        /* BATCHNORM*, LAYERNORM*, OPTIMIZER_UPDATE */
  double momentum;   /* OPTIMIZER_UPDATE (SGD) */
  double beta1;      /* OPTIMIZER_UPDATE (ADAM, ADAMW, ADAMAX); RMSPROP: rho */
  double beta2;      /* OPTIMIZER_UPDATE (ADAM, ADAMW, ADAMAX) */
  double weight_decay; /* OPTIMIZER_UPDATE: decoupled */
  double l1;         /* OPTIMIZER_UPDATE */
  double l2;         /* OPTIMIZER_UPDATE */
  double clip_value; /* OPTIMIZER_UPDATE: 0 = no clipping */
  uint64_t seed;     /* RANDOM, DROPOUT */
  double scale;      /* QUANTIZE: y's scale; MATMUL_INT8, CONV2D_INT8: the scale of a or x */
  int32_t zero_point;  /* QUANTIZE: y's zero point; MATMUL_INT8, CONV2D_INT8: that of a or x */
  int32_t reserved_int; /* 0 */
  uint64_t reserved[6]; /* 0; room for attributes of later op kinds and algorithms */
} nnrt_op_attrs;

/* A complete description of one operation. The host zero-fills it before filling it in, so that
** two equal descriptors compare equal byte for byte. */
typedef struct nnrt_op_desc {
  uint32_t struct_size; /* sizeof(nnrt_op_desc) of the writer */
  int32_t kind;         /* nnrt_op_kind */
  int32_t n_inputs;
  int32_t n_outputs;
  nnrt_tensor_desc inputs[NNRT_OP_MAX_INPUTS];
  nnrt_tensor_desc outputs[NNRT_OP_MAX_OUTPUTS];
  nnrt_op_attrs attrs;
} nnrt_op_desc;

/* ============================================================================================== */
/* The table                                                                                      */
/* ============================================================================================== */

typedef enum nnrt_device_kind { NNRT_DEVICE_CPU = 1, NNRT_DEVICE_GPU = 2 } nnrt_device_kind;

/* The host's thread pool of a context: an opaque handle a backend passes back to
** host->parallel_for and host->pool_threads, and never dereferences. */
typedef struct nnrt_host_pool nnrt_host_pool;

/* Opaque objects a backend defines. */
typedef struct nnrt_backend_instance nnrt_backend_instance; /* one device opened for one context */
typedef struct nnrt_backend_op nnrt_backend_op;             /* a created op (primitive, plan) */
typedef struct nnrt_stream nnrt_stream;                     /* an in-order queue of device work */
typedef struct nnrt_event nnrt_event;                       /* a point in a stream's work */

/* Properties of one device. */
typedef struct nnrt_device_props {
  uint32_t struct_size;
  int32_t kind;           /* nnrt_device_kind */
  char name[128];         /* "AMD EPYC (avx512_core_bf16)", "NVIDIA A100-SXM4-40GB" */
  uint64_t memory_bytes;  /* total device memory, 0 if unknown */
  int32_t compute_major;  /* GPU compute capability, 0 for CPUs */
  int32_t compute_minor;
  int32_t cores;          /* CPU cores or GPU multiprocessors, 0 if unknown */
  uint32_t native_dtypes; /* bit (1u << dtype) for each dtype the device computes natively */
} nnrt_device_props;

/* A device's current load, for the training progress (device_status). Every member but struct_size
** is -1 when the backend cannot tell. */
typedef struct nnrt_device_status {
  uint32_t struct_size;
  int32_t utilization_percent; /* of the last sampling period, 0..100 */
  int32_t temperature_celsius;
  int32_t reserved;            /* 0 */
  int64_t memory_used_bytes;   /* by every process on the device */
  int64_t memory_total_bytes;
} nnrt_device_status;

/* What the host asks a backend to open. */
typedef struct nnrt_device_config {
  uint32_t struct_size;
  int32_t device;        /* index, 0 .. device_count - 1 */
  int32_t threads;       /* host threads the backend may use */
  int32_t deterministic; /* 1: results must not vary from run to run */
  nnrt_host_pool *pool;  /* the context's thread pool, for host->parallel_for; may be NULL */
} nnrt_device_config;

/* The arguments of one op_run. */
typedef struct nnrt_op_args {
  uint32_t struct_size;
  int32_t n_inputs;
  int32_t n_outputs;
  int32_t reserved;
  const void *const *inputs; /* device pointers to element 0 of each input, per the descriptor */
  void *const *outputs;
  void *workspace;           /* workspace_bytes of device memory, as op_create asked; or NULL */
  size_t workspace_bytes;
  nnrt_stream *stream;       /* the context's stream; work may complete after op_run returns */
  double scalars[NNRT_OP_MAX_SCALARS]; /* per-call values, see each op kind */
  uint64_t counter;          /* RNG counter (NNRT_OP_RANDOM); w's version (see "Ops" above) */
} nnrt_op_args;

/* Directions of memcpy_async. */
typedef enum nnrt_copy_kind {
  NNRT_COPY_HOST_TO_DEVICE = 1,
  NNRT_COPY_DEVICE_TO_HOST = 2,
  NNRT_COPY_DEVICE_TO_DEVICE = 3
} nnrt_copy_kind;

/* Table flags. */
#define NNRT_BACKEND_HOST_MEMORY 1u /* device pointers are host pointers; memory functions unused */

/* The function table a backend returns. Every function pointer is required unless marked
** "optional" (NULL allowed). */
typedef struct nnrt_backend_v1 {
  uint32_t struct_size; /* sizeof(nnrt_backend_v1) of the plugin */
  uint32_t abi_major;   /* NNRT_BACKEND_ABI_MAJOR of the plugin */
  const char *name;     /* short lowercase name, as in the context option "backend": "onednn" */
  const char *version;  /* human-readable version of the backend and its vendor library */
  int32_t kind;         /* nnrt_device_kind */
  uint32_t flags;       /* NNRT_BACKEND_* */

  /* Can this backend run here? Returns a score (> 0: usable; higher is preferred among backends of
  ** the same device kind; the reference backend scores 1) and sets *device_count; or returns 0 and
  ** writes into reason (NUL-terminated, at most reason_cap bytes) why not, such as "no CUDA device:
  ** cudaGetDeviceCount returned 100 (no CUDA-capable device is detected)". Cheap; may be called
  ** more than once. */
  int32_t (*probe)(int32_t *device_count, char *reason, size_t reason_cap);

  /* Fills *props (whose struct_size the host set) for device index `device`. */
  nnrt_status (*device_props)(int32_t device, nnrt_device_props *props);

  /* Opens a device for one context: its engine, handles, stream. close releases everything open
  ** made, after all ops created from it are destroyed and all its memory is freed. */
  nnrt_status (*open)(const nnrt_device_config *config, nnrt_backend_instance **out);
  void (*close)(nnrt_backend_instance *instance);

  /* Device memory; NULL when flags has NNRT_BACKEND_HOST_MEMORY. mem_alloc returns memory aligned
  ** to at least 256 bytes, or NNRT_ERR_OUT_OF_MEMORY. The host caches freed blocks itself. */
  nnrt_status (*mem_alloc)(nnrt_backend_instance *instance, size_t bytes, void **out);
  void (*mem_free)(nnrt_backend_instance *instance, void *ptr);
  /* Page-locked host memory for staging copies (optional; used together with the events below). */
  nnrt_status (*host_alloc)(nnrt_backend_instance *instance, size_t bytes, void **out);
  void (*host_free)(nnrt_backend_instance *instance, void *ptr);
  /* Queues a copy or a memset on the stream; both may complete after the call returns. A host
  ** source or destination must stay untouched until the copy completed: the host waits for the
  ** stream (stream_synchronize) or for an event recorded after the copy (event_synchronize) before
  ** it reuses the memory. A copy from host_alloc memory may run while the host goes on. */
  nnrt_status (*memcpy_async)(nnrt_backend_instance *instance, void *dst, const void *src,
                              size_t bytes, int32_t copy_kind, nnrt_stream *stream);
  nnrt_status (*memset_async)(nnrt_backend_instance *instance, void *dst, int value, size_t bytes,
                              nnrt_stream *stream);

  /* Streams: the host makes one per context and synchronizes before it reads results on the host.
  ** Optional for host-memory backends that complete all work inside op_run. */
  nnrt_status (*stream_create)(nnrt_backend_instance *instance, nnrt_stream **out);
  void (*stream_destroy)(nnrt_backend_instance *instance, nnrt_stream *stream);
  nnrt_status (*stream_synchronize)(nnrt_backend_instance *instance, nnrt_stream *stream);

  /* Returns 1 if op_create would accept this descriptor, 0 if not. Cheap, no side effects. */
  int32_t (*supports)(nnrt_backend_instance *instance, const nnrt_op_desc *desc);

  /* Creates an op for a descriptor (building primitives, plans, reorders) and sets
  ** *workspace_bytes to the scratch memory each op_run needs (0 for none). The op is reused for
  ** every call with an equal descriptor; the descriptor is not kept by reference. Returns
  ** NNRT_ERR_UNSUPPORTED for a descriptor it does not handle. */
  nnrt_status (*op_create)(nnrt_backend_instance *instance, const nnrt_op_desc *desc,
                           nnrt_backend_op **out, size_t *workspace_bytes);
  /* Runs an op on the data in args. May be called from several threads at once. */
  nnrt_status (*op_run)(nnrt_backend_op *op, const nnrt_op_args *args);
  void (*op_destroy)(nnrt_backend_op *op);

  /* ---- Added within ABI major 1: read only when struct_size covers them (NNRT_HAS_MEMBER). ----
  **
  ** Events: ordering between two streams of one instance, so that the host can copy the next batch
  ** to the device on a second stream (made with stream_create) while the context's stream computes.
  ** Optional, all five or none; the host uses them only together with host_alloc and host_free, for
  ** a device-memory backend. Without them the host copies batches on the context's stream and waits
  ** for each copy.
  **
  ** How the host uses them, per batch: it writes the batch into a host_alloc buffer, queues
  ** stream_wait_event(copy stream, E_free) and the host-to-device copy on the copy stream, then
  ** event_record(E_copied, copy stream); before the batch is used, stream_wait_event(context stream,
  ** E_copied) and a device-to-device copy out of the staging buffer on the context stream, then
  ** event_record(E_free, context stream). Before it writes that host buffer again it calls
  ** event_synchronize(E_copied). */
  /* Creates an event that has not been recorded (waiting for it returns at once). */
  nnrt_status (*event_create)(nnrt_backend_instance *instance, nnrt_event **out);
  /* Destroys an event; the host does so only when no stream waits for it any longer. */
  void (*event_destroy)(nnrt_backend_instance *instance, nnrt_event *event);
  /* Marks the point of `stream` after all the work queued on it so far. Recording again moves the
  ** mark. Does not wait. */
  nnrt_status (*event_record)(nnrt_backend_instance *instance, nnrt_event *event, nnrt_stream *stream);
  /* Work queued on `stream` after this call starts only once the work before the event's mark has
  ** completed. Does not block the calling thread. */
  nnrt_status (*stream_wait_event)(nnrt_backend_instance *instance, nnrt_stream *stream, nnrt_event *event);
  /* Blocks the calling thread until the work before the event's mark has completed. */
  nnrt_status (*event_synchronize)(nnrt_backend_instance *instance, nnrt_event *event);

  /* Optional: fills *status (whose struct_size the host set) with the device's current load, -1
  ** for what the backend cannot tell (a GPU backend without NVML sets every member to -1 and still
  ** returns NNRT_OK). The host calls it at most about once a second while training. */
  nnrt_status (*device_status)(nnrt_backend_instance *instance, nnrt_device_status *status);

  /* Optional, CPU backends only: runs chunk(i, user) once for every i in [0, chunks) on the
  ** backend's own worker threads, the calling thread taking part, and returns when all are done.
  ** For a backend whose library keeps a team of threads of its own (oneDNN's OpenMP team). The host
  ** then runs its parallel work for a context opened on this backend (host->parallel_for, which
  ** the reference backend's ops use) on that team instead of its own pool. Why: with
  ** two sets of threads taking turns on the same cores, each set's threads sleep while the other
  ** works and must be woken at every switch, and on a virtual machine a wake-up can cost as much as
  ** a small op. The host still decides the chunks (bounds depend only on n, grain and the context's
  ** thread count), so results do not change; chunks is at most the context's thread count. chunk
  ** does not throw, and never calls op_run: work that runs ops (a trainer's workers) stays on the
  ** host's pool, because a library like oneDNN sizes a kernel's team when it creates it and cannot
  ** run it inside its own parallel region. A call from inside a chunk may run its chunks one after
  ** another on the calling thread. It needs no instance: the host may call it from any thread. */
  void (*parallel_run)(int64_t chunks, void (*chunk)(int64_t index, void *user), void *user);

  /* The largest dim of any input or output, and the most elements of any one input or output, of
  ** an op the backend handles; 0 = no limit. A vendor library may count in 32 bits inside (oneDNN's
  ** primitive creation divides by zero for an output dim of 2^31), so a backend declares what it
  ** takes, and ops beyond it are refused before its code sees them: supports() answers 0 and
  ** op_create() returns NNRT_ERR_UNSUPPORTED naming the dim and the limit (the plugin kit,
  ** nnrt/plugin_kit.hpp, does this), and the host runs the op on the reference backend. */
  int64_t max_dim;
  int64_t max_elements;
} nnrt_backend_v1;

/* What the host gives a backend: its services. */
typedef struct nnrt_host_api {
  uint32_t struct_size;
  uint32_t abi_major; /* NNRT_BACKEND_ABI_MAJOR of the host */
  /* Logs a message (level NNRT_LOG_*) through the application's log callback. */
  void (*log)(int level, const char *message);
  /* Sets the message of the failure the backend is about to return, for nnrt_last_error(). */
  void (*set_error)(const char *message);
  /* Runs fn(begin, end, user) over [0, n) in chunks of at least `grain` on the pool given in
  ** nnrt_device_config, and returns when all chunks are done. Chunk bounds depend only on n, grain
  ** and the pool's thread count, so results are deterministic for a given thread count. The
  ** calling thread takes part. fn must not throw. */
  void (*parallel_for)(nnrt_host_pool *pool, int64_t n, int64_t grain,
                       void (*fn)(int64_t begin, int64_t end, void *user), void *user);
  /* Returns the pool's thread count (1 for a NULL pool). */
  int32_t (*pool_threads)(nnrt_host_pool *pool);
} nnrt_host_api;

/* The entry point every plugin exports. */
typedef const nnrt_backend_v1 *(*nnrt_backend_entry_fn)(uint32_t host_abi,
                                                        const nnrt_host_api *host);

/* Registers a backend linked into the program (a static build), as if a plugin with this entry
** point had been found. Call it before creating contexts; contexts created afterwards see it. The
** entry point is called at once; registering the same name twice is NNRT_ERR_INVALID_ARGUMENT.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL entry; NNRT_ERR_VERSION when the table's
** ABI major differs from the host's; NNRT_ERR_BACKEND when the entry point returns NULL (the
** message is the backend's). */
NNRT_API nnrt_status nnrt_register_backend(nnrt_backend_entry_fn entry);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNRT_BACKEND_H */
