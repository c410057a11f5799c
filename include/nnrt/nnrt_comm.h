/*
** nnrt_comm.h - the communicator plugin ABI of nnrt.
**
** For people who write communicators (the layer that moves gradients between processes and hosts
** in distributed training). Applications need only nnrt.h.
**
** A communicator is a shared library named libnnrt-comm-<name>.so that exports one symbol:
**
**     const nnrt_comm_v1 *nnrt_comm_entry(uint32_t host_abi, const nnrt_comm_host_api *host);
**
** nnrt finds it in the folders it searches for backends (NNRT_BACKEND_PATH, the folder holding
** libnnrt, its nnrt/backends subfolder, the install libdir), loads it with dlopen(RTLD_NOW |
** RTLD_LOCAL) when a trainer first asks for it by name (the trainer option "distributed": {"comm":
** "<name>"}), calls the entry point once, and keeps the library loaded for the life of the process.
** The entry point returns the function table, or NULL after host->set_error() said why. A file that
** fails to load is listed with the reason in nnrt_context_describe ("comms") and `nnrt info`.
**
** Versioning: as in nnrt_backend.h. Every struct that crosses the boundary starts with
** `uint32_t struct_size` and only grows at its end; a reader checks struct_size before reading a
** member added later (NNRT_COMM_HAS_MEMBER). NNRT_COMM_ABI_MAJOR changes only for an incompatible
** change; the host refuses a table of another major and a plugin refuses a host of another major.
**
** Errors: functions return an nnrt_status (nnrt.h) and, before returning a failure, call
** host->set_error() with a message that says what was expected and what was given. No C++ exception
** crosses the boundary; a plugin never aborts, exits or prints (it logs through host->log()), and
** never calls the engine's own abort unless the host calls abort().
**
** Threads: the host calls a communicator from one thread at a time, but that thread may change
** between calls; a request may be waited for from another thread than the one that started it.
** Operations complete in the order they were started, on every rank alike: every rank must start
** the same collectives in the same order.
*/
#ifndef NNRT_COMM_H
#define NNRT_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "nnrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNRT_COMM_ABI_MAJOR 1

/* True when a struct of the size the writer declared in struct_size holds `member`. */
#define NNRT_COMM_HAS_MEMBER(ptr, type, member) \
  ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* Opaque to the host: one communicator (a group of ranks), and one operation in flight. */
typedef struct nnrt_comm nnrt_comm;
typedef struct nnrt_comm_request nnrt_comm_request;

/* The communicator's buffers are ordinary host memory (MPI). Without this flag they are device
** memory of the GPU backend the trainer's context runs on (NCCL). */
#define NNRT_COMM_HOST_MEMORY 1u

/* Where the calling process sits in the group. */
typedef struct nnrt_comm_info {
  uint32_t struct_size; /* set by the caller to sizeof(nnrt_comm_info) */
  int32_t rank;         /* 0 .. size-1 */
  int32_t size;         /* ranks in the group (the world size) */
  int32_t local_rank;   /* rank among the processes of this host (picks the GPU) */
  int32_t local_size;   /* processes of the group on this host */
} nnrt_comm_info;

typedef struct nnrt_comm_v1 {
  uint32_t struct_size; /* sizeof(nnrt_comm_v1) as the plugin was built */
  uint32_t abi_major;   /* NNRT_COMM_ABI_MAJOR */
  const char *name;     /* "mpi": what "distributed": {"comm": ...} names */
  const char *version;  /* the engine's own version string, e.g. "Open MPI v4.1.4" */
  uint32_t flags;       /* NNRT_COMM_HOST_MEMORY or 0 */

  /* Joins the group described by `options_json`, the trainer's "distributed" object as text
  ** (the plugin reads the keys meant for it and ignores the others; the host has checked them):
  ** MPI reads rank and size from the MPI launcher's environment (mpirun), initialising MPI if the
  ** program has not; NCCL bootstraps its unique id over MPI. `timeout_s` bounds every wait.
  ** Returns NNRT_OK and the communicator in *out; NNRT_ERR_BACKEND when the engine cannot start
  ** (not launched by mpirun where that is needed, no network), with the engine's own reason. */
  nnrt_status (*create)(const char *options_json, double timeout_s, nnrt_comm **out);
  /* Leaves the group and frees the communicator. Must not be called with requests in flight that
  ** did not complete (after a timeout, call abort() instead and leave the communicator). NULL does
  ** nothing. */
  void (*destroy)(nnrt_comm *c);
  /* Fills *info (which must have struct_size set). Returns NNRT_OK. */
  nnrt_status (*info)(nnrt_comm *c, nnrt_comm_info *info);

  /* The collectives. Each starts an operation and returns at once with a request in *req, to be
  ** passed to wait() exactly once; or, with req == NULL, runs it to completion (waiting at most the
  ** create() timeout). Buffers must stay valid and untouched until the request completes.
  **
  ** allreduce_sum: buf (count elements of dtype: NNRT_DTYPE_F32, F16 or BF16) := the elementwise sum
  **   over all ranks, in place. f16 and bf16 are summed in f32 and rounded to nearest even. count
  **   may be 0.
  ** broadcast: buf (bytes) := rank root's buf.
  ** allgather: recv (size * bytes) := the concatenation of every rank's send (bytes), in rank order.
  ** Returns NNRT_OK; NNRT_ERR_INVALID_ARGUMENT for a bad dtype, root or NULL buffer; NNRT_ERR_BACKEND
  ** when the engine fails. */
  nnrt_status (*allreduce_sum)(nnrt_comm *c, void *buf, size_t count, int32_t dtype, nnrt_comm_request **req);
  nnrt_status (*broadcast)(nnrt_comm *c, void *buf, size_t bytes, int32_t root, nnrt_comm_request **req);
  nnrt_status (*allgather)(nnrt_comm *c, const void *send, size_t bytes, void *recv, nnrt_comm_request **req);
  /* A collective as above that completes when every rank has started it. Returns NNRT_OK;
  ** NNRT_ERR_BACKEND when the engine fails. */
  nnrt_status (*barrier)(nnrt_comm *c, nnrt_comm_request **req);

  /* Waits at most timeout_s seconds for a request. NNRT_OK: it completed and is freed.
  ** NNRT_ERR_BACKEND: the operation failed, or did not complete in time (a rank died or stopped
  ** answering; the message says which ranks had not answered where the engine can tell); the
  ** request is then abandoned (the plugin frees it when it can) and the communicator is broken:
  ** every later call fails the same way. */
  nnrt_status (*wait)(nnrt_comm *c, nnrt_comm_request *req, double timeout_s);

  /* Gives up on the group: the communicator is broken from now on (later calls fail), and the
  ** engine is told to end the job where it has a way (MPI_Abort ends every rank of it). */
  void (*abort)(nnrt_comm *c, const char *reason);

  /* The message of this communicator's last failure ("" if none), valid until the next call. */
  const char *(*last_error)(nnrt_comm *c);
} nnrt_comm_v1;

/* What the host passes to the entry point. */
typedef struct nnrt_comm_host_api {
  uint32_t struct_size;
  uint32_t abi_major; /* NNRT_COMM_ABI_MAJOR of the host */
  /* Logs a message (level NNRT_LOG_*) through the application's log callback. */
  void (*log)(int level, const char *message);
  /* Sets the message of the failure the plugin is about to return, for nnrt_last_error(). */
  void (*set_error)(const char *message);
} nnrt_comm_host_api;

/* The entry point every communicator plugin exports. */
typedef const nnrt_comm_v1 *(*nnrt_comm_entry_fn)(uint32_t host_abi, const nnrt_comm_host_api *host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NNRT_COMM_H */
