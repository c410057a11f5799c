// libnnrt-comm-mpi.so: the communicator plugin over MPI (Debian's Open MPI).
//
// All MPI calls of the process that go through this plugin are made by one thread it owns (the
// "engine" thread), which also initialises MPI when the program has not: so MPI needs only
// MPI_THREAD_FUNNELED, and the trainer's thread never blocks inside MPI. A collective is queued to
// the engine thread, started there as a non-blocking MPI call and tested until it completes, so
// that several can be in flight (gradient buckets) while backward runs. wait() waits on a
// condition variable with a deadline: a rank that died or stopped answering is reported after the
// timeout instead of hanging the caller; the last part of the timeout goes to asking the other
// ranks how far they got (liveness.h), so that the error names the rank that died or fell behind.
// The C API only: Open MPI's deprecated C++ bindings warn under -Wextra.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nnrt/kernels/half.h"
#include "nnrt/plugin_kit.hpp"
#include "liveness.h"
#include "nnrt/nnrt_comm.h"

struct nnrt_comm_request {
  // What to start on the engine thread; returns an MPI error code.
  enum Kind { kAllreduce, kBroadcast, kAllgather, kBarrier, kDup, kFree, kDiagnose } kind = kBarrier;
  nnrt_comm *comm = nullptr;
  void *buf = nullptr;
  const void *send = nullptr;
  size_t count = 0, bytes = 0;
  int32_t dtype = 0, root = 0;
  MPI_Request mpi = MPI_REQUEST_NULL;
  int64_t number = 0;  // of a collective, counted per communicator (liveness.h)
  // kDiagnose: the request that timed out, how long to probe, and who is to blame.
  nnrt_comm_request *timed_out = nullptr;
  double window_s = 0;
  std::string report;
  // Completion, under Engine::mutex.
  bool done = false, abandoned = false;
  std::string error;  // "" on success
};

struct nnrt_comm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  double timeout_s = 60;
  std::atomic<bool> broken{false};
  std::mutex error_mutex;
  std::string last_error, broken_reason;
  nnrt::comm_mpi::Liveness liveness;  // used by the engine thread only
};

namespace {

using nnrt::comm_mpi::Liveness;

// The MPI communicator as the plugin kit (nnrt/plugin_kit.hpp) sees it: every table function runs
// behind its barrier, and the host its entry point accepted receives the messages.
struct Mpi {
  static constexpr const char *name = "mpi communicator";
  using Host = nnrt_comm_host_api;
};


std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

// Sums of 16-bit floats, computed in f32 and rounded to nearest even.
template <float (*widen)(uint16_t), uint16_t (*narrow)(float)>
void sum_half(void *in, void *inout, int *len, MPI_Datatype *) {
  const uint16_t *a = static_cast<const uint16_t *>(in);
  uint16_t *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i) b[i] = narrow(widen(a[i]) + widen(b[i]));
}

// The process-wide MPI engine: its thread, its queue, the ops for f16 and bf16.
class Engine {
 public:
  static Engine &instance() {
    static Engine *engine = new Engine();  // never destroyed: finalize() runs at exit
    return *engine;
  }

  // Starts the thread and MPI once. Returns "" or why MPI could not start.
  std::string start() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!started_) {
      started_ = true;
      thread_ = std::thread([this] { run(); });
      thread_.detach();  // see finalize(): the thread may be stuck inside MPI after a dead rank
      std::atexit([] { Engine::instance().finalize(); });
    }
    ready_cv_.wait(lock, [&] { return ready_; });
    return init_error_;
  }

  void submit(nnrt_comm_request *r) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(r);
    }
    work_cv_.notify_one();
  }

  // Waits for r until the deadline; true when it completed (r->error says how).
  bool wait(nnrt_comm_request *r, double timeout_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    waiters_.fetch_add(1, std::memory_order_relaxed);
    bool done = done_cv_.wait_until(lock, deadline, [&] { return r->done; });
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    return done;
  }

  // Gives up a request that timed out: the engine thread frees it if it ever completes. False when
  // it completed after all (the caller still owns it).
  bool abandon(nnrt_comm_request *r) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (r->done) return false;
    r->abandoned = true;
    stuck_ = true;
    return true;
  }

  std::mutex &mutex() { return mutex_; }
  MPI_Op op_for(int32_t dtype) const {
    return dtype == NNRT_DTYPE_F16 ? sum_f16_ : dtype == NNRT_DTYPE_BF16 ? sum_bf16_ : MPI_SUM;
  }

 private:
  Engine() = default;

  // Runs at exit: MPI_Finalize on the engine thread, unless a collective never completed (then
  // finalizing would wait for the dead rank forever; mpirun reports the job as failed anyway).
  void finalize() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!ready_ || !init_error_.empty() || stuck_ || !initialised_here_) return;
    stopping_ = true;
    work_cv_.notify_one();
    // MPI_Finalize returns when every rank has called it: a rank that ends early waits here for
    // the others (rank 0 may still be evaluating), up to a bound that a dead job cannot exceed.
    done_cv_.wait_for(lock, std::chrono::minutes(10), [&] { return finalized_; });
  }

  void run() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    std::string error;
    if (!initialised) {
      // nnrt loads this plugin RTLD_LOCAL; Open MPI's own components (dlopen'ed by MPI_Init) expect
      // libmpi's symbols to be global, as in a program linked to it: make them so.
      Dl_info self;
      if (dladdr(reinterpret_cast<void *>(&MPI_Init_thread), &self) && self.dli_fname) {
        dlopen(self.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
      }
      int provided = 0;
      int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (code != MPI_SUCCESS) error = "MPI_Init_thread failed: " + mpi_error_text(code);
      initialised_here_ = code == MPI_SUCCESS;
    } else {
      int provided = 0;
      MPI_Query_thread(&provided);
      if (provided < MPI_THREAD_SERIALIZED) {
        error = "the program initialised MPI with thread level " + std::to_string(provided) +
                "; nnrt calls MPI from its own thread and needs MPI_THREAD_SERIALIZED (" +
                std::to_string(MPI_THREAD_SERIALIZED) + ") or MPI_THREAD_MULTIPLE: use MPI_Init_thread";
      }
    }
    if (error.empty()) {
      prefer_ring_allreduce();
      MPI_Op_create(&sum_half<nnrt::kernels::f16_to_f32, nnrt::kernels::f32_to_f16>, 1, &sum_f16_);
      MPI_Op_create(&sum_half<nnrt::kernels::bf16_to_f32, nnrt::kernels::f32_to_bf16>, 1, &sum_bf16_);
    }
    std::deque<nnrt_comm_request *> in_flight;
    std::vector<nnrt_comm_request *> diagnosing;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      init_error_ = error;
      ready_ = true;
    }
    ready_cv_.notify_all();
    if (!error.empty()) return;

    while (true) {
      std::deque<nnrt_comm_request *> fresh;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        auto has_work = [&] { return stopping_ || !queue_.empty(); };
        if (in_flight.empty() && diagnosing.empty()) {
          // Communicators with other ranks answer their probes even while no collective runs.
          if (listening_.empty()) {
            work_cv_.wait(lock, has_work);
          } else {
            work_cv_.wait_for(lock, std::chrono::milliseconds(10), has_work);
          }
        }
        if (stopping_ && queue_.empty() && in_flight.empty()) break;
        fresh.swap(queue_);
      }
      for (nnrt_comm_request *r : fresh) {
        if (r->kind == nnrt_comm_request::kDiagnose) {
          diagnose(*r);
          diagnosing.push_back(r);
          continue;
        }
        int code = begin(*r);
        if (code != MPI_SUCCESS) {
          complete(r, code);
        } else if (r->mpi == MPI_REQUEST_NULL) {
          complete(r, MPI_SUCCESS);
        } else {
          in_flight.push_back(r);
        }
      }
      // Test the oldest first: collectives complete in the order they were started.
      bool progressed = false;
      while (!in_flight.empty()) {
        int flag = 0;
        int code = MPI_Test(&in_flight.front()->mpi, &flag, MPI_STATUS_IGNORE);
        if (!flag && code == MPI_SUCCESS) break;
        complete(in_flight.front(), code);
        in_flight.pop_front();
        progressed = true;
      }
      for (nnrt_comm *c : listening_) c->liveness.poll();
      for (size_t i = 0; i < diagnosing.size();) {
        nnrt_comm_request *r = diagnosing[i];
        if (r->comm->liveness.diagnosing()) {
          ++i;
          continue;
        }
        r->report = r->comm->liveness.report();
        complete(r, MPI_SUCCESS);
        diagnosing.erase(diagnosing.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if ((!in_flight.empty() || !diagnosing.empty()) && !progressed) {
        if (waiters_.load(std::memory_order_relaxed) > 0) {
          // A caller waits, so its computation is not running: test as often as MPI_Allreduce itself
          // would (Open MPI progresses a non-blocking collective only inside MPI calls).
          sched_yield();
        } else {
          // Buckets in flight during backward: leave the cores to the computation between tests.
          timespec pause{0, 20000};
          nanosleep(&pause, nullptr);
        }
      }
    }
    for (nnrt_comm *c : listening_) c->liveness.stop_listening();
    MPI_Op_free(&sum_f16_);
    MPI_Op_free(&sum_bf16_);
    if (initialised_here_) MPI_Finalize();
    std::lock_guard<std::mutex> lock(mutex_);
    finalized_ = true;
    done_cv_.notify_all();
  }

  // Open MPI's non-blocking all-reduce (libnbc) sums in place on fewer than 4 ranks with a binomial
  // tree, a reduce and then a broadcast: about twice the time of MPI_Allreduce for large buffers
  // (bench/scaling measures both). Unless the user chose an algorithm (the MCA variable is not at
  // its default 0, "ignore"), ask for the ring, which is bandwidth-optimal for the gradient buckets.
  static void prefer_ring_allreduce() {
    if (std::getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm")) return;
    int provided = 0, index = 0, count = 0;
    if (MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return;
    MPI_T_cvar_handle handle;
    if (MPI_T_cvar_get_index("coll_libnbc_iallreduce_algorithm", &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      int value = -1;
      if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS && value == 0) {
        const int ring = 1;
        MPI_T_cvar_write(handle, &ring);  // refused where Open MPI does not allow it: then nothing changes
      }
      MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
  }

  static MPI_Datatype datatype(int32_t dtype) { return dtype == NNRT_DTYPE_F32 ? MPI_FLOAT : MPI_UINT16_T; }

  // Starts r on the engine thread; blocking calls (dup, free) complete here.
  int begin(nnrt_comm_request &r) {
    nnrt_comm &c = *r.comm;
    int count = static_cast<int>(r.count);
    if (r.kind <= nnrt_comm_request::kBarrier) r.number = c.liveness.note_started();
    switch (r.kind) {
      case nnrt_comm_request::kAllreduce:
        return MPI_Iallreduce(MPI_IN_PLACE, r.buf, count, datatype(r.dtype), op_for(r.dtype), c.mpi, &r.mpi);
      case nnrt_comm_request::kBroadcast:
        return MPI_Ibcast(r.buf, count, MPI_BYTE, r.root, c.mpi, &r.mpi);
      case nnrt_comm_request::kAllgather:
        return MPI_Iallgather(r.send, count, MPI_BYTE, r.buf, count, MPI_BYTE, c.mpi, &r.mpi);
      case nnrt_comm_request::kBarrier:
        return MPI_Ibarrier(c.mpi, &r.mpi);
      case nnrt_comm_request::kDup: {
        int code = MPI_Comm_dup(MPI_COMM_WORLD, &c.mpi);
        if (code != MPI_SUCCESS) return code;
        MPI_Comm_set_errhandler(c.mpi, MPI_ERRORS_RETURN);
        MPI_Comm_rank(c.mpi, &c.rank);
        MPI_Comm_size(c.mpi, &c.size);
        MPI_Comm local;
        code = MPI_Comm_split_type(c.mpi, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &local);
        if (code != MPI_SUCCESS) return code;
        MPI_Comm_rank(local, &c.local_rank);
        MPI_Comm_size(local, &c.local_size);
        code = MPI_Comm_free(&local);
        if (code != MPI_SUCCESS || c.size == 1) return code;
        code = c.liveness.attach(c.mpi, c.rank, c.size);
        if (code == MPI_SUCCESS) listening_.push_back(&c);
        return code;
      }
      case nnrt_comm_request::kFree:
        c.liveness.detach();  // nothing when it never attached
        listening_.erase(std::remove(listening_.begin(), listening_.end(), &c), listening_.end());
        return MPI_Comm_free(&c.mpi);
      case nnrt_comm_request::kDiagnose:
        break;  // see diagnose()
    }
    return MPI_ERR_OTHER;
  }

  // Starts probing the other ranks about the collective r.timed_out waits in.
  void diagnose(nnrt_comm_request &r) {
    Liveness &l = r.comm->liveness;
    int64_t number = r.timed_out->number ? r.timed_out->number : l.started() + 1;  // not even started
    l.begin_diagnosis(number, r.window_s);
  }

  void complete(nnrt_comm_request *r, int code) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (code != MPI_SUCCESS) r->error = mpi_error_text(code);
    r->done = true;
    if (r->abandoned) delete r;
    done_cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_, ready_cv_;
  std::deque<nnrt_comm_request *> queue_;
  std::vector<nnrt_comm *> listening_;  // communicators that answer liveness probes
  std::atomic<int> waiters_{0};          // callers blocked in wait(): the engine polls hard then
  std::thread thread_;
  bool started_ = false, ready_ = false, stopping_ = false, finalized_ = false, stuck_ = false;
  bool initialised_here_ = false;
  std::string init_error_;
  MPI_Op sum_f16_ = MPI_OP_NULL, sum_bf16_ = MPI_OP_NULL;
};

nnrt_status failure(nnrt_comm *c, nnrt_status s, const std::string &message) {
  if (c) {
    std::lock_guard<std::mutex> lock(c->error_mutex);
    c->last_error = message;
  }
  if (const auto *host = nnrt::plugin_kit::host<Mpi>()) host->set_error(message.c_str());
  return s;
}

// Queues r and either hands it to the caller or waits for it (req == NULL).
nnrt_status issue(nnrt_comm *c, nnrt_comm_request *r, nnrt_comm_request **req, const char *what);

nnrt_status check_usable(nnrt_comm *c) {
  if (!c) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "mpi communicator: NULL communicator");
  if (c->broken.load()) {
    std::lock_guard<std::mutex> lock(c->error_mutex);
    std::string why = c->broken_reason;
    c->last_error = "mpi communicator: unusable after an earlier failure: " + why;
    if (const auto *host = nnrt::plugin_kit::host<Mpi>()) host->set_error(c->last_error.c_str());
    return NNRT_ERR_BACKEND;
  }
  return NNRT_OK;
}

std::string others(const nnrt_comm &c) {
  if (c.size == 2) return "rank " + std::to_string(1 - c.rank);
  std::string list;
  for (int r = 0; r < c.size; ++r) {
    if (r == c.rank) continue;
    list += (list.empty() ? "" : ", ") + std::to_string(r);
  }
  return "one of ranks " + list;
}

// Asks the other ranks how far they got, while r stays timed out; "" when the engine thread could
// not answer within window_s (it is stuck inside MPI itself).
std::string blame_for(nnrt_comm *c, nnrt_comm_request *r, double window_s, bool *asked) {
  Engine &e = Engine::instance();
  *asked = false;
  if (window_s <= 0) return "";
  auto *probe = new nnrt_comm_request();
  probe->kind = nnrt_comm_request::kDiagnose;
  probe->comm = c;
  probe->timed_out = r;
  probe->window_s = 0.8 * window_s;  // the rest is for the engine's own latency
  e.submit(probe);
  if (!e.wait(probe, window_s) && e.abandon(probe)) return "";
  *asked = true;
  std::string report = probe->report;
  delete probe;
  return report;
}

nnrt_status wait_for(nnrt_comm *c, nnrt_comm_request *r, double timeout_s, const char *what) {
  Engine &e = Engine::instance();
  // The last quarter of the timeout (at most 2 s) goes to finding the rank to blame; the request
  // fails when the whole timeout has passed.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  double window_s = c->size > 1 ? std::min(2.0, timeout_s / 4) : 0;
  if (!e.wait(r, timeout_s - window_s)) {
    bool asked = false;
    std::string blame = blame_for(c, r, window_s, &asked);
    // The ranks answered early: the late one still has until the timeout to catch up.
    std::chrono::duration<double> left = deadline - std::chrono::steady_clock::now();
    if (left.count() > 0) e.wait(r, left.count());
    if (e.abandon(r)) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
      if (!asked) {
        blame = others(*c) + " did not answer (it died, hangs, or runs a different number of steps)";
      } else if (blame.empty()) {
        blame = "every other rank is alive and has reached it: MPI or the network between the ranks is stuck";
      }
      std::string why = "rank " + std::to_string(c->rank) + ": " + what + " did not complete within " + seconds +
                        " s: " + blame;
      {
        std::lock_guard<std::mutex> lock(c->error_mutex);
        c->broken_reason = why;
      }
      c->broken = true;
      return failure(c, NNRT_ERR_BACKEND, why);
    }
    // It completed while the ranks were being asked.
  }
  std::string error = r->error;
  delete r;
  if (!error.empty()) {
    std::string why = "rank " + std::to_string(c->rank) + ": " + what + " failed: " + error;
    {
      std::lock_guard<std::mutex> lock(c->error_mutex);
      c->broken_reason = why;
    }
    c->broken = true;
    return failure(c, NNRT_ERR_BACKEND, why);
  }
  return NNRT_OK;
}

const char *kind_name(nnrt_comm_request::Kind k) {
  switch (k) {
    case nnrt_comm_request::kAllreduce: return "all-reduce";
    case nnrt_comm_request::kBroadcast: return "broadcast";
    case nnrt_comm_request::kAllgather: return "all-gather";
    case nnrt_comm_request::kBarrier: return "barrier";
    case nnrt_comm_request::kDup: return "joining the group (MPI_Comm_dup)";
    case nnrt_comm_request::kFree: return "MPI_Comm_free";
    case nnrt_comm_request::kDiagnose: return "liveness probe";
  }
  return "?";
}

nnrt_status issue(nnrt_comm *c, nnrt_comm_request *r, nnrt_comm_request **req, const char *) {
  r->comm = c;
  Engine::instance().submit(r);
  if (req) {
    *req = r;
    return NNRT_OK;
  }
  return wait_for(c, r, c->timeout_s, kind_name(r->kind));
}

nnrt_status mpi_create(const char *, double timeout_s, nnrt_comm **out) {
  if (!out) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "mpi communicator: out is NULL");
  if (!(timeout_s > 0)) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "mpi communicator: timeout must be > 0");
  try {
    std::string error = Engine::instance().start();
    if (!error.empty()) return failure(nullptr, NNRT_ERR_BACKEND, "mpi communicator: " + error);
    std::unique_ptr<nnrt_comm> c(new nnrt_comm());
    c->timeout_s = timeout_s;
    auto *r = new nnrt_comm_request();
    r->kind = nnrt_comm_request::kDup;
    nnrt_status s = issue(c.get(), r, nullptr, "");
    if (s != NNRT_OK) {
      c.release();  // the engine thread may still use it
      return s;
    }
    *out = c.release();
    return NNRT_OK;
  } catch (const std::exception &e) {
    return failure(nullptr, NNRT_ERR_OUT_OF_MEMORY, std::string("mpi communicator: ") + e.what());
  }
}

void mpi_destroy(nnrt_comm *c) {
  if (!c) return;
  if (c->broken.load()) return;  // requests may still reference it: leave it
  auto *r = new nnrt_comm_request();
  r->kind = nnrt_comm_request::kFree;
  if (issue(c, r, nullptr, "") == NNRT_OK) delete c;
}

nnrt_status mpi_info(nnrt_comm *c, nnrt_comm_info *info) {
  if (!c || !info) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi communicator: info: NULL argument");
  if (info->struct_size < offsetof(nnrt_comm_info, local_size) + sizeof info->local_size) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi communicator: info: struct_size too small");
  }
  info->rank = c->rank;
  info->size = c->size;
  info->local_rank = c->local_rank;
  info->local_size = c->local_size;
  return NNRT_OK;
}

nnrt_status mpi_allreduce(nnrt_comm *c, void *buf, size_t count, int32_t dtype, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  if (dtype != NNRT_DTYPE_F32 && dtype != NNRT_DTYPE_F16 && dtype != NNRT_DTYPE_BF16) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT,
                   "mpi all-reduce: expected dtype f32, f16 or bf16, got " + std::to_string(dtype));
  }
  if (!buf && count) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi all-reduce: buf is NULL");
  if (count > static_cast<size_t>(INT32_MAX)) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi all-reduce: at most 2^31-1 elements per call, got " +
                                                     std::to_string(count));
  }
  auto *r = new nnrt_comm_request();
  r->kind = nnrt_comm_request::kAllreduce;
  r->buf = buf;
  r->count = count;
  r->dtype = dtype;
  return issue(c, r, req, "");
}

nnrt_status mpi_broadcast(nnrt_comm *c, void *buf, size_t bytes, int32_t root, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  if (root < 0 || root >= c->size) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi broadcast: root must be in [0, " + std::to_string(c->size) +
                                                     "), got " + std::to_string(root));
  }
  if ((!buf && bytes) || bytes > static_cast<size_t>(INT32_MAX)) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi broadcast: NULL buffer or more than 2^31-1 bytes");
  }
  auto *r = new nnrt_comm_request();
  r->kind = nnrt_comm_request::kBroadcast;
  r->buf = buf;
  r->count = bytes;
  r->root = root;
  return issue(c, r, req, "");
}

nnrt_status mpi_allgather(nnrt_comm *c, const void *send, size_t bytes, void *recv, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  if (((!send || !recv) && bytes) || bytes > static_cast<size_t>(INT32_MAX)) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi all-gather: NULL buffer or more than 2^31-1 bytes");
  }
  auto *r = new nnrt_comm_request();
  r->kind = nnrt_comm_request::kAllgather;
  r->send = send;
  r->buf = recv;
  r->count = bytes;
  return issue(c, r, req, "");
}

nnrt_status mpi_barrier(nnrt_comm *c, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  auto *r = new nnrt_comm_request();
  r->kind = nnrt_comm_request::kBarrier;
  return issue(c, r, req, "");
}

nnrt_status mpi_wait(nnrt_comm *c, nnrt_comm_request *req, double timeout_s) {
  if (!c || !req) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi wait: NULL communicator or request");
  if (!(timeout_s >= 0)) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "mpi wait: timeout must be >= 0");
  return wait_for(c, req, timeout_s, kind_name(req->kind));
}

void mpi_abort(nnrt_comm *c, const char *reason) {
  if (!c) return;
  {
    std::lock_guard<std::mutex> lock(c->error_mutex);
    c->broken_reason = reason ? reason : "aborted";
  }
  c->broken = true;
  // MPI_Abort may be called from any thread; it ends every process of the job.
  MPI_Abort(MPI_COMM_WORLD, 1);
}

const char *mpi_last_error(nnrt_comm *c) {
  if (!c) return "";
  std::lock_guard<std::mutex> lock(c->error_mutex);
  return c->last_error.c_str();
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "MPI";
  std::string v(text, static_cast<size_t>(len));
  size_t end = v.find_first_of(",\n");
  return end == std::string::npos ? v : v.substr(0, end);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const nnrt_comm_v1 *nnrt_comm_entry(uint32_t host_abi,
                                                                                      const nnrt_comm_host_api *h) {
  using nnrt::plugin_kit::barrier;
  if (!nnrt::plugin_kit::accept_host<Mpi>(host_abi, h, {})) return nullptr;
  static const std::string version = library_version();
  static const nnrt_comm_v1 table = {
      sizeof(nnrt_comm_v1), NNRT_COMM_ABI_MAJOR, "mpi", version.c_str(), NNRT_COMM_HOST_MEMORY,
      barrier<Mpi, mpi_create>,
      barrier<Mpi, mpi_destroy>,
      barrier<Mpi, mpi_info>,
      barrier<Mpi, mpi_allreduce>,
      barrier<Mpi, mpi_broadcast>,
      barrier<Mpi, mpi_allgather>,
      barrier<Mpi, mpi_barrier>,
      barrier<Mpi, mpi_wait>,
      barrier<Mpi, mpi_abort>,
      barrier<Mpi, mpi_last_error>,
  };
  return &table;
}
