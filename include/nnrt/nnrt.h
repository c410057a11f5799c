/*
** nnrt.h - the public C API of nnrt, an embeddable deep-learning runtime.
**
** This header is the reference manual. Every function below has a comment that says what it does,
** who owns what, and which status codes it returns. It is C99, compiles as C++, and includes only
** <stddef.h> and <stdint.h>.
**
** Conventions that hold for every function:
**
**  - A fallible function returns an nnrt_status; NNRT_OK is 0. On failure its out-parameters are
**    left untouched and nnrt_last_error() returns a message for the calling thread that says what
**    was expected and what was given.
**  - Objects returned through `**out` are owned by the caller, who releases them with the matching
**    nnrt_X_release(). Releasing NULL does nothing. Release order is free: an object keeps alive
**    what it depends on (an array its context, a trainer its model), and memory goes when the last
**    user lets go.
**  - Strings come back in the caller's buffer, snprintf-style: (buf, cap, len) writes at most cap-1
**    bytes plus a NUL and sets *len to the full length (without the NUL). Call with cap = 0 (buf may
**    then be NULL) to ask for the size. Nothing is allocated for the caller to free.
**  - Configuration is UTF-8 JSON text. An unknown key, or a value of the wrong type, is
**    NNRT_ERR_INVALID_ARGUMENT with a message naming the key; nothing is silently ignored. So is
**    JSON nested deeper than 64 levels, a key given twice in one object, or a number beyond the
**    range of a double.
**  - Sizes computed from what a caller gives (shapes, attributes, layer widths) are checked: one
**    whose element or byte count overflows is NNRT_ERR_INVALID_ARGUMENT, and an array larger than
**    the device's memory is NNRT_ERR_OUT_OF_MEMORY without an attempt to allocate it.
**  - Shapes are int64_t, ranks int32_t (at most NNRT_MAX_DIMS), byte counts size_t.
**  - A handle of the wrong type (an array passed where a model is expected) is detected and refused
**    with NNRT_ERR_INVALID_ARGUMENT. Using a handle after releasing it is undefined behaviour.
**  - nnrt never aborts, exits, or prints to stdout. It logs through a callback (default: stderr,
**    warnings and errors only; see nnrt_set_log_callback and NNRT_LOG_LEVEL).
**
** Thread safety: contexts, models and run options may be shared between threads; arrays, datasets
** and evaluations are immutable once made (the output of nnrt_model_predict_into excepted) and may
** be used from many threads at once (several trainers
** may fit on one dataset while others evaluate on it); a trainer is used by one thread at a time
** (nnrt_trainer_cancel excepted). A binding may move any object between threads.
**
** Environment variables read when a context is created:
**   NNRT_BACKEND_PATH           ':'-separated folders searched for backend plugins, before the
**                               folder holding libnnrt itself and the install libdir.
**   NNRT_BACKEND_PRIORITY_CPU   integer priority of CPU backends (default 0).
**   NNRT_BACKEND_PRIORITY_GPU   integer priority of GPU backends (default 100); the device kind
**                               with the highest priority that has a usable backend is selected.
**   NNRT_LOG_LEVEL              debug | info | warn | error (default warn).
**   NNRT_NUM_THREADS            default thread count when the context options do not give one.
**   NNRT_POISON_MEMORY          nan | large: fill every block of memory nnrt hands out (arrays,
**                               workspaces) with NaN bytes (0xff) or 0x7f bytes (3.4e38), read once.
**                               A debugging aid that shows results computed from memory nothing
**                               wrote; it costs a pass over every block. Unset: no filling.
**
** nnrt never changes its process's environment, and needs none of it set. The oneDNN plugin runs on
** GNU OpenMP, whose threads spin for a moment at every barrier (about 300000 iterations) and then
** sleep, so a process that waits uses no CPU. That spin is OpenMP's, read once per process when
** the first plugin loads it (OMP_WAIT_POLICY, GOMP_SPINCOUNT): no context option can change it, and
** the thread count per context ("threads") is what nnrt controls. OpenMP's defaults need no
** change: LeNet training at 2 threads on a quiet 2-core machine ran within 10% of its speed with
** GOMP_SPINCOUNT=10000, and faster than that with the other core busy; OMP_WAIT_POLICY=passive
** halved it. The `nnrt` command sets GOMP_SPINCOUNT=10000 when neither variable is set.
*/
#ifndef NNRT_H
#define NNRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NNRT_API marks the exported functions. On Windows a program that links the static library
** defines NNRT_STATIC before including this header (a DLL import would not resolve there); the
** library's own build defines NNRT_BUILDING_LIBRARY. Elsewhere neither define changes anything. */
#if defined(_WIN32) && defined(NNRT_STATIC)
#define NNRT_API
#elif defined(_WIN32) && defined(NNRT_BUILDING_LIBRARY)
#define NNRT_API __declspec(dllexport)
#elif defined(_WIN32)
#define NNRT_API __declspec(dllimport)
#elif defined(__GNUC__)
#define NNRT_API __attribute__((visibility("default")))
#else
#define NNRT_API
#endif

/* ============================================================================================== */
/* Version and errors                                                                             */
/* ============================================================================================== */

#define NNRT_VERSION_MAJOR 0
#define NNRT_VERSION_MINOR 1
#define NNRT_VERSION_PATCH 0
#define NNRT_ABI_VERSION 1 /* the soname major; bumped only on an incompatible change */

/* The largest rank of an array. */
#define NNRT_MAX_DIMS 8

/* Returns the NNRT_ABI_VERSION the library was built with. A program compiled against this header
** can compare it with its own NNRT_ABI_VERSION to detect a mismatched library at run time. */
NNRT_API uint32_t nnrt_abi_version(void);

/* Returns the library version as a static string, "MAJOR.MINOR.PATCH" (e.g. "0.1.0"). Never NULL;
** the caller must not free it. */
NNRT_API const char *nnrt_version_string(void);

/* Status codes. Values never change meaning; new ones are appended. */
typedef enum nnrt_status {
  NNRT_OK = 0,
  NNRT_ERR_INVALID_ARGUMENT = 1, /* NULL where not allowed, bad value, unknown JSON key, wrong handle */
  NNRT_ERR_OUT_OF_MEMORY = 2,
  NNRT_ERR_SHAPE = 3,       /* shapes do not fit together; the message gives both */
  NNRT_ERR_DTYPE = 4,       /* a dtype the operation does not accept */
  NNRT_ERR_UNSUPPORTED = 5, /* a valid request this build or backend cannot do */
  NNRT_ERR_BACKEND = 6,     /* a backend failed to load or failed at run time */
  NNRT_ERR_NO_DEVICE = 7,   /* the requested device does not exist here */
  NNRT_ERR_IO = 8,          /* a file could not be opened, read or written */
  NNRT_ERR_CORRUPT = 9,     /* a file or buffer is malformed, truncated or fails its checksum */
  NNRT_ERR_VERSION = 10,    /* a file or plugin from an incompatible version */
  NNRT_ERR_CANCELLED = 11,  /* stopped by nnrt_trainer_cancel, nnrt_run_options_cancel or an abort callback */
  NNRT_ERR_INTERNAL = 12,   /* a bug in nnrt: please report it with the message */
  NNRT_ERR_DEADLINE_EXCEEDED = 13, /* a call ran past its run options' timeout (nnrt_run_options_set_timeout) */
  /* Not a status. It makes the enum span every int32 value in C and C++ alike, so that nnrt can
  ** check any value a caller passes in rather than meet undefined behaviour. */
  NNRT_STATUS_FORCE_INT32 = 0x7fffffff
} nnrt_status;

/* Returns the name of a status as a static string ("NNRT_ERR_SHAPE"), or "NNRT_ERR_UNKNOWN" for a
** value that is not a status. Never NULL. */
NNRT_API const char *nnrt_status_name(nnrt_status s);

/* Returns the message of the last failed call on this thread, or "" if none failed yet. The string
** is owned by nnrt and stays valid until the next nnrt call on this thread; copy it to keep it.
** A successful call does not clear it. Never NULL. */
NNRT_API const char *nnrt_last_error(void);

/* Log levels passed to a log callback. */
#define NNRT_LOG_DEBUG 0
#define NNRT_LOG_INFO 1
#define NNRT_LOG_WARN 2
#define NNRT_LOG_ERROR 3

/* A log callback: `level` is one of NNRT_LOG_*, `message` is valid only during the call, `user` is
** the pointer given to nnrt_set_log_callback. It may be called from any thread nnrt runs on, and
** must not call back into nnrt. */
typedef void (*nnrt_log_fn)(int level, const char *message, void *user);

/* Sends nnrt's log messages of level >= min_level to fn (process-wide). A NULL fn restores the
** default: lines on stderr. min_level outside NNRT_LOG_DEBUG..NNRT_LOG_ERROR is clamped. The
** default minimum level is NNRT_LOG_WARN, or the level named by NNRT_LOG_LEVEL. */
NNRT_API void nnrt_set_log_callback(nnrt_log_fn fn, void *user, int min_level);

/* ============================================================================================== */
/* Handles and dtypes                                                                             */
/* ============================================================================================== */

/* Opaque handles. Each is created by an nnrt function and released by its nnrt_X_release. */
typedef struct nnrt_context nnrt_context; /* backend, device, threads, memory cache */
typedef struct nnrt_array nnrt_array;     /* a typed n-dimensional array on the context's device */
typedef struct nnrt_dataset nnrt_dataset; /* examples and labels, in host memory, ready for batching */
typedef struct nnrt_model nnrt_model;     /* a network built from a JSON config, with its parameters */
typedef struct nnrt_trainer nnrt_trainer; /* an optimizer, its state, and the training loop */
typedef struct nnrt_evaluation nnrt_evaluation; /* metrics of a model on a dataset */
typedef struct nnrt_run_options nnrt_run_options; /* cancellation and a timeout for calls that run long */

/* Element types. */
typedef enum nnrt_dtype {
  NNRT_DTYPE_F32 = 1,
  NNRT_DTYPE_F64 = 2,
  NNRT_DTYPE_F16 = 3,  /* IEEE 754 binary16 */
  NNRT_DTYPE_BF16 = 4, /* bfloat16: the upper half of an f32 */
  NNRT_DTYPE_I32 = 5,
  NNRT_DTYPE_I64 = 6,
  NNRT_DTYPE_U8 = 7,
  NNRT_DTYPE_BOOL = 8, /* one byte, 0 or 1 */
  NNRT_DTYPE_I8 = 9,   /* signed byte: quantized weights (nnrt_model_quantize); copied, not computed on */
  /* Not a dtype (see NNRT_STATUS_FORCE_INT32): any int32 passed as a dtype is checked. */
  NNRT_DTYPE_FORCE_INT32 = 0x7fffffff
} nnrt_dtype;

/* Returns the size in bytes of one element of type t, or 0 if t is not an nnrt_dtype. */
NNRT_API size_t nnrt_dtype_size(nnrt_dtype t);

/* ============================================================================================== */
/* Context: backend, device, threads, memory cache                                                */
/* ============================================================================================== */

/* Creates a context: the backend and device that arrays live on and ops run on, a thread pool and a
** memory cache. `options_json` may be NULL or "{}" for the defaults, or a JSON object with any of:
**
**   "backend"        "auto" (default: the best usable backend, chosen by device-kind priority and
**                    then by score), "reference" (the built-in portable backend), "onednn",
**                    "cudnn", or the name of any loaded plugin.
**   "device"         device index on that backend (default 0).
**   "strict"         true: an op the selected backend cannot run is an error (NNRT_ERR_UNSUPPORTED)
**                    instead of falling back to the reference backend. Default false.
**   "threads"        worker threads (default NNRT_NUM_THREADS, else the number of CPUs); >= 1.
**   "deterministic"  true: bit-identical results for the same inputs, seed and thread count.
**                    Without it, backends may choose kernels by timing them (the oneDNN backend
**                    times each convolution's candidate layouts once per shape and process), and
**                    may sum in any order (atomics), so runs can differ in the last bits.
**   "seed"           integer seed for random operations and model initialisation (default 0).
**   "default_dtype"  "f32" (default), "f16" or "bf16": the floating-point type models compute in.
**   "map_checkpoints" true (default): nnrt_model_load and nnrt_trainer_restore map checkpoint
**                    files rather than read them, and a model loaded on a host-memory backend
**                    uses the mapped bytes as its parameters (see nnrt_model_load); false: read.
**   "cache"          {"max_cached_bytes": n, "max_block_bytes": n, "max_total_bytes": n}: the memory
**                    cache (one per device) keeps at most n bytes of freed blocks for reuse, and
**                    never caches a block larger than max_block_bytes. Defaults: 1 GiB and 256 MiB
**                    for host memory; a GPU's cache, when neither is given, keeps every freed block
**                    (both limits are the device's memory) and frees them only when an allocation
**                    fails, before it is tried again, and with the context. 0 disables caching. max_total_bytes is a hard limit on the memory in use plus
**                    cached (default 0: none); past it an allocation, after the cache is freed and
**                    it is tried again, fails with NNRT_ERR_OUT_OF_MEMORY, whose message names the
**                    bytes asked for, in use and cached.
**
** Plugins are searched as described at the top of this header; a plugin that fails to load is listed
** in nnrt_context_describe with the reason and never stops the context from working.
**
** Returns NNRT_OK and a new context in *out (release with nnrt_context_release);
** NNRT_ERR_INVALID_ARGUMENT for out == NULL, malformed JSON, an unknown key or a wrong type (the
** message names the key), or an unknown backend name; NNRT_ERR_NO_DEVICE when the named backend
** loads but has no device here, or the device index does not exist; NNRT_ERR_BACKEND when the named
** backend's plugin failed to load or to open the device. */
NNRT_API nnrt_status nnrt_context_create(const char *options_json, nnrt_context **out);

/* Releases the caller's reference to a context. Arrays (and other objects) created from it keep it
** alive until they are released too. NULL does nothing. */
NNRT_API void nnrt_context_release(nnrt_context *ctx);

/* Describes the context as JSON text, written into buf as the conventions above say. The object has
** at least: "version", "abi", "backend" (the selected backend's name), "device" (index), "threads",
** "deterministic", "strict", "default_dtype", "map_checkpoints", "backends" (every usable backend,
** the reference one included: {"name", "kind", "score", "selected", "version"}), "plugins" (every
** plugin file found: {"name", "path", "loaded", "error"}, where "error" says why it did not load, such as a missing
** dependency or a version mismatch), "comms" (every communicator plugin file found, see
** nnrt_comm.h: {"name", "path", "loaded", "error", "version"}), "devices" (the selected backend's devices: {"index", "name",
** "kind", "memory_bytes"}), "cache" ({"allocated_bytes", "cached_bytes", "peak_bytes", "hits",
** "misses", "max_cached_bytes", "max_block_bytes", "max_total_bytes"}) and "onnx" (the ONNX converter
** plugin, see nnrt_model_import_onnx: {"path", "loaded", and "version" or "error"}; describing loads
** it).
**
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong ctx, len == NULL, or buf == NULL
** with cap > 0. */
NNRT_API nnrt_status nnrt_context_describe(nnrt_context *ctx, char *buf, size_t cap, size_t *len);

/* ============================================================================================== */
/* Arrays                                                                                         */
/* ============================================================================================== */

/* Creates a zero-filled array of the given dtype and shape on the context's device. `ndim` is 0 (a
** scalar) to NNRT_MAX_DIMS; `shape` has ndim entries, each >= 0 (a 0 makes an empty array), and may
** be NULL when ndim is 0.
**
** Returns NNRT_OK and the array in *out (release with nnrt_array_release); NNRT_ERR_INVALID_ARGUMENT
** for a NULL or wrong ctx, out == NULL, shape == NULL with ndim > 0, ndim < 0 or > NNRT_MAX_DIMS, a
** negative dimension, or an element count that overflows; NNRT_ERR_DTYPE for an unknown dtype;
** NNRT_ERR_OUT_OF_MEMORY when the device has no room. */
NNRT_API nnrt_status nnrt_array_create(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim,
                                       const int64_t *shape, nnrt_array **out);

/* Creates an array like nnrt_array_create and copies `nbytes` bytes of row-major (C-order) element
** data from host memory at `data` into it. nbytes must equal the element count times
** nnrt_dtype_size(dtype). The caller keeps ownership of data; nnrt does not keep the pointer. BOOL
** elements must be 0 or 1. data may be NULL only when nbytes is 0.
**
** Returns NNRT_OK and the array in *out; the errors of nnrt_array_create; NNRT_ERR_INVALID_ARGUMENT
** when nbytes does not match (the message gives both sizes) or data is NULL. */
NNRT_API nnrt_status nnrt_array_from_host(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim,
                                          const int64_t *shape, const void *data, size_t nbytes,
                                          nnrt_array **out);

/* Called by nnrt, once, when it no longer uses memory the caller lent it with nnrt_array_wrap_host;
** `data` and `user` are the values given there. It may run on any thread nnrt uses; it must not
** call back into nnrt. */
typedef void (*nnrt_release_fn)(void *data, void *user);

/* Makes an array of the caller's own host memory, without copying: ops, predictions
** (nnrt_model_predict, nnrt_model_predict_into) and nnrt_array_to_host read its elements where
** they lie, and nnrt_model_predict_into writes an output array made this way in place. `data`
** holds the elements of a `dtype` array of the given shape, element [i0, i1, ...] at
** data + (i0 * strides[0] + i1 * strides[1] + ...) * nnrt_dtype_size(dtype). `strides` counts
** elements, one per dimension, each >= 0 (NULL: row-major, contiguous); `nbytes` is the size of the
** memory at data, which must reach past the last element. data must be aligned to the dtype's size.
**
** Ownership: the caller keeps the memory, and must neither free it nor change it while nnrt may
** read it, until nnrt calls `release(data, user)` (may be NULL). nnrt calls it exactly once, on
** success only, when the last reference to the memory goes: the array's own (nnrt_array_release)
** and those of arrays that share it (views that nnrt_op's reshape and transpose may return). Calls
** that read the array (nnrt_op, predictions, nnrt_dataset_from_arrays, nnrt_model_set_param) keep
** no reference to it after they return, so a caller that wraps memory for one call, releases the
** array and sees release called may then reuse the memory. On failure nothing is kept and release
** is not called.
**
** Only backends whose arrays live in host memory (the reference and oneDNN backends) can use the
** caller's memory; on any other (a GPU) this returns NNRT_ERR_UNSUPPORTED, and nnrt_array_from_host
** copies instead.
**
** Returns NNRT_OK and the array in *out; the errors of nnrt_array_create; NNRT_ERR_INVALID_ARGUMENT
** for data == NULL with elements to hold, a negative stride, data not aligned to the dtype size, or
** nbytes too small for the last element (the message gives the bytes needed and given);
** NNRT_ERR_UNSUPPORTED on a backend whose arrays are not in host memory (the message names it). */
NNRT_API nnrt_status nnrt_array_wrap_host(nnrt_context *ctx, nnrt_dtype dtype, int32_t ndim, const int64_t *shape,
                                          const int64_t *strides, void *data, size_t nbytes,
                                          nnrt_release_fn release, void *user, nnrt_array **out);

/* Copies the array's elements, row-major, into host memory at `data`, which must hold exactly
** `nbytes` bytes: the element count times the dtype size (see nnrt_array_nbytes). Waits for pending
** device work on the array first. Safe to call from several threads on the same array.
**
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong array, data == NULL with
** nbytes > 0, or nbytes not equal to the array's size (the message gives both); NNRT_ERR_BACKEND
** when the device copy fails. */
NNRT_API nnrt_status nnrt_array_to_host(const nnrt_array *a, void *data, size_t nbytes);

/* Reads an array's dtype, rank and shape. Any out-parameter may be NULL to skip it. `shape`, when
** given, must have room for NNRT_MAX_DIMS entries; the first ndim are written.
**
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong array. */
NNRT_API nnrt_status nnrt_array_info(const nnrt_array *a, nnrt_dtype *dtype, int32_t *ndim,
                                     int64_t shape[NNRT_MAX_DIMS]);

/* Sets *nbytes to the array's size in bytes: the element count times the dtype size.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong array or nbytes == NULL. */
NNRT_API nnrt_status nnrt_array_nbytes(const nnrt_array *a, size_t *nbytes);

/* Releases the caller's reference to an array. Its memory returns to the context's cache once no
** other object uses it. NULL does nothing. */
NNRT_API void nnrt_array_release(nnrt_array *a);

/* Runs the operation `name` on the context's backend: ND4J-style array math by name. Reads
** n_inputs arrays, and writes n_outputs new arrays into outputs[0..n_outputs-1]; the caller owns
** them. `attrs_json` is NULL or a JSON object of attributes. Every input must belong to a context
** on the same backend and device as ctx.
**
** Binary, broadcasting like numpy (inputs of different dtypes are an error; cast first):
**   add sub mul div maximum minimum
** Unary (float dtypes; neg and abs also integers):
**   neg abs exp log sqrt relu sigmoid tanh gelu (exact, erf-based) gelu_tanh silu hardswish
**   softplus erf
**   leaky_relu elu           attr "alpha" (default 0.01 and 1.0)
**   hardsigmoid              attrs "alpha", "beta" (default 1/6 and 0.5: max(0, min(1, alpha x + beta)))
** Matrix product (float dtypes), rank >= 2, batch dimensions broadcast like numpy's matmul:
**   matmul                   attrs "transpose_a", "transpose_b" (bool, default false)
** Reductions (sum, mean: float and integer dtypes; max, min also; argmax, argmin: the index of the
** largest / smallest element as I64, the first on ties, NaN counting as the largest value):
**   sum mean max min         attrs "axes" (list of ints, negative counts from the end; default all
**   argmax argmin            dimensions; argmax and argmin take one axis, default the last, as
**                            "axes": [k] or "axis": k), "keepdims" (bool, default false); the
**                            mean of integers is their sum (in int64) divided by the count,
**                            truncated toward zero, in the input's dtype
** Softmax along one axis (float dtypes):
**   softmax log_softmax      attr "axis" (default -1)
** Normalization of each row over the trailing dims from "axis" on (float dtypes):
**   layer_norm rms_norm      inputs x, optional gamma, optional beta (f32, x's dims from axis on);
**                            attrs "axis" (the first normalized dim, default -1), "eps" (default
**                            1e-5). layer_norm: (x - mean) / sqrt(var + eps) * gamma + beta;
**                            rms_norm: x / sqrt(mean(x^2) + eps) * gamma + beta
** Scaled dot-product attention (float dtypes), as PyTorch's scaled_dot_product_attention:
**   attention                inputs q [N,H,Tq,D], k [N,H,Tk,D], v [N,H,Tk,Dv], optional mask (q's
**                            dtype, added to the scores, broadcast to [N,H,Tq,Tk] like numpy);
**                            attrs "causal" (bool, default false: each query sees the keys up to
**                            its position, the queries being the last Tq of Tk positions), "scale"
**                            (default 1 / sqrt(D)). o [N,H,Tq,Dv] = softmax(scale q k^T + mask) v,
**                            computed a block of query rows at a time: no [Tq,Tk] array is made.
**                            A row whose scores are all -inf is NaN.
** Type and layout:
**   cast                     attr "dtype": "f32" | "f64" | "f16" | "bf16" | "i32" | "i64" | "u8" |
**                            "i8" | "bool"; floats to f16/bf16 round to nearest even; floats to
**                            integers truncate toward zero, and values out of range saturate
**   reshape                  attr "shape": list of ints, one of them may be -1
**   transpose                attr "perm": a permutation of the dimensions (default: reversed)
** Convolution and pooling, NCHW (float dtypes):
**   conv2d                   inputs x [N,C,H,W], w [O,C/groups,kh,kw], optional bias [O]; attrs
**                            "stride", "padding", "dilation" ([h, w] or one int), "groups"
**   maxpool2d avgpool2d      attrs "kernel" (required), "stride" (default = kernel), "padding"
** Creation (no inputs):
**   fill                     attrs "shape" (required), "value" (default 0), "dtype" (default f32)
**   random_uniform           attrs "shape" (required), "seed" (default the context's), "low" (0),
**                            "high" (1), "dtype" (f32); counter-based: the same seed gives the same
**                            numbers on every backend
**   random_normal            attrs "shape", "seed", "mean" (0), "std" (1), "dtype"
**
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong ctx or input, NULL name, inputs or
** outputs NULL when their count is positive, the wrong number of inputs or outputs for the op,
** malformed attrs_json, an unknown attribute or a wrong attribute type (the message names it), a
** size attribute beyond 32 bits or an output whose size overflows, or an input from another device;
** NNRT_ERR_UNSUPPORTED for an unknown op name, or an op the backend cannot run with "strict": true;
** NNRT_ERR_SHAPE for shapes that do not fit (the message gives them); NNRT_ERR_DTYPE for a dtype
** the op does not accept; NNRT_ERR_OUT_OF_MEMORY; NNRT_ERR_BACKEND when the backend fails at run
** time. On failure no output is written. */
NNRT_API nnrt_status nnrt_op(nnrt_context *ctx, const char *name, const nnrt_array *const *inputs,
                             int32_t n_inputs, const char *attrs_json, nnrt_array **outputs,
                             int32_t n_outputs);

/* ============================================================================================== */
/* Run options: cancelling a call from another thread, timeouts                                   */
/* ============================================================================================== */

/* Run options are passed to the calls that can run long (nnrt_model_predict_ex,
** nnrt_model_predict_into, nnrt_model_predict_many, nnrt_model_evaluate_ex, nnrt_model_load_ex,
** nnrt_model_import_onnx_ex) to stop them early. Such a call checks its options before every op it
** runs on the backend and between the stages of a load (reading, parsing, building, each
** parameter's upload): a stopped call returns NNRT_ERR_CANCELLED or NNRT_ERR_DEADLINE_EXCEEDED as
** soon as the op running then has finished, frees what it allocated, gives no output, and leaves
** the model as it was (usable at once). One set of options may be passed to any number of calls, on any threads, at once; every
** function below is safe to call from any thread while they run. */

/* Called by a call running with these options before each op and stage (on the calling thread):
** `user` is passed through. Return nonzero to stop the call with NNRT_ERR_CANCELLED. It must not
** call nnrt functions other than nnrt_run_options_cancel. */
typedef int (*nnrt_abort_fn)(void *user);

/* Creates run options: not cancelled, no timeout, no abort callback. Returns NNRT_OK and the
** options in *out (release with nnrt_run_options_release); NNRT_ERR_INVALID_ARGUMENT for
** out == NULL. */
NNRT_API nnrt_status nnrt_run_options_create(nnrt_run_options **out);

/* Releases run options. No call may be running with them. NULL does nothing. */
NNRT_API void nnrt_run_options_release(nnrt_run_options *o);

/* Cancels every call running with these options, and every later one, until
** nnrt_run_options_reset: each returns NNRT_ERR_CANCELLED at its next check. Safe from any thread,
** and from an abort callback or a signal-free context such as another thread's timer.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong handle. */
NNRT_API nnrt_status nnrt_run_options_cancel(nnrt_run_options *o);

/* Clears a cancellation, so that later calls run again. A call stopped already stays stopped.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong handle. */
NNRT_API nnrt_status nnrt_run_options_reset(nnrt_run_options *o);

/* Gives each call run with these options at most `seconds` (> 0; 0 removes the limit), counted
** from the call's start on a monotonic clock: past it the call returns NNRT_ERR_DEADLINE_EXCEEDED at
** its next check, its message giving the limit and the time it ran. Calls already running keep the
** limit they started with.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong handle, or seconds negative or not
** finite. */
NNRT_API nnrt_status nnrt_run_options_set_timeout(nnrt_run_options *o, double seconds);

/* Sets the abort callback (fn NULL removes it) that calls run with these options ask at every check
** (see nnrt_abort_fn); `user` is passed to it. Set it before starting calls with these options.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong handle. */
NNRT_API nnrt_status nnrt_run_options_set_abort_callback(nnrt_run_options *o, nnrt_abort_fn fn, void *user);

/* ============================================================================================== */
/* Models                                                                                         */
/* ============================================================================================== */

/* Builds a model from a JSON config on the context's backend. The config has "input" (the shape of
** one example: [channels, height, width] or [features]), an optional "seed" (integer; default: drawn
** from the context's seed), and either "layers" (a sequence, each layer reading the previous one's
** output) or "nodes" (a graph: each node has a unique "name" and "inputs", a list of node names or
** "input") with "outputs" (node names, each once; default: the last node). A graph may take several
** inputs instead of "input": "inputs", a list of up to 64 {"name": ..., "shape": [one example's
** dims]} that nodes name in their "inputs" (names unique, not a node's; each read by some node),
** run by nnrt_model_predict_many (training, evaluation, quantization and ONNX export take models of
** one input). Every layer has a "type" and an optional "name" (default "layer<i>"); its other keys
** are:
**
**   dense        "units", "activation" (default identity), "init" (default xavier), "bias" (true),
**                "flatten" (true: the example is flattened first; false: applied to its last dim,
**                [..., in] -> [..., units], each token of a sequence alike)
**   conv2d       "filters", "kernel", "stride" (1), "padding" (0, [h, w], [top, left, bottom,
**                right], "same" or "valid"), "dilation" (1), "groups" (1), "activation", "init",
**                "bias"
**   conv2d_transpose   PyTorch's ConvTranspose2d: "filters", "kernel", "stride" (1), "padding" (0,
**                [h, w], [top, left, bottom, right] or "valid"), "output_padding" (0 or [h, w],
**                smaller than the stride), "dilation" (1), "groups" (1), "activation", "init",
**                "bias"
**   maxpool2d, avgpool2d   "kernel", "stride" (= kernel), "padding" (0, [h, w] or [top, left,
**                bottom, right]); avgpool2d also "count_include_pad" (true)
**   global_avgpool2d, global_maxpool2d   (no keys): [C, H, W] -> [C]
**   batchnorm    "eps" (1e-5), "momentum" (0.1, as PyTorch)
**   layer_norm, rms_norm   each example normalized over its last "normalized_dims" dims (1), as
**                PyTorch's LayerNorm and RMSNorm: "eps" (1e-5), "affine" (true: a weight, ones at
**                first), "bias" (true for layer_norm, false for rms_norm; needs affine)
**   multi_head_attention   self-attention over examples [tokens, features], as PyTorch's
**                nn.MultiheadAttention(features, heads, batch_first=True)(x, x, x): "heads"
**                (required; divides features), "causal" (false: with true, a token attends to
**                itself and the tokens before it), "bias" (true), "init" (xavier_uniform);
**                parameters in_proj_weight [3 features, features], in_proj_bias,
**                out_proj.weight [features, features], out_proj.bias; with "mask" it takes a
**                second input, a key mask of one value per token ([tokens]): "padding" (a nonzero
**                value marks a padding token no query attends to, as PyTorch's key_padding_mask),
**                "keep" (a zero does, as Hugging Face's attention_mask) or "additive" (added to the
**                scores); masked keys score the dtype's lowest finite value (a query whose keys are
**                all masked averages them, no NaN). Attention is one op (nnrt_op
**                "attention": no [tokens, tokens] array per head) where the backend takes it
**                (reference; oneDNN f32), else batched matmul and softmax (cuDNN; bf16, f16)
**   position_embedding   adds each position's vector to the tokens of [tokens, features]: the
**                learned parameter weight [tokens, features] ("init", default normal(0, 0.02)), or
**                with "sinusoidal": true the fixed sin/cos table of the original transformer
**   dropout      "rate": the probability of dropping an element, in [0, 1)
**   activation   "activation", and "alpha" for leaky_relu (0.01), elu (1), swish (1) and
**                hardsigmoid (1/6; also "beta", 0.5)
**   flatten      (no keys);  reshape  "shape" (one dim may be -1)
**   add          (no keys; two or more inputs of one shape);  concat  "axis" (0: the first
**                per-example dim)
**   embedding    "vocab" (rows), "units" (columns), "init" (default normal(0, 1)); input: indices
**   lstm         "units", "return_sequences" (false); input [time, features] -> [time, units] or
**                [units] (or [..., time, features]: several sequences per example, each run alone)
**   output       "units", "loss" (required: nll / cross_entropy, mse, l1, bce), "activation"
**                (default softmax), "init", "bias", "flatten" (true: one prediction per example,
**                its labels [N] class indices or [N, units] targets; false: one per position of
**                the example's leading dims, as dense's, [T, in] -> [T, units], its labels [N, T]
**                class indices or [N, T, units] targets, the loss the mean over every position:
**                a language model's next-token predictions)
**   binary       "op" (add, sub, mul, div, or matmul: [..., M, K] x [..., K, N] per example),
**                numpy broadcasting of two inputs, or of one input and a constant: "constant" (its
**                shape, right-aligned against an example; the values are the untrained parameter
**                "<layer>.constant", zeros until set), "constant_first"
**   clip         "min", "max" (either may be left out)
**   reduce       "op" (sum, mean), "axes" (per-example dims; default all), "keepdims" (true)
**   softmax      "axis" (-1), "log" (false), "flatten" (false: over all dims from axis on)
**   transpose    "perm" (a permutation of the per-example dims)
**   slice        "axis" (a per-example dim), "start", "length" (1): those entries along the axis
**
** Activations: identity, relu, relu6 (min(max(x, 0), 6)), leaky_relu, elu, gelu (erf-based),
** gelu_tanh (the tanh approximation), silu (x * sigmoid(x)), swish (x * sigmoid(alpha x)),
** hardswish (x * min(max(x + 3, 0), 6) / 6), hardsigmoid (max(0, min(1, alpha x + beta))), sigmoid,
** tanh, softplus (log(1 + exp(x))), erf, softmax, log_softmax. Wherever a layer takes
** "activation" it also takes that activation's "alpha" and "beta".
** Initialisers ("init"): xavier, xavier_uniform, he (or relu), lecun, normal, uniform, zeros,
** constant, or an object such as {"type": "normal", "mean": 0, "std": 0.01},
** {"type": "uniform", "low": -0.1, "high": 0.1}, {"type": "constant", "value": 0.5}.
** Parameters are named "<layer>.weight" and "<layer>.bias" (layer_norm and rms_norm with the
** normalized dims' shape; batchnorm also running_mean and
** running_var; lstm weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0) in PyTorch's layouts: a
** conv2d weight is [filters, channels / groups, kh, kw], a conv2d_transpose weight [channels,
** filters / groups, kh, kw], a dense weight [units, inputs].
**
** Returns NNRT_OK and the model in *out (release with nnrt_model_release); NNRT_ERR_INVALID_ARGUMENT
** for NULL arguments, malformed JSON, an unknown layer type or key, or a value of the wrong type
** (the message names the layer and the key); NNRT_ERR_SHAPE when a layer's input does not fit it
** (the message names the layer and gives both shapes); NNRT_ERR_OUT_OF_MEMORY. */
NNRT_API nnrt_status nnrt_model_create(nnrt_context *ctx, const char *config_json, nnrt_model **out);

/* Loads a model saved by nnrt_model_save or nnrt_trainer_save (a safetensors file whose metadata
** holds the config) onto the context's backend. Before using any data it checks the header, every
** tensor's dtype, shape, offsets and size, and the checksum of the data section.
** Returns NNRT_OK and the model in *out; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments;
** NNRT_ERR_IO when the file cannot be opened or read, or is not a regular file (a directory, a
** device, a FIFO: refused before reading); NNRT_ERR_CORRUPT for an empty, truncated,
** bit-flipped or foreign file (the message says what is wrong); NNRT_ERR_VERSION for a file written
** by a newer, incompatible nnrt; NNRT_ERR_OUT_OF_MEMORY.
**
** Mapped weights: unless the context option "map_checkpoints" is false, the file is mapped into
** memory (privately: nothing nnrt does ever writes to it) instead of read, and on a backend whose
** arrays are host memory (reference, oneDNN) each parameter is that mapping's bytes where they lie:
** loading copies nothing, the memory is the page cache's (shared by every model and every process
** that loads the file, and paged in from disk when first read), and the mapping lasts until the
** last model using it is released. A model writes only parameters of its own: before its first
** write in place (nnrt_model_set_param, a trainer's step, as nnrt_model_share lists) it copies them
** out of the mapping. Other backends map the file and upload from it. The file may be replaced
** (renamed over, as nnrt_model_save does) or deleted while mapped; it must not be truncated or
** rewritten in place, which the system answers with SIGBUS at the next read of a lost page: a
** program whose files may change that way sets "map_checkpoints" to false. */
NNRT_API nnrt_status nnrt_model_load(nnrt_context *ctx, const char *path, nnrt_model **out);

/* As nnrt_model_load, stopped early as `options` say (NULL: never; see the run options above): it
** checks them before opening the file, before each 64 KB it reads or checksums (a mapped 100 MB
** file gets about 1600 checks, a read one twice that), after checking, and before each parameter
** is placed. Returns what nnrt_model_load returns, and NNRT_ERR_CANCELLED or
** NNRT_ERR_DEADLINE_EXCEEDED when stopped (no model is made). */
NNRT_API nnrt_status nnrt_model_load_ex(nnrt_context *ctx, const char *path, const nnrt_run_options *options,
                                        nnrt_model **out);

/* Imports an ONNX model (a .onnx file: an onnx.ModelProto, opsets 7 to 17) as an nnrt graph
** model on the context's backend: each ONNX node becomes nnrt layers of the kinds above (Conv ->
** conv2d, ConvTranspose -> conv2d_transpose, Gemm/MatMul with constant weights -> dense, other
** MatMul -> binary matmul, LSTM -> lstm, Add/Sub/Mul/Div -> binary, MaxPool, AveragePool,
** GlobalAveragePool, GlobalMaxPool, BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh,
** HardSigmoid, HardSwish, Softplus, Erf (an activation after a Conv runs fused into it; so do
** x * Sigmoid(x) -> silu, and the erf and tanh GELUs exporters write -> gelu, gelu_tanh),
** Softmax, LogSoftmax, Clip, ReduceMean, ReduceSum, Flatten, Reshape, Transpose, Concat, Dropout,
** Identity, Constant, Gather of a constant table -> embedding, Gather of one index or Slice (one
** axis, step 1) of a computed value -> slice) and the initializers become its parameters. Shape,
** ConstantOfShape, Expand (of one value), and Gather, Concat, Slice, Squeeze, Unsqueeze of
** constants are folded on the shapes the import knows, the batch size staying a run-time value:
** what torch.onnx.export writes for an RNN's zero state (sliced per layer when stacked). An LSTM
** must run forward from a zero state, without peepholes, clip or other activations, every sequence
** its full length, one of Y and Y_h read (not Y_c); layout 1 (batch-first) maps straight on, layout
** 0 (time-major X [T, N, F]) when X's batch is its dim 1: after a Transpose from a batch-first
** value (as torch.onnx.export writes a batch_first nn.LSTM), or from a time-major input imported
** with "batch_axis": 1. Transposes that move the batch cost nothing: nnrt keeps it in dim 0 and
** notes where ONNX has it; only elementwise ops, MatMul by a constant matrix, Squeeze, Unsqueeze,
** Transpose, Gather, Slice and LSTM read such values, and the graph's output must have the batch in
** dim 0. Quantized models in the QDQ form (what ONNX Runtime's quantize_static writes):
** QuantizeLinear -> DequantizeLinear around a Conv, Gemm or MatMul whose weight is dequantized
** from INT8 with zero point 0 (one scale, or one per output channel) make it an int8 layer as
** nnrt_model_quantize makes them; other such pairs clip to the 8-bit range without rounding
** (those ops run in float), and quantized constants become their float values; QLinear* operators
** and 8-bit inputs are refused.
** The model predicts, evaluates, saves and, given a loss and no int8 layer, trains like one built
** from JSON. External data files are read from the model's folder.
** ONNX is parsed by the converter plugin libnnrt-onnx.so (it carries protobuf, so that libnnrt
** does not), searched for in the plugin folders as backends are and loaded on the first import or
** export; nnrt_context_describe's "onnx" says whether it loaded. A static program finds it the same
** way.
** The graph's inputs that are not initializers (up to 64: float, integer indices that only a Gather
** reads, or an integer or bool key padding mask that only an attention reads) become the model's
** inputs: "input" for one, else "inputs" named as in ONNX (nnrt_model_predict_many runs it). PyTorch's
** src_key_padding_mask imports as multi_head_attention's "mask": "padding" (with the causal mask too,
** when both are given). The graph must have one output. `options_json` may be NULL, or a JSON
** object with ("batch", "batch_axis" and "input" only for a graph of one input):
**   "batch"  (true): dim 0 of the ONNX input is the batch, of any size; false: the ONNX input is
**            one example and nnrt adds the batch dim in front (ops may then act on ONNX's dim 0;
**            an LSTM's batch is then a dim of the example).
**   "batch_axis"  (0): with a batch, the ONNX input's dim that holds it, e.g. 1 for a time-major
**            input [T, N, F] (PyTorch's nn.LSTM without batch_first); the nnrt model takes the
**            input with that dim first ([N, T, F]), the others in order.
**   "input"  the per-example input shape, for an input declared with symbolic dims.
**   "loss"   (nll, cross_entropy, mse, l1, bce): the model must end in a Gemm/MatMul (maybe
**            followed by Softmax or LogSoftmax), which becomes an output layer with that loss, so
**            that nnrt_trainer_create accepts the model. With a class loss and no final softmax,
**            the output layer applies softmax (predictions become probabilities).
** Returns NNRT_OK and the model in *out (release with nnrt_model_release);
** NNRT_ERR_INVALID_ARGUMENT for NULL arguments or bad options (the message names the key);
** NNRT_ERR_IO when the file cannot be opened; NNRT_ERR_CORRUPT for a file that is not a valid ONNX
** model: a truncated or malformed protobuf, a node reading a name nothing makes (dangling) or made
** later (a cycle), a tensor whose data size disagrees with its shape, external data that is missing
** or lies outside the model's folder (the message names the node or tensor);
** NNRT_ERR_UNSUPPORTED for what nnrt cannot run exactly: another op type, opset or domain, an
** attribute value nnrt does not implement, several outputs, an op across the batch dim,
** declared dims too large to hold (the message names the node, its op type and the opset); nothing
** of a declared size is allocated before it is checked; NNRT_ERR_SHAPE when the graph's shapes do
** not fit together; NNRT_ERR_OUT_OF_MEMORY. NNRT_ERR_UNSUPPORTED also when the converter plugin is
** missing or did not load (the message names the folders searched or the reason). */
NNRT_API nnrt_status nnrt_model_import_onnx(nnrt_context *ctx, const char *path, const char *options_json,
                                            nnrt_model **out);

/* As nnrt_model_import_onnx, stopped early as `run_options` say (NULL: never): they are checked
** before and after the converter parses and converts the file, after the model is built and before
** each parameter's upload. Returns what nnrt_model_import_onnx returns, and NNRT_ERR_CANCELLED or
** NNRT_ERR_DEADLINE_EXCEEDED when stopped (no model is made). */
NNRT_API nnrt_status nnrt_model_import_onnx_ex(nnrt_context *ctx, const char *path, const char *options_json,
                                               const nnrt_run_options *run_options, nnrt_model **out);

/* As nnrt_model_import_onnx, from `nbytes` bytes at `data` (the contents of a .onnx file; not kept
** after the call). Tensors with external data are refused (NNRT_ERR_UNSUPPORTED): they need the
** model's folder. Returns NNRT_OK and the model in *out; NNRT_ERR_INVALID_ARGUMENT,
** NNRT_ERR_CORRUPT, NNRT_ERR_UNSUPPORTED, NNRT_ERR_SHAPE and NNRT_ERR_OUT_OF_MEMORY as
** nnrt_model_import_onnx does (it opens no file), NNRT_ERR_INVALID_ARGUMENT also for data == NULL
** with nbytes > 0. */
NNRT_API nnrt_status nnrt_model_import_onnx_memory(nnrt_context *ctx, const void *data, size_t nbytes,
                                                   const char *options_json, nnrt_model **out);

/* Exports the model to `path` as ONNX (opset 17, IR version 8): one standard op per layer (or a few;
** dense -> Gemm, conv2d -> Conv, conv2d_transpose -> ConvTranspose, output -> Gemm and its
** activation, ...), the parameters as float initializers in PyTorch's layouts, the input "input"
** and output "output" with a symbolic batch dim "N". What it writes passes onnx.checker and runs in
** ONNX Runtime; nnrt_model_import_onnx reads it back. The write is atomic as nnrt_model_save's.
** An lstm becomes an ONNX LSTM of layout 0 between Transposes, as torch.onnx.export writes it
** (ONNX Runtime refuses layout 1), its gates reordered to ONNX's i, o, f, c, giving Y or Y_h as
** return_sequences says; a slice becomes a Slice.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments; NNRT_ERR_UNSUPPORTED for a
** layer with no ONNX form here (an lstm over examples [..., T, F] with several sequences each, a
** quantized layer; the message names the layer) and when the converter
** plugin is missing (as nnrt_model_import_onnx); NNRT_ERR_IO when the file cannot be written;
** NNRT_ERR_OUT_OF_MEMORY. */
NNRT_API nnrt_status nnrt_model_export_onnx(const nnrt_model *m, const char *path);

/* Saves the model's config and parameters to `path` as one safetensors file that any safetensors
** reader can open (tensors named as the parameters, F32, PyTorch layouts; "__metadata__" holds
** nnrt.format, nnrt.config and nnrt.checksum). The write is atomic: a temporary file in the same
** folder is written, flushed to disk and renamed over `path`, so a crash mid-save leaves the
** previous file intact.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments; NNRT_ERR_IO when the file
** cannot be written (the message names it and the system's reason). */
NNRT_API nnrt_status nnrt_model_save(const nnrt_model *m, const char *path);

/* Makes another model that shares m's parameters: the same config, on m's context, whose
** parameters are the same memory as m's, not a copy, so that many instances of one model (one per
** serving thread, say) cost the parameters' memory once. Each model has its own prediction plans
** and lock, so instances never wait for each other. Any number of models may share one set of
** parameters (a model made by nnrt_model_share may be shared again); releasing one leaves the
** others intact. Parameters are copied on write: before a model's parameters are first written in
** place (nnrt_model_set_param, a trainer's creation with "distributed", its steps, fit and the
** early-stopping restore) that model gets its own copy, so the others never see the change; a
** model whose sharers have all been released writes in place without copying.
** Returns NNRT_OK and the new model in *out (release with nnrt_model_release);
** NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong m or out == NULL; NNRT_ERR_OUT_OF_MEMORY. */
NNRT_API nnrt_status nnrt_model_share(const nnrt_model *m, nnrt_model **out);

/* Makes an int8 copy of m for inference (post-training static quantization), calibrated on the
** examples of `calibration` (labels unused): each dense and conv2d layer (grouped and depthwise
** included) gets signed 8-bit weights, symmetric with a scale per output unit or filter, and
** reads its input quantized to 8 bits with a scale fixed from the range that input took while m
** predicted the calibration examples: U8 where it was never negative, else I8, zero point 0. Such
** a layer keeps float inputs and outputs: it quantizes its input, multiplies and sums integers
** exactly (in 32 bits), and scales the sums back to float before its bias and activation; every
** other layer runs as in m. The result is an ordinary model on m's context, independent of m: it
** predicts, evaluates, saves and loads (weights stored as I8, scales as F32; nnrt_model_get_param
** gives a weight's integers as F32), and shares; it cannot be trained (nnrt_trainer_create refuses
** it) nor exported to ONNX. `options_json` may be NULL or "{}" for the defaults, or a JSON object with any of:
**
**   "batches"      how many batches of the calibration set are predicted (default 8; 0: all).
**   "batch_size"   examples per calibration batch (default 32).
**   "weight_bits"  7 (default) or 8. Seven-bit weights ([-63, 63]) are exact on every CPU; 8-bit
**                  weights double their resolution but are exact on the oneDNN backend only where
**                  the CPU has VNNI or AMX: without it (AVX2, AVX-512 before Cascade Lake) oneDNN's
**                  int8 kernels saturate at 16 bits, so such layers run on the reference backend.
**   "exclude"      an array of layer names kept in float (a first or last layer that loses too
**                  much).
**
** Returns NNRT_OK and the new model in *out (release with nnrt_model_release);
** NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, an empty calibration set, unknown options or
** layer names, or a model with no dense or conv2d layer to quantize; NNRT_ERR_SHAPE when the
** calibration examples do not fit m's input; NNRT_ERR_UNSUPPORTED for a model that is already
** quantized; NNRT_ERR_OUT_OF_MEMORY; NNRT_ERR_BACKEND. */
NNRT_API nnrt_status nnrt_model_quantize(nnrt_model *m, nnrt_dataset *calibration, const char *options_json,
                                         nnrt_model **out);

/* Releases the caller's reference to a model. A trainer using it keeps it alive. NULL does
** nothing. */
NNRT_API void nnrt_model_release(nnrt_model *m);

/* Runs the model on a batch `input` shaped [N, <the config's input shape>] (any numeric dtype or
** BOOL, as 0 and 1; converted to the context's default float type) and returns the first output in a new F32 array
** [N, <output shape>] (for an output layer: its activation, e.g. class probabilities). Dropout is
** off and batchnorm uses its running statistics. Safe to call from several threads at once on the
** same model, also while a trainer trains it (calls wait for the trainer's current step; a trainer
** waiting for its next step goes before predictions that arrive after it, so that predictors
** cannot starve training). The first call with an input of a new shape, dtype or layout runs the
** layers one by one and keeps a plan of the ops they ran; later calls with that layout replay the
** plan (no per-op dispatch, intermediates in one block from the memory cache), which gives the
** same results bit for bit and reads the parameters' current values. A model keeps the plans of
** its 8 most recently used input layouts.
**
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model or input, output == NULL,
** or a model of several inputs (nnrt_model_predict_many runs those); NNRT_ERR_SHAPE when the
** input's shape does not match (the message gives the expected and the actual shape);
** NNRT_ERR_OUT_OF_MEMORY; NNRT_ERR_BACKEND. */
NNRT_API nnrt_status nnrt_model_predict(nnrt_model *m, const nnrt_array *input, nnrt_array **output);

/* As nnrt_model_predict, stopped early as `options` say (NULL: never; see the run options above),
** before any op of the pass. Returns what nnrt_model_predict returns, and NNRT_ERR_CANCELLED or
** NNRT_ERR_DEADLINE_EXCEEDED when stopped (*output is not written). */
NNRT_API nnrt_status nnrt_model_predict_ex(nnrt_model *m, const nnrt_array *input, const nnrt_run_options *options,
                                           nnrt_array **output);

/* Runs nnrt_model_predict's prediction on `input` and writes it into `output`, an array the caller
** made beforehand: F32, shaped as nnrt_model_output_shape says for the input's batch, on a context
** of the model's backend and device. It may have any strides; one made by nnrt_array_wrap_host is
** written in the caller's memory, and when it is row-major the last op of the pass writes there
** directly (no copy; nothing is allocated for the output). This is the one call that changes an
** array: no other call may read or write `output` while it runs. On failure the output's contents
** are unspecified. `options` as nnrt_model_predict_ex's (NULL: never stopped). Safe to call from
** several threads at once with different outputs. Keeps no reference to input or output.
** Returns NNRT_OK; the errors of nnrt_model_predict; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong
** output, or one on another device; NNRT_ERR_SHAPE when the output's shape is not the
** prediction's, NNRT_ERR_DTYPE when it is not F32 (the messages give the expected and the given);
** NNRT_ERR_CANCELLED or NNRT_ERR_DEADLINE_EXCEEDED when stopped. */
NNRT_API nnrt_status nnrt_model_predict_into(nnrt_model *m, const nnrt_array *input, nnrt_array *output,
                                             const nnrt_run_options *options);

/* Runs a model of one or several inputs (a config's "inputs"; nnrt_model_input says what each is)
** on one batch per input: inputs[k] is input k, shaped [N, <input k's shape>], every input with
** the same N (any numeric dtype or BOOL; each converted to the context's default float type). Writes the
** first n_outputs of the model's outputs (the config's "outputs" order; nnrt_model_output_count
** says how many there are) into outputs[0..n_outputs-1] as new F32 row-major arrays the caller
** owns. Everything else is as nnrt_model_predict: thread-safe, plans made at the first call with
** each layout of the inputs and replayed afterwards (inputs that share memory are not planned),
** `options` as nnrt_model_predict_ex's (NULL: never stopped).
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model, inputs or outputs NULL,
** an input NULL or not an array, n_inputs not the model's input count, or n_outputs not in 1 ..
** the output count (the messages give the expected and the given); NNRT_ERR_SHAPE when an input's
** shape does not match or the inputs hold different numbers of examples (the message names the
** input); NNRT_ERR_CANCELLED or NNRT_ERR_DEADLINE_EXCEEDED when
** stopped; NNRT_ERR_OUT_OF_MEMORY; NNRT_ERR_BACKEND. On failure no output is written. */
NNRT_API nnrt_status nnrt_model_predict_many(nnrt_model *m, const nnrt_array *const *inputs, int32_t n_inputs,
                                             const nnrt_run_options *options, nnrt_array **outputs,
                                             int32_t n_outputs);

/* Sets *count to the number of inputs the model takes: 1 for a config with "input", the length of
** "inputs" otherwise. Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model or
** count == NULL. */
NNRT_API nnrt_status nnrt_model_input_count(const nnrt_model *m, int32_t *count);

/* Describes input `index` (0 .. the input count - 1): its name (the string convention of this
** header; "input" for a config with "input") and the shape of one example, *ndim dims written to
** shape[0..*ndim-1] (room for NNRT_MAX_DIMS). Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL
** or wrong model, an index out of range, len, ndim or shape NULL, or buf == NULL with cap > 0. */
NNRT_API nnrt_status nnrt_model_input(const nnrt_model *m, int32_t index, char *buf, size_t cap, size_t *len,
                                      int32_t *ndim, int64_t shape[NNRT_MAX_DIMS]);

/* Sets *count to the number of the model's outputs (the config's "outputs"; 1 for "layers").
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model or count == NULL. */
NNRT_API nnrt_status nnrt_model_output_count(const nnrt_model *m, int32_t *count);

/* Sets *ndim and shape[0..*ndim-1] to the shape of the prediction (nnrt_model_predict's output)
** for a batch of `batch` examples: [batch, <the first output's shape>]. `shape` must have room for
** NNRT_MAX_DIMS entries. Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model,
** ndim or shape NULL, or a negative batch. */
NNRT_API nnrt_status nnrt_model_output_shape(const nnrt_model *m, int64_t batch, int32_t *ndim,
                                             int64_t shape[NNRT_MAX_DIMS]);

/* Called by nnrt_model_generate with each new token as soon as it is chosen (it is already counted
** in the output); `user` is passed through. Return nonzero to stop generating after this token. */
typedef int (*nnrt_token_fn)(int64_t token, void *user);

/* Generates up to `max_tokens` tokens that continue `prompt` (`prompt_len` token ids), with a
** token model: one whose input is a sequence of T token ids (config "input": [T]) read only by
** embedding layers, and whose first output gives scores over a vocabulary of V tokens at every
** position ([T, V], such as an output layer with "flatten": false). The scores are logits: an
** output layer's pre-activation when its activation is softmax, log_softmax or identity (another
** activation is refused), else the last layer's output as it is. Token ids are 0 .. V - 1 (every
** embedding reading the input must have at least V rows). Each new token is chosen from the
** scores at the last position: with temperature 0 the highest (greedy; the lowest id on a tie),
** else drawn from softmax(scores / temperature) over the top_k highest scores, by a Philox random
** stream of the seed (the same seed, model, options and backend give the same tokens).
**
** Key/value cache: the prompt runs through the model in one pass that fills each attention
** layer's cache, then every new token costs one position (its projections, and attention over the
** cached keys and values), not a pass over the whole prefix. This needs layers that can run that
** way: embedding, position_embedding, multi_head_attention with "causal": true, and per-position
** layers (dense and output with "flatten": false, layer_norm and rms_norm over the last dim only,
** add, activation, dropout); another layer is refused (NNRT_ERR_UNSUPPORTED, naming it and why)
** unless "cache" is false. The results equal a full forward pass's at each position (to float
** rounding).
**
** The model sees at most T tokens (its learned positions). When the window is full and another
** token must be fed, "when_full" decides: "slide" (the default) keeps the last T/2 tokens (T/2
** rounded down, at least 1) and runs them through the model again in one pass, as a new prompt
** (positions start again from 0, so the cache is rebuilt: one pass over T/2 positions every
** T - T/2 tokens); "stop" ends generation there (fewer than max_tokens written, NNRT_OK); "error"
** refuses, before generating anything, a call whose prompt_len + max_tokens - 1 exceeds T.
** `options_json` may be NULL or a JSON object with:
**   "temperature"  (0) >= 0: 0 is greedy
**   "top_k"        (0) >= 0: sample among the k highest scores; 0: among all V
**   "seed"         (drawn from the context's seed) >= 0: the random stream of the draws
**   "stop"         ([]) token ids that end generation once generated (the stop token is written)
**   "when_full"    ("slide") "slide", "stop" or "error", as above
**   "cache"        (true): false recomputes the whole window (padded to T) for every token, with
**                  the same windows and so the same tokens: slower, for models whose layers have
**                  no incremental path, and as the reference the cached path is checked against
** The generated tokens (not the prompt) are written to `tokens`, a caller-owned buffer of
** `max_tokens` entries, and their count to *n_tokens; `on_token` (may be NULL) sees each one as it
** is chosen, and can stop generation by returning nonzero (NNRT_OK). The call keeps its cache to
** itself: several threads may generate from one model at once; like predict, it waits for a
** trainer's current step, and holds the next one off until it returns.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model, prompt == NULL or
** prompt_len == 0, tokens == NULL with max_tokens > 0, n_tokens == NULL, a prompt longer than T, a
** token id outside 0 .. V - 1, malformed options, an unknown option key or a value out of range
** (the message names it), "when_full": "error" with too many tokens, or a model that is not a token
** model (the message says which part does not fit), or scores that are NaN (diverged parameters);
** NNRT_ERR_UNSUPPORTED for a layer without an
** incremental path while "cache" is true (the message names the layer); NNRT_ERR_OUT_OF_MEMORY;
** NNRT_ERR_BACKEND. On failure *n_tokens and `tokens` are left untouched (on_token may have seen
** tokens before a failure). */
NNRT_API nnrt_status nnrt_model_generate(nnrt_model *m, const int64_t *prompt, size_t prompt_len,
                                         const char *options_json, int64_t *tokens, size_t max_tokens,
                                         size_t *n_tokens, nnrt_token_fn on_token, void *user);

/* Describes the model as JSON: "input" (the first input's shape), "inputs" (each "name", "shape"),
** "backend", "dtype", "layers" (each with "name", "type", "inputs", "output_shape", "param_count",
** "params" (name, shape, trainable), "attributes" (its config keys) and "ops": for the forward and
** backward passes, which backend ran each op kind, and "fallback", the op kinds that fell back to
** the reference backend), "outputs", "total_params" and "trainable_params". The backward placement
** appears once the model has been trained. The string convention of this header applies.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model, len == NULL, or buf == NULL
** with cap > 0. */
NNRT_API nnrt_status nnrt_model_summary(const nnrt_model *m, char *buf, size_t cap, size_t *len);

/* Sets *count to the number of parameters (elements of every weight, bias and statistic).
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model or count == NULL. */
NNRT_API nnrt_status nnrt_model_param_count(const nnrt_model *m, int64_t *count);

/* Returns a copy of the parameter `name` (e.g. "conv1.weight") as a new F32 array in *out.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong model, NULL name or out, or an
** unknown name (the message lists the model's parameter names). */
NNRT_API nnrt_status nnrt_model_get_param(const nnrt_model *m, const char *name, nnrt_array **out);

/* Copies `value` into the parameter `name`. value must have the parameter's shape; a float value of
** another dtype is converted. An I8 parameter (a quantized layer's weight) takes I8 values only,
** within [-63, 63] where the layer has 7-bit weights. The caller keeps ownership of value.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, an unknown name, or a
** quantized weight out of its range; NNRT_ERR_SHAPE when the shapes differ (the message gives
** both); NNRT_ERR_DTYPE for a non-float value, or a value other than I8 for an I8 parameter. */
NNRT_API nnrt_status nnrt_model_set_param(nnrt_model *m, const char *name, const nnrt_array *value);

/* Evaluates the model on every example of a dataset (in batches of 256) and returns the metrics in
** a new evaluation (release with nnrt_evaluation_release): for class labels, accuracy, per-class
** precision, recall, F1 and support, macro and weighted averages and the confusion matrix; for
** float targets, MSE, MAE and R^2. With a class label per position (a "text" dataset and an
** output with "flatten": false), each position counts as one prediction, and the mean loss per
** position and its perplexity are measured too (a second pass over the data).
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, an empty dataset, or class
** labels outside the model's outputs; NNRT_ERR_SHAPE when the dataset's examples do not fit the
** model's input, or its labels per position do not fit the model's outputs; NNRT_ERR_OUT_OF_MEMORY;
** NNRT_ERR_BACKEND. */
NNRT_API nnrt_status nnrt_model_evaluate(nnrt_model *m, nnrt_dataset *data, nnrt_evaluation **out);

/* As nnrt_model_evaluate, stopped early as `options` say (NULL: never), checked between batches and
** before every op. Returns what nnrt_model_evaluate returns, and NNRT_ERR_CANCELLED or
** NNRT_ERR_DEADLINE_EXCEEDED when stopped (*out is not written). */
NNRT_API nnrt_status nnrt_model_evaluate_ex(nnrt_model *m, nnrt_dataset *data, const nnrt_run_options *options,
                                            nnrt_evaluation **out);

/* ============================================================================================== */
/* Datasets                                                                                       */
/* ============================================================================================== */

/* Makes a dataset from arrays whose dimension 0 counts the examples: `features` [N, ...] of any
** numeric dtype (converted to the model's float type batch by batch; [N] becomes [N, 1]), and
** `labels` [N] of class indices (I32, I64 or U8, each >= 0) or [N, ...] of float targets. The data
** is copied into host memory, so the arrays may be released afterwards.
**
** Returns NNRT_OK and the dataset in *out (release with nnrt_dataset_release);
** NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong ctx, features or labels, out == NULL, a negative
** class index, or NaN/Inf in the features or float targets (the message names the example);
** NNRT_ERR_SHAPE when features or labels are scalars, hold no examples, or their example counts
** differ (the message gives both shapes), or integer labels are not [N]; NNRT_ERR_DTYPE for BOOL
** features or labels. */
NNRT_API nnrt_status nnrt_dataset_from_arrays(nnrt_context *ctx, const nnrt_array *features,
                                              const nnrt_array *labels, nnrt_dataset **out);

/* Loads a dataset described by a JSON spec:
**   {"format": "idx", "images": "<path>", "labels": "<path>", "scale": 0.00392156862745098,
**    "limit": 10000}
**      IDX files as in MNIST and Fashion-MNIST, plain or gzip-compressed (detected from the
**      content). Images are kept as bytes and multiplied by "scale" (default 1/255) when batched.
**      "limit" (optional) keeps only the first examples.
**   {"format": "csv", "path": "<path>", "label_column": 0, "header": true, "limit": 100,
**    "scale": 1}
**      Comma-separated numbers, one example per line (plain or gzip; blank lines are skipped,
**      the decimal point is '.' whatever the C locale); "label_column" (default 0; -1 for the
**      last column) holds the class index, every other column is a feature, multiplied by "scale"
**      when batched. "header" (default false) skips the first line.
**   {"format": "text", "path": "<path>", "window": 64, "stride": 32, "split": "train",
**    "test_fraction": 0.1, "limit": 1000}
**      A text (plain or gzip) for a byte-level language model: each byte is a token (0..255), an
**      example is a window of "window" bytes (required; the model's input [window]) and its labels
**      are the window shifted by one byte, [window] class indices: the next token at each
**      position. Windows start every "stride" bytes (default: the window). "split" (default
**      "all") "train" takes the windows of the first 1 - "test_fraction" (default 0.1) of the
**      bytes, "test" those of the rest, so the two share no byte. Every window is stored, its
**      labels as 8-byte integers: windows * window * 9 bytes in all.
** Relative paths are relative to the current directory.
**
** Returns NNRT_OK and the dataset in *out; NNRT_ERR_INVALID_ARGUMENT for NULL arguments, malformed
** JSON, an unknown key or format, a missing required key, or a text too short for one window and
** the byte after it (the message gives both lengths); NNRT_ERR_IO when a file cannot be
** opened or read, or is a device (the message names it); NNRT_ERR_CORRUPT for a malformed,
** truncated or inconsistent file (a bad IDX magic number, image and label counts that differ, a CSV
** line with a different number of columns or a value that is not a number; the message gives the
** file and the line or offset); NNRT_ERR_OUT_OF_MEMORY. */
NNRT_API nnrt_status nnrt_dataset_load(nnrt_context *ctx, const char *spec_json, nnrt_dataset **out);

/* Sets *examples to the number of examples in the dataset.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong dataset, or examples == NULL. */
NNRT_API nnrt_status nnrt_dataset_size(const nnrt_dataset *d, int64_t *examples);

/* Copies examples [start, start + count) of a dataset into new arrays on ctx's device: *features as
** F32 [count, <example shape>] (scaled as the dataset's spec says), and *labels (may be NULL to skip)
** as I64 class indices [count] (or [count, T] for a "text" dataset: one per position) or F32
** targets [count, ...]. The caller owns both arrays.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, or a range outside
** [0, size] (the message gives the range and the size); NNRT_ERR_OUT_OF_MEMORY. */
NNRT_API nnrt_status nnrt_dataset_examples(nnrt_context *ctx, const nnrt_dataset *d, int64_t start, int64_t count,
                                           nnrt_array **features, nnrt_array **labels);

/* Releases the caller's reference to a dataset; a trainer using it keeps it alive. NULL does
** nothing. */
NNRT_API void nnrt_dataset_release(nnrt_dataset *d);

/* ============================================================================================== */
/* Trainers                                                                                       */
/* ============================================================================================== */

/* What the progress callback receives. Check struct_size before reading members added later. */
typedef struct nnrt_progress {
  uint32_t struct_size;       /* readers check it before reading members added later */
  int32_t epoch;              /* 0-based */
  int64_t iteration;          /* minibatches so far, over all epochs */
  int64_t examples_seen;      /* over all epochs */
  double loss;                /* of the last minibatch */
  double learning_rate;       /* used for the last minibatch */
  double examples_per_second; /* over the current epoch so far */
  int32_t epoch_end;          /* 1 on the call after an epoch (validation_score filled in) */
  double validation_score;    /* the validation metric after an epoch; NaN when none */
  int64_t batches_per_epoch;  /* minibatches in one epoch */
  int64_t batch;              /* 0-based minibatch within the epoch */
  /* The training device's load, when its backend can tell (a GPU with NVML), sampled at most
  ** about once a second; -1 for what is unknown, and always -1 on a CPU backend. */
  int32_t device_utilization_percent;
  int32_t device_temperature_celsius;
  int64_t device_memory_used_bytes;  /* by every process on the device */
  int64_t device_memory_total_bytes;
} nnrt_progress;

/* A progress callback: called after every minibatch and once more after every epoch, on the
** thread that called nnrt_trainer_fit. Returning nonzero stops training (fit then returns NNRT_OK
** with stop reason "callback"). It must not call this trainer's functions. */
typedef int (*nnrt_progress_fn)(const nnrt_progress *p, void *user);

/* Creates a trainer for a model. The trainer keeps the model alive and updates its parameters in
** place. `options_json` (NULL for the defaults) is a JSON object with:
**   "optimizer"     {"type": "sgd" | "adagrad" | "adam" | "adamw" | "rmsprop" | "adamax",
**                    "learning_rate": 0.01, plus per type: sgd "momentum" (0), "nesterov" (false);
**                    adam/adamw/adamax "beta1" (0.9), "beta2" (0.999); rmsprop "rho" (0.99);
**                    "eps" (adagrad 1e-10, rmsprop and the adams 1e-8)}. Default sgd, lr 0.01.
**   "l1", "l2"      penalties added to the gradient (l2 * w, l1 * sign(w)); default 0
**   "weight_decay"  decoupled weight decay (w -= lr * weight_decay * w); adamw defaults to 0.01
**   "clip_norm"     rescale the gradients when their global L2 norm exceeds it (0: off)
**   "clip_value"    clamp every gradient element to [-v, v] (0: off)
**   "schedule"      learning rate by epoch: {"type": "step", "gamma": 0.5, "every_epochs": 2},
**                   {"type": "exponential", "gamma": 0.9}, {"type": "cosine", "warmup_epochs": 1,
**                   "min_learning_rate": 0, "epochs": 10}, {"type": "map", "values": {"0": 0.1,
**                   "5": 0.01}} (epoch -> rate from that epoch on)
**   "batch_size"    64;  "shuffle" true;  "seed" (default: the model's context seed)
**   "prefetch"      batches prepared ahead by a background thread (4; 0 for none)
**   "workers"       data-parallel replicas of the model in this process (1 to 64; default 1). Each
**                   worker trains on its own batches of "batch_size" examples, taken in turn from one
**                   shared shuffled iterator (which prepares "prefetch" batches ahead per worker), so
**                   one step consumes up to workers * batch_size examples. On a CPU backend the
**                   workers share the context's threads. A device (GPU) backend accepts only 1 here
**                   (NNRT_ERR_UNSUPPORTED): train one rank per device with "distributed" instead.
**   "mode"          how the workers combine (with "workers" > 1):
**                   "allreduce" (default): every step the workers' gradients are combined (the mean
**                   over all the step's examples) and one update is made, so N workers at batch b
**                   train the same model as 1 worker at batch N*b, up to summation order. Batchnorm
**                   running statistics are averaged over the workers after each step.
**                   "average": each worker updates its own copy of the parameters and optimizer
**                   state; every "averaging_frequency" steps, and at the end of every epoch, the
**                   parameters and the optimizer state are replaced by their mean over the workers
**                   (parameter averaging). Needs "precision": "f32". In the last step of an epoch a
**                   worker left without a batch sits the step out.
**   "averaging_frequency"  steps between averagings in "average" mode (>= 1; default 1)
**   "report_score_after_averaging"  true (default): the loss reported per step (progress, result)
**                   is the mean over all workers' examples; false: worker 0's own loss ("average"
**                   mode; in "allreduce" mode the loss is always the mean)
**   "precision"     "f32" (default), "mixed_bf16" or "mixed_f16": layers compute in half precision
**                   where the backend supports it, with f32 master weights; gradients are scaled by
**                   a dynamic loss scale ("loss_scale", default 65536 for f16, 1 for bf16): a step
**                   whose gradients overflow is skipped and the scale halved, and for f16 the scale
**                   doubles again after 2000 good steps
**   "early_stopping" {"metric": "accuracy" | "loss" (on the validation set; the training loss
**                   without one), "patience": epochs without improvement before stopping,
**                   "min_delta", "max_epochs", "max_minutes", "save_best": a path the best model is
**                   saved to after each improvement}. A non-finite score stops training too. When
**                   fit ends, the model holds the best epoch's parameters.
**   "distributed"   {"comm": "mpi", "timeout_s": 60, "bucket_mib": 25, "compression": "none"}:
**                   train as one rank of a group of processes, possibly on several hosts, launched
**                   together (e.g. `mpirun -np 2 ./program`). "comm" names the communicator plugin
**                   (libnnrt-comm-<comm>.so, found in the backend plugin folders; "mpi" reads the rank
**                   and world size from the MPI launcher). Every rank must create the same model
**                   and trainer: nnrt_trainer_create is collective, checks a hash of the model
**                   config and these options on every rank (a difference is
**                   NNRT_ERR_INVALID_ARGUMENT on every rank, naming the ranks that differ) and
**                   copies rank 0's parameters to every rank. In "allreduce" mode each step sums the
**                   gradients of every rank's examples (N ranks at batch b train as 1 rank at batch
**                   N*b), in buckets of about "bucket_mib" MiB, last layers first, sent while
**                   backward still runs; "compression": "f16" or "bf16" sends them in 16 bits. In
**                   "average" mode the averaging takes in every worker of every rank. In fit, each
**                   rank trains on a disjoint shard of every epoch (the epoch's shuffled batches dealt
**                   out in turn, reshuffled each epoch from the shared seed) with the same number of
**                   steps on every rank; fit checks that every rank has the same training set size
**                   and epoch count and starts from rank 0's parameters. Rank 0 evaluates the
**                   validation set and its score decides early stopping for all and is the one every
**                   rank sees (progress, result); another rank may pass NULL (it then waits for rank
**                   0's score) or its own set, which it evaluates at the same time as rank 0 only so
**                   that it does not wait idle, its own score being discarded. A stop asked on any
**                   rank (callback, nnrt_trainer_cancel) stops
**                   every rank after the same step. The progress callback runs on every rank;
**                   nnrt_trainer_save, "save_best" and logging happen on rank 0 only. Every rank may
**                   nnrt_trainer_restore the same checkpoint. nnrt_trainer_step is collective too:
**                   every rank calls it the same number of times. A rank that dies or stops answering
**                   makes every other rank's call fail with NNRT_ERR_BACKEND within "timeout_s"
**                   seconds (default 60): the last quarter of that time (at most 2 s) goes to asking
**                   every rank how far it got, and the message names the rank that did not answer
**                   (dead) or has started fewer collectives (hung, or running fewer steps); the
**                   trainer can then only be released. When the MPI plugin initialised MPI (the
**                   program did not), it finalizes MPI at process exit, which waits until every rank
**                   has ended (at most 10 minutes): a rank that finishes first waits there for the
**                   others, as MPI requires; after a collective that timed out it does not wait. A
**                   program that calls MPI_Init_thread itself (MPI_THREAD_SERIALIZED or more)
**                   finalizes it itself, after releasing its trainers.
** With the context option "deterministic": true, the same seed gives the same result bit for bit.
**
** Returns NNRT_OK and the trainer in *out (release with nnrt_trainer_release);
** NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, malformed JSON, an unknown key or type,
** a negative learning rate, a value out of range (such as "workers" < 1 or "averaging_frequency"
** < 1), a "mode" other than the two above, or a model without an output layer (one with a loss);
** NNRT_ERR_UNSUPPORTED for a setting this build cannot do (several workers on a device backend,
** "average" with mixed precision, a communicator that moves device memory, a quantized model from
** nnrt_model_quantize); NNRT_ERR_BACKEND when
** the communicator plugin is missing or fails to load (the message says why and where it looked)
** or cannot join its group (e.g. MPI not launched or not initialisable). */
NNRT_API nnrt_status nnrt_trainer_create(nnrt_model *m, const char *options_json, nnrt_trainer **out);

/* Sets *rank to this process's rank (0 .. world_size - 1) and *world_size to the number of ranks
** training together with the "distributed" option; without it, 0 and 1. Either may be NULL.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong trainer. */
NNRT_API nnrt_status nnrt_trainer_rank(const nnrt_trainer *t, int32_t *rank, int32_t *world_size);

/* Releases a trainer (and its reference to the model). NULL does nothing. Must not race with a
** running nnrt_trainer_fit on another thread; cancel and wait for it first. */
NNRT_API void nnrt_trainer_release(nnrt_trainer *t);

/* Sets the progress callback (NULL to remove it); `user` is passed through.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong trainer. */
NNRT_API nnrt_status nnrt_trainer_set_progress(nnrt_trainer *t, nnrt_progress_fn fn, void *user);

/* One optimisation step on a minibatch: x shaped [N, <input shape>], y class indices [N] (I32 or
** I64; [N, T] for an output with "flatten": false, one per position) or float targets
** [N, <output shape>]. Sets *loss (may be NULL) to the minibatch's mean loss
** before the update. With "workers" > 1 the minibatch is split into that many contiguous slices,
** one per worker (fewer when N is smaller), which then combine as "mode" says. A non-finite loss (NaN or Inf, from NaN/Inf inputs or divergence) is
** NNRT_ERR_INVALID_ARGUMENT and the parameters are left unchanged.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, class labels outside
** [0, outputs), or a non-finite loss; NNRT_ERR_SHAPE when x or y does not fit the model (the message
** gives both shapes); NNRT_ERR_DTYPE; NNRT_ERR_OUT_OF_MEMORY; NNRT_ERR_BACKEND. */
NNRT_API nnrt_status nnrt_trainer_step(nnrt_trainer *t, const nnrt_array *x, const nnrt_array *y, double *loss);

/* Trains for `epochs` passes over `train` (shuffled each epoch as the options say), evaluating on
** `validation` (may be NULL) after each epoch; its score is the accuracy for class labels, else
** the negated MSE. Calls the progress callback. Stops early when the callback returns nonzero, when
** nnrt_trainer_cancel is called, or when a loss is not finite ("invalid score"); nnrt_trainer_result
** then says why. Calling fit again continues from where training stopped (the epoch count goes on).
** Returns NNRT_OK when training stops by plan (all epochs done, the callback, an invalid score);
** NNRT_ERR_CANCELLED after nnrt_trainer_cancel; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong
** arguments, epochs < 0 or an empty training set; NNRT_ERR_SHAPE when the data does not fit the
** model; NNRT_ERR_OUT_OF_MEMORY; NNRT_ERR_BACKEND. */
NNRT_API nnrt_status nnrt_trainer_fit(nnrt_trainer *t, nnrt_dataset *train, nnrt_dataset *validation,
                                      int32_t epochs);

/* Describes the last fit as JSON: "epochs" (completed, over all fits), "iterations" (minibatches
** trained on, over all fits; with mixed precision this includes the steps skipped for overflow, which
** do not count as optimizer steps: Adam's and AdaMax's bias corrections see only the others),
** "stop_reason"
** ("completed", "callback", "cancelled", "invalid_score", "patience", "max_epochs", "max_time" or
** "not_started"), "best_epoch" and "best_score" (validation, or the early-stopping metric; null
** when there is none), "metric" (with early stopping), "last_loss", "examples_per_second" (of the
** last epoch), "precision" (and for mixed precision "loss_scale" and "skipped_steps"), "workers",
** "mode", with "distributed" also "rank", "world_size", "comm" and, in "allreduce" mode,
** "allreduce_buckets" (gradient buckets per step) and "comm_wait_seconds" (over all fits: the time
** the training thread waited for gradient all-reduces still running when backward ended, i.e. the
** communication that did not overlap computation), "history" (per epoch: "epoch", "loss" (mean),
** "learning_rate", "validation_score", "seconds"). The string convention of this header applies.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong trainer, len == NULL, or buf ==
** NULL with cap > 0. */
NNRT_API nnrt_status nnrt_trainer_result(const nnrt_trainer *t, char *buf, size_t cap, size_t *len);

/* Saves the model and the training state to `path` atomically, as nnrt_model_save does, adding the
** optimizer state (tensors "optim.<param>.<state>") and "nnrt.trainer" in the metadata (epochs and
** steps done, learning rate, seeds and history). nnrt_model_load reads such a file too.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments; NNRT_ERR_IO. */
NNRT_API nnrt_status nnrt_trainer_save(const nnrt_trainer *t, const char *path);

/* Restores parameters and training state saved by nnrt_trainer_save into this trainer's model and
** optimizer, so that training continues exactly where it stopped (in deterministic mode the next
** loss is bit-identical to the one the saved run would have had). The file must come from the
** same model config and optimizer type.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for NULL or wrong arguments, or a file saved from a
** different model or optimizer (the message says what differs); NNRT_ERR_IO; NNRT_ERR_CORRUPT;
** NNRT_ERR_VERSION. On failure the trainer and model are unchanged. */
NNRT_API nnrt_status nnrt_trainer_restore(nnrt_trainer *t, const char *path);

/* Asks a running nnrt_trainer_fit to stop after its current minibatch; it then returns
** NNRT_ERR_CANCELLED. Safe to call from any thread (and from a signal-free context only).
** A cancel before fit starts makes the next fit stop at once.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong trainer. */
NNRT_API nnrt_status nnrt_trainer_cancel(nnrt_trainer *t);

/* ============================================================================================== */
/* Evaluation                                                                                     */
/* ============================================================================================== */

/* Sets *accuracy to the fraction of examples classified right (class labels), or NaN for a
** regression evaluation.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong evaluation or accuracy == NULL. */
NNRT_API nnrt_status nnrt_evaluation_accuracy(const nnrt_evaluation *e, double *accuracy);

/* The evaluation as JSON. Classification: "examples", "classes", "accuracy", "per_class" (a list
** of {"class", "precision", "recall", "f1", "support"}), "macro_avg" and "weighted_avg"
** ({"precision", "recall", "f1"}), "confusion_matrix" (rows: true class, columns: predicted).
** With a class label per position (see nnrt_model_evaluate) also "labels" (the positions
** counted; "accuracy", "support" and the matrix count positions), "loss" (the mean loss per
** position) and "perplexity" (exp of that loss: 256 for a uniform guess among 256 tokens).
** Regression: "examples", "mse", "mae", "r2". The string convention of this header applies.
** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a NULL or wrong evaluation, len == NULL, or buf ==
** NULL with cap > 0. */
NNRT_API nnrt_status nnrt_evaluation_report(const nnrt_evaluation *e, char *buf, size_t cap, size_t *len);

/* Releases an evaluation. NULL does nothing. */
NNRT_API void nnrt_evaluation_release(nnrt_evaluation *e);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNRT_H */
