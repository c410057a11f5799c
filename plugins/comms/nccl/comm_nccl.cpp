// libnnrt-comm-nccl.so: the communicator plugin over NCCL, for ranks with one GPU each.
//
// Buffers are device memory of the GPU backend (no NNRT_COMM_HOST_MEMORY). The group's NCCL unique
// id is made by rank 0 and broadcast over MPI (the same launcher as the "mpi" communicator: rank,
// size and the local rank that picks the GPU come from it). Every collective runs on the
// communicator's own CUDA stream; a request is a CUDA event recorded after it, and wait() polls the
// event until the deadline, then aborts the NCCL communicator (ncclCommAbort), so that a dead rank
// never hangs the caller.
#define OMPI_SKIP_MPICXX 1
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <time.h>

#include <chrono>
#include <mutex>
#include <string>

#include "nnrt/plugin_kit.hpp"
#include "nnrt/nnrt_comm.h"

struct nnrt_comm_request {
  cudaEvent_t done = nullptr;
  const char *what = "";
};

struct nnrt_comm {
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0, size = 1, local_rank = 0, local_size = 1, device = 0;
  double timeout_s = 60;
  bool broken = false;
  std::string last_error;
};

namespace {

// The NCCL communicator as the plugin kit (nnrt/plugin_kit.hpp) sees it: every table function runs
// behind its barrier, and the host its entry point accepted receives the messages.
struct Nccl {
  static constexpr const char *name = "nccl communicator";
  using Host = nnrt_comm_host_api;
};


nnrt_status failure(nnrt_comm *c, nnrt_status s, const std::string &message) {
  if (c) c->last_error = message;
  if (const auto *host = nnrt::plugin_kit::host<Nccl>()) host->set_error(message.c_str());
  return s;
}

nnrt_status nccl_failure(nnrt_comm *c, const char *what, ncclResult_t r) {
  return failure(c, NNRT_ERR_BACKEND, std::string("nccl ") + what + ": " + ncclGetErrorString(r) +
                                          (c && c->nccl ? std::string(" (") + ncclGetLastError(c->nccl) + ")" : ""));
}

nnrt_status cuda_failure(nnrt_comm *c, const char *what, cudaError_t e) {
  return failure(c, NNRT_ERR_BACKEND, std::string("nccl communicator: ") + what + ": " + cudaGetErrorString(e));
}

// MPI supplies rank, size and the id's broadcast; initialised here if the program has not.
std::string start_mpi() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return "";
  int provided = 0;
  int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (code != MPI_SUCCESS) return "MPI_Init_thread failed (is the program started by mpirun?)";
  std::atexit([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  });
  return "";
}

nnrt_status nccl_create(const char *, double timeout_s, nnrt_comm **out) {
  if (!out || !(timeout_s > 0)) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "nccl communicator: bad arguments");
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    return failure(nullptr, NNRT_ERR_NO_DEVICE, std::string("nccl communicator: no CUDA device here (") +
                                                    (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")");
  }
  std::string mpi = start_mpi();
  if (!mpi.empty()) return failure(nullptr, NNRT_ERR_BACKEND, "nccl communicator: " + mpi);
  auto *c = new nnrt_comm();
  c->timeout_s = timeout_s;
  MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c->size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &c->local_rank);
  MPI_Comm_size(local, &c->local_size);
  MPI_Comm_free(&local);
  if (c->local_rank >= devices) {
    std::string m = "nccl communicator: local rank " + std::to_string(c->local_rank) + " needs GPU " +
                    std::to_string(c->local_rank) + ", this host has " + std::to_string(devices);
    delete c;
    return failure(nullptr, NNRT_ERR_NO_DEVICE, m);
  }
  c->device = c->local_rank;
  ncclUniqueId id;
  if (c->rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  if ((e = cudaSetDevice(c->device)) != cudaSuccess || (e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
    nnrt_status s = cuda_failure(nullptr, "opening the GPU", e);
    delete c;
    return s;
  }
  ncclResult_t r = ncclCommInitRank(&c->nccl, c->size, id, c->rank);
  if (r != ncclSuccess) {
    nnrt_status s = nccl_failure(nullptr, "ncclCommInitRank", r);
    cudaStreamDestroy(c->stream);
    delete c;
    return s;
  }
  *out = c;
  return NNRT_OK;
}

void nccl_destroy(nnrt_comm *c) {
  if (!c) return;
  if (c->nccl) (c->broken ? ncclCommAbort : ncclCommDestroy)(c->nccl);
  if (c->stream) cudaStreamDestroy(c->stream);
  delete c;
}

nnrt_status nccl_info(nnrt_comm *c, nnrt_comm_info *info) {
  if (!c || !info || info->struct_size < offsetof(nnrt_comm_info, local_size) + sizeof info->local_size) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "nccl communicator: info: bad arguments");
  }
  info->rank = c->rank;
  info->size = c->size;
  info->local_rank = c->local_rank;
  info->local_size = c->local_size;
  return NNRT_OK;
}

nnrt_status wait_event(nnrt_comm *c, nnrt_comm_request *r, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    cudaError_t e = cudaEventQuery(r->done);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      cudaEventDestroy(r->done);
      delete r;
      c->broken = true;
      return cuda_failure(c, "waiting for a collective", e);
    }
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(c->nccl, &async);
    if (async != ncclSuccess || std::chrono::steady_clock::now() > deadline) {
      c->broken = true;
      ncclCommAbort(c->nccl);
      c->nccl = nullptr;
      std::string why = async != ncclSuccess ? std::string(ncclGetErrorString(async))
                                             : "did not complete within " + std::to_string(timeout_s) +
                                                   " s: another rank died or stopped answering";
      std::string what = r->what;
      delete r;  // its event is left to the aborted communicator's stream
      return failure(c, NNRT_ERR_BACKEND, "rank " + std::to_string(c->rank) + ": nccl " + what + " " + why);
    }
    timespec pause{0, 50000};
    nanosleep(&pause, nullptr);
  }
  cudaEventDestroy(r->done);
  delete r;
  return NNRT_OK;
}

// Records the request's event after the collective `r` and hands it out, or waits for it.
nnrt_status finish(nnrt_comm *c, ncclResult_t started, const char *what, nnrt_comm_request **req) {
  if (started != ncclSuccess) return nccl_failure(c, what, started);
  auto *r = new nnrt_comm_request();
  r->what = what;
  cudaError_t e = cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(r->done, c->stream);
  if (e != cudaSuccess) {
    delete r;
    return cuda_failure(c, what, e);
  }
  if (req) {
    *req = r;
    return NNRT_OK;
  }
  return wait_event(c, r, c->timeout_s);
}

nnrt_status usable(nnrt_comm *c) {
  if (!c) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "nccl communicator: NULL communicator");
  if (c->broken) return failure(c, NNRT_ERR_BACKEND, "nccl communicator: unusable after an earlier failure");
  return NNRT_OK;
}

nnrt_status nccl_allreduce(nnrt_comm *c, void *buf, size_t count, int32_t dtype, nnrt_comm_request **req) {
  if (nnrt_status s = usable(c)) return s;
  ncclDataType_t t = dtype == NNRT_DTYPE_F32 ? ncclFloat32 : dtype == NNRT_DTYPE_F16 ? ncclFloat16 : ncclBfloat16;
  if (dtype != NNRT_DTYPE_F32 && dtype != NNRT_DTYPE_F16 && dtype != NNRT_DTYPE_BF16) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "nccl all-reduce: expected dtype f32, f16 or bf16, got " + std::to_string(dtype));
  }
  return finish(c, ncclAllReduce(buf, buf, count, t, ncclSum, c->nccl, c->stream), "all-reduce", req);
}

nnrt_status nccl_broadcast(nnrt_comm *c, void *buf, size_t bytes, int32_t root, nnrt_comm_request **req) {
  if (nnrt_status s = usable(c)) return s;
  if (root < 0 || root >= c->size) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "nccl broadcast: root out of range");
  return finish(c, ncclBroadcast(buf, buf, bytes, ncclUint8, root, c->nccl, c->stream), "broadcast", req);
}

nnrt_status nccl_allgather(nnrt_comm *c, const void *send, size_t bytes, void *recv, nnrt_comm_request **req) {
  if (nnrt_status s = usable(c)) return s;
  return finish(c, ncclAllGather(send, recv, bytes, ncclUint8, c->nccl, c->stream), "all-gather", req);
}

nnrt_status nccl_barrier(nnrt_comm *c, nnrt_comm_request **req) {
  if (nnrt_status s = usable(c)) return s;
  // NCCL has no barrier: an all-reduce of nothing orders the streams of every rank.
  return finish(c, ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, c->nccl, c->stream), "barrier", req);
}

nnrt_status nccl_wait(nnrt_comm *c, nnrt_comm_request *r, double timeout_s) {
  if (!c || !r) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "nccl wait: NULL communicator or request");
  return wait_event(c, r, timeout_s);
}

void nccl_abort(nnrt_comm *c, const char *) {
  if (!c || !c->nccl) return;
  c->broken = true;
  ncclCommAbort(c->nccl);
  c->nccl = nullptr;
}

const char *nccl_last_error(nnrt_comm *c) { return c ? c->last_error.c_str() : ""; }

std::string library_version() {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const nnrt_comm_v1 *nnrt_comm_entry(uint32_t host_abi,
                                                                                      const nnrt_comm_host_api *h) {
  using nnrt::plugin_kit::barrier;
  if (!nnrt::plugin_kit::accept_host<Nccl>(host_abi, h, {})) return nullptr;
  static const std::string version = library_version();
  static const nnrt_comm_v1 table = {
      sizeof(nnrt_comm_v1), NNRT_COMM_ABI_MAJOR, "nccl", version.c_str(), 0,
      barrier<Nccl, nccl_create>,
      barrier<Nccl, nccl_destroy>,
      barrier<Nccl, nccl_info>,
      barrier<Nccl, nccl_allreduce>,
      barrier<Nccl, nccl_broadcast>,
      barrier<Nccl, nccl_allgather>,
      barrier<Nccl, nccl_barrier>,
      barrier<Nccl, nccl_wait>,
      barrier<Nccl, nccl_abort>,
      barrier<Nccl, nccl_last_error>,
  };
  return &table;
}
