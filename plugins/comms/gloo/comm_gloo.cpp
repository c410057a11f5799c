// libnnrt-comm-gloo.so: the communicator plugin over Gloo (Debian's libgloo-dev), for processes that
// no MPI launcher started (Spark executors). Rank, size and the rendezvous come from the environment:
// NNRT_GLOO_RANK, NNRT_GLOO_SIZE, NNRT_GLOO_STORE (a directory: Gloo's FileStore, which the caller
// may mirror between hosts), NNRT_GLOO_HOSTNAME or NNRT_GLOO_IFACE (the address to listen on), and
// optionally NNRT_GLOO_PREFIX (the store keys' prefix, the same on every rank).
//
// Gloo's collectives block, so each communicator owns one worker thread that runs its requests in
// the order they were started; wait() waits on a condition variable with a deadline. Gloo's own
// timeout is set to the communicator's, so a call on a dead or hung peer ends in gloo::IoException
// instead of hanging the worker forever; either way the communicator is broken from then on.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nnrt/kernels/half.h"
#include "nnrt/nnrt_comm.h"
#include "nnrt/plugin_kit.hpp"

struct nnrt_comm_request {
  enum Kind { kAllreduce, kBroadcast, kAllgather, kBarrier };
  nnrt_comm_request(Kind k, void *b, const void *s, size_t n, int32_t d, int32_t r)
      : kind(k), buf(b), send(s), count(n), dtype(d), root(r) {}
  Kind kind;
  void *buf;         // in place (all-reduce, broadcast) or what all-gather receives
  const void *send;  // all-gather
  size_t count;      // elements (all-reduce) or bytes
  int32_t dtype, root;
  // Completion, under Group::mutex.
  bool done = false, abandoned = false;
  std::string error;  // "" on success
};

namespace {

// The Gloo communicator as the plugin kit (nnrt/plugin_kit.hpp) sees it.
struct Gloo {
  static constexpr const char *name = "gloo communicator";
  using Host = nnrt_comm_host_api;
};

// What the worker thread shares with the handle. Both hold it, so that a worker still inside a
// Gloo call when destroy() returns (a peer died) frees it when that call gives up.
struct Group {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::mutex mutex;
  std::condition_variable work_cv, done_cv;
  std::deque<nnrt_comm_request *> queue;
  bool running = false;   // the worker is inside a Gloo call
  bool stopping = false;  // destroy() was called
  std::string broken;     // why the communicator is unusable; "" while it is usable
};

}  // namespace

struct nnrt_comm {
  std::shared_ptr<Group> group;
  std::thread worker;
  double timeout_s = 60;
  std::string last_error;  // the host calls one thread at a time
};

namespace {

nnrt_status failure(nnrt_comm *c, nnrt_status s, const std::string &message) {
  if (c) c->last_error = message;
  if (const auto *host = nnrt::plugin_kit::host<Gloo>()) host->set_error(message.c_str());
  return s;
}

const char *kind_name(nnrt_comm_request::Kind k) {
  switch (k) {
    case nnrt_comm_request::kAllreduce: return "all-reduce";
    case nnrt_comm_request::kBroadcast: return "broadcast";
    case nnrt_comm_request::kAllgather: return "all-gather";
    case nnrt_comm_request::kBarrier: return "barrier";
  }
  return "?";
}

// Who to blame when a collective gets no answer: Gloo names a peer by its address at best, so with
// more than two ranks this says which ones it may be.
std::string others(const Group &g) {
  if (g.size == 2) return "rank " + std::to_string(1 - g.rank);
  std::string list;
  for (int r = 0; r < g.size; ++r) {
    if (r != g.rank) list += (list.empty() ? "" : ", ") + std::to_string(r);
  }
  return "one of ranks " + list;
}

// Runs r on the worker thread; throws what Gloo throws.
void run(Group &g, nnrt_comm_request &r) {
  switch (r.kind) {
    case nnrt_comm_request::kAllreduce: {
      // f16 and bf16 are summed in an f32 copy and rounded back to nearest even.
      float *data = static_cast<float *>(r.buf);
      std::vector<float> wide;
      uint16_t *half = static_cast<uint16_t *>(r.buf);
      bool bf16 = r.dtype == NNRT_DTYPE_BF16;
      if (r.dtype != NNRT_DTYPE_F32) {
        wide.resize(r.count);
        for (size_t i = 0; i < r.count; ++i)
          wide[i] = bf16 ? nnrt::kernels::bf16_to_f32(half[i]) : nnrt::kernels::f16_to_f32(half[i]);
        data = wide.data();
      }
      gloo::AllreduceOptions opts(g.context);
      opts.setOutput(data, r.count);  // no input: in place
      opts.setReduceFunction(static_cast<void (*)(void *, const void *, const void *, size_t)>(&gloo::sum<float>));
      gloo::allreduce(opts);
      for (size_t i = 0; i < wide.size(); ++i)
        half[i] = bf16 ? nnrt::kernels::f32_to_bf16(wide[i]) : nnrt::kernels::f32_to_f16(wide[i]);
      return;
    }
    case nnrt_comm_request::kBroadcast: {
      if (r.count == 0) return;  // nothing to move, on any rank
      gloo::BroadcastOptions opts(g.context);
      opts.setOutput(static_cast<uint8_t *>(r.buf), r.count);  // the root's too: in place
      opts.setRoot(r.root);
      gloo::broadcast(opts);
      return;
    }
    case nnrt_comm_request::kAllgather: {
      if (r.count == 0) return;
      gloo::AllgatherOptions opts(g.context);
      opts.setInput(const_cast<uint8_t *>(static_cast<const uint8_t *>(r.send)), r.count);  // only read
      opts.setOutput(static_cast<uint8_t *>(r.buf), r.count * static_cast<size_t>(g.size));
      gloo::allgather(opts);
      return;
    }
    case nnrt_comm_request::kBarrier: {
      gloo::BarrierOptions opts(g.context);
      gloo::barrier(opts);
      return;
    }
  }
}

// The worker thread: runs the queue in order until destroy(). Once the communicator is broken it
// runs nothing more (the peers are gone or out of step): queued requests fail at once.
void work(std::shared_ptr<Group> g) {
  std::unique_lock<std::mutex> lock(g->mutex);
  while (true) {
    g->work_cv.wait(lock, [&] { return g->stopping || !g->queue.empty(); });
    if (g->queue.empty()) return;
    nnrt_comm_request *r = g->queue.front();
    g->queue.pop_front();
    std::string what = "rank " + std::to_string(g->rank) + ": " + kind_name(r->kind);
    if (g->stopping) {
      r->error = what + " not run: the communicator was destroyed";
    } else if (!g->broken.empty()) {
      r->error = what + " not run: the communicator broke earlier: " + g->broken;
    } else {
      g->running = true;
      lock.unlock();
      std::string error;
      try {
        run(*g, *r);
      } catch (const gloo::IoException &e) {
        error = what + " failed (" + others(*g) + " died, hangs, or runs a different number of steps): Gloo: " +
                e.what();
      } catch (const std::exception &e) {
        error = what + " failed: Gloo: " + e.what();
      }
      lock.lock();
      g->running = false;
      r->error = error;
      if (!error.empty() && g->broken.empty()) g->broken = error;
    }
    r->done = true;
    if (r->abandoned) delete r;
    g->done_cv.notify_all();
  }
}

nnrt_status check_usable(nnrt_comm *c) {
  if (!c) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "gloo communicator: NULL communicator");
  std::lock_guard<std::mutex> lock(c->group->mutex);
  if (c->group->broken.empty()) return NNRT_OK;
  return failure(c, NNRT_ERR_BACKEND, "gloo communicator: unusable after an earlier failure: " + c->group->broken);
}

nnrt_status wait_for(nnrt_comm *c, nnrt_comm_request *r, double timeout_s) {
  Group &g = *c->group;
  std::unique_lock<std::mutex> lock(g.mutex);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  if (!g.done_cv.wait_until(lock, deadline, [&] { return r->done; })) {
    r->abandoned = true;  // the worker frees it when Gloo gives up (its timeout is the same)
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
    std::string why = "rank " + std::to_string(g.rank) + ": " + kind_name(r->kind) + " did not complete within " +
                      seconds + " s: " + others(g) + " did not answer (it died, hangs, or runs a different number of steps)";
    if (g.broken.empty()) g.broken = why;
    lock.unlock();
    return failure(c, NNRT_ERR_BACKEND, why);
  }
  std::string error = r->error;
  delete r;
  lock.unlock();
  return error.empty() ? NNRT_OK : failure(c, NNRT_ERR_BACKEND, error);
}

// Queues r and either hands it to the caller or waits for it with the create() timeout.
nnrt_status issue(nnrt_comm *c, nnrt_comm_request *r, nnrt_comm_request **req) {
  {
    std::lock_guard<std::mutex> lock(c->group->mutex);
    c->group->queue.push_back(r);
  }
  c->group->work_cv.notify_one();
  if (req) {
    *req = r;
    return NNRT_OK;
  }
  return wait_for(c, r, c->timeout_s);
}

// Gloo's FileStore waits its own 30 s for a key that get() reads, whatever the context's timeout:
// make the rendezvous wait timeout_s instead.
//
// Gloo's connectFullMesh also has every rank publish its host name ("rank_<r>") and read the lower
// ranks' ones before it publishes its addresses, only to count the ranks on its host, which join()
// does itself once connected. Where the store is relayed between hosts (nnrt.spark mirrors it
// through Spark's barrier RPC, about a second an exchange), that would be an exchange of its own
// before the one that matters; so those keys stay in this process: another rank's reads as this
// rank's own name (Gloo's own count of local ranks, which nothing here reads, is then the rank).
// Everything else is Gloo's (the addresses, the file format).
class FileStore : public gloo::rendezvous::FileStore {
 public:
  FileStore(const std::string &path, std::chrono::milliseconds timeout)
      : gloo::rendezvous::FileStore(path), timeout_(timeout) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    if (host_name_key(key)) {
      own_name_ = data;
      return;
    }
    gloo::rendezvous::FileStore::set(key, data);
  }
  std::vector<char> get(const std::string &key) override {
    return host_name_key(key) ? own_name_ : gloo::rendezvous::FileStore::get(key);
  }
  void wait(const std::vector<std::string> &keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &timeout) override {
    std::vector<std::string> shared;
    for (const std::string &k : keys) {
      if (!host_name_key(k)) shared.push_back(k);
    }
    if (!shared.empty()) gloo::rendezvous::FileStore::wait(shared, timeout);
  }

 private:
  // "rank_<digits>", after PrefixStore's "<prefix>/".
  static bool host_name_key(const std::string &key) {
    size_t start = key.rfind('/');
    start = start == std::string::npos ? 0 : start + 1;
    if (key.compare(start, 5, "rank_") != 0 || key.size() == start + 5) return false;
    return key.find_first_not_of("0123456789", start + 5) == std::string::npos;
  }

  std::chrono::milliseconds timeout_;
  std::vector<char> own_name_;
};

struct Config {
  int rank = 0, size = 1;
  std::string store, hostname, iface, prefix;
};

// Reads the environment; returns "" or what is missing or wrong.
std::string read_config(Config &cfg) {
  const std::string needs =
      ": the gloo communicator needs NNRT_GLOO_RANK, NNRT_GLOO_SIZE and NNRT_GLOO_STORE in the environment (see "
      "README.md, \"Data-parallel and distributed training\")";
  for (const char *name : {"NNRT_GLOO_RANK", "NNRT_GLOO_SIZE", "NNRT_GLOO_STORE"}) {
    const char *value = std::getenv(name);
    if (!value || !*value) return std::string(name) + " is not set" + needs;
  }
  auto integer = [](const char *name, int low, int high, int &out) -> std::string {
    const char *text = std::getenv(name);
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(text, &end, 10);
    if (errno || end == text || *end || v < low || v > high) {
      return std::string(name) + " must be an integer in [" + std::to_string(low) + ", " + std::to_string(high) +
             "], got \"" + text + "\"";
    }
    out = static_cast<int>(v);
    return "";
  };
  std::string bad = integer("NNRT_GLOO_SIZE", 1, 1 << 20, cfg.size);
  if (bad.empty()) bad = integer("NNRT_GLOO_RANK", 0, cfg.size - 1, cfg.rank);
  if (!bad.empty()) return bad;
  const char *store = std::getenv("NNRT_GLOO_STORE");
  struct stat st;
  bool exists = stat(store, &st) == 0;
  if (!exists || !S_ISDIR(st.st_mode)) {
    return std::string("NNRT_GLOO_STORE must be an existing directory (the rendezvous store the ranks share), got \"") +
           store + "\": " + (exists ? "not a directory" : std::strerror(errno));
  }
  cfg.store = store;
  const char *prefix = std::getenv("NNRT_GLOO_PREFIX");
  cfg.prefix = prefix ? prefix : "";
  const char *hostname = std::getenv("NNRT_GLOO_HOSTNAME"), *iface = std::getenv("NNRT_GLOO_IFACE");
  if (hostname && *hostname && iface && *iface) {
    return std::string("set only one of NNRT_GLOO_HOSTNAME (an address to listen on) and NNRT_GLOO_IFACE (a network "
                       "interface), got \"") + hostname + "\" and \"" + iface + "\"";
  }
  cfg.hostname = hostname ? hostname : "";
  cfg.iface = iface ? iface : "";
  if (!cfg.iface.empty()) return "";
  // Gloo reads garbage when getaddrinfo fails (it checks for -1, not an EAI_ code) and spins or
  // crashes: a name that does not resolve is refused here.
  std::string name = cfg.hostname;
  if (name.empty()) {
    char own[256] = {};
    gethostname(own, sizeof own - 1);
    name = own;
  }
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  int rv = getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rv == 0) {
    freeaddrinfo(found);
    return "";
  }
  return (cfg.hostname.empty() ? "this host's name \"" + name + "\" (set NNRT_GLOO_HOSTNAME or NNRT_GLOO_IFACE)"
                               : "NNRT_GLOO_HOSTNAME \"" + name + "\"") +
         " does not resolve to an address to listen on: " + gai_strerror(rv);
}

// Joins the group: rendezvous through the store, then local rank and size from every rank's
// host name. Throws what Gloo throws.
void join(Group &g, const Config &cfg, std::chrono::milliseconds timeout) {
  gloo::transport::tcp::attr attr;
  attr.hostname = cfg.hostname;  // "": Gloo resolves gethostname()
  attr.iface = cfg.iface;
  auto device = gloo::transport::tcp::CreateDevice(attr);
  g.context = std::make_shared<gloo::rendezvous::Context>(cfg.rank, cfg.size);
  g.context->setTimeout(timeout);
  // Every communicator of a process writes its own keys ("nnrt-comm-<n>/<key>"): the trainer may
  // make several in one job, and every rank makes them in the same order. A caller whose processes
  // made different numbers of them before (Spark reuses its Python workers) names the group itself.
  static std::atomic<int> generation{0};
  const int n = ++generation;
  FileStore files(cfg.store, timeout);
  gloo::rendezvous::PrefixStore store(cfg.prefix.empty() ? "nnrt-comm-" + std::to_string(n) : cfg.prefix, files);
  g.context->connectFullMesh(store, device);

  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::vector<char> names(sizeof name * static_cast<size_t>(cfg.size));
  gloo::AllgatherOptions opts(g.context);
  opts.setInput(name, sizeof name);
  opts.setOutput(names.data(), names.size());
  gloo::allgather(opts);
  g.rank = cfg.rank;
  g.size = cfg.size;
  g.local_rank = g.local_size = 0;
  for (int r = 0; r < cfg.size; ++r) {
    if (std::strncmp(&names[sizeof name * static_cast<size_t>(r)], name, sizeof name) != 0) continue;
    if (r < cfg.rank) ++g.local_rank;
    ++g.local_size;
  }
}

nnrt_status gloo_create(const char *, double timeout_s, nnrt_comm **out) {
  if (!out) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "gloo communicator: out is NULL");
  if (!(timeout_s > 0)) return failure(nullptr, NNRT_ERR_INVALID_ARGUMENT, "gloo communicator: timeout must be > 0");
  Config cfg;
  std::string bad = read_config(cfg);
  if (!bad.empty()) return failure(nullptr, NNRT_ERR_BACKEND, "gloo communicator: " + bad);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000 + 0.5));
  if (timeout.count() < 1) timeout = std::chrono::milliseconds(1);
  std::unique_ptr<nnrt_comm> c(new nnrt_comm());
  c->group = std::make_shared<Group>();
  c->timeout_s = timeout_s;
  try {
    join(*c->group, cfg, timeout);
  } catch (const std::exception &e) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
    return failure(nullptr, NNRT_ERR_BACKEND, "gloo communicator: rank " + std::to_string(cfg.rank) + " of " +
                                                  std::to_string(cfg.size) + " could not join the group (rendezvous in " +
                                                  "NNRT_GLOO_STORE=" + cfg.store + ", timeout " + seconds +
                                                  " s): Gloo: " + e.what());
  }
  c->worker = std::thread(work, c->group);
  *out = c.release();
  return NNRT_OK;
}

// Never waits for a peer: a worker inside a Gloo call (a request that timed out) is left to end
// at Gloo's own timeout, and frees the group then.
void gloo_destroy(nnrt_comm *c) {
  if (!c) return;
  bool stuck;
  {
    std::lock_guard<std::mutex> lock(c->group->mutex);
    c->group->stopping = true;
    stuck = c->group->running;
  }
  c->group->work_cv.notify_one();
  if (stuck) {
    c->worker.detach();
  } else {
    c->worker.join();
  }
  delete c;
}

nnrt_status gloo_info(nnrt_comm *c, nnrt_comm_info *info) {
  if (!c || !info) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo communicator: info: NULL argument");
  if (info->struct_size < offsetof(nnrt_comm_info, local_size) + sizeof info->local_size) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo communicator: info: struct_size too small");
  }
  const Group &g = *c->group;
  *info = nnrt_comm_info{info->struct_size, g.rank, g.size, g.local_rank, g.local_size};
  return NNRT_OK;
}

nnrt_status gloo_allreduce(nnrt_comm *c, void *buf, size_t count, int32_t dtype, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  if (dtype != NNRT_DTYPE_F32 && dtype != NNRT_DTYPE_F16 && dtype != NNRT_DTYPE_BF16) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT,
                   "gloo all-reduce: expected dtype f32, f16 or bf16, got " + std::to_string(dtype));
  }
  if (!buf && count) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo all-reduce: buf is NULL");
  return issue(c, new nnrt_comm_request(nnrt_comm_request::kAllreduce, buf, nullptr, count, dtype, 0), req);
}

nnrt_status gloo_broadcast(nnrt_comm *c, void *buf, size_t bytes, int32_t root, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  if (root < 0 || root >= c->group->size) {
    return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo broadcast: root must be in [0, " +
                                                     std::to_string(c->group->size) + "), got " + std::to_string(root));
  }
  if (!buf && bytes) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo broadcast: NULL buffer");
  return issue(c, new nnrt_comm_request(nnrt_comm_request::kBroadcast, buf, nullptr, bytes, 0, root), req);
}

nnrt_status gloo_allgather(nnrt_comm *c, const void *send, size_t bytes, void *recv, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  if ((!send || !recv) && bytes) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo all-gather: NULL buffer");
  return issue(c, new nnrt_comm_request(nnrt_comm_request::kAllgather, recv, send, bytes, 0, 0), req);
}

nnrt_status gloo_barrier(nnrt_comm *c, nnrt_comm_request **req) {
  if (nnrt_status s = check_usable(c)) return s;
  return issue(c, new nnrt_comm_request(nnrt_comm_request::kBarrier, nullptr, nullptr, 0, 0, 0), req);
}

nnrt_status gloo_wait(nnrt_comm *c, nnrt_comm_request *req, double timeout_s) {
  if (!c || !req) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo wait: NULL communicator or request");
  if (!(timeout_s >= 0)) return failure(c, NNRT_ERR_INVALID_ARGUMENT, "gloo wait: timeout must be >= 0");
  return wait_for(c, req, timeout_s);
}

// Gloo has no way to end the other ranks: they see this one leave when the process ends.
void gloo_abort(nnrt_comm *c, const char *reason) {
  if (!c) return;
  std::lock_guard<std::mutex> lock(c->group->mutex);
  if (c->group->broken.empty()) c->group->broken = std::string("aborted: ") + (reason ? reason : "no reason given");
}

const char *gloo_last_error(nnrt_comm *c) { return c ? c->last_error.c_str() : ""; }

}  // namespace

extern "C" __attribute__((visibility("default"))) const nnrt_comm_v1 *nnrt_comm_entry(uint32_t host_abi,
                                                                                      const nnrt_comm_host_api *h) {
  using nnrt::plugin_kit::barrier;
  if (!nnrt::plugin_kit::accept_host<Gloo>(host_abi, h, {})) return nullptr;
  static const std::string version = "Gloo " + std::to_string(GLOO_VERSION_MAJOR) + "." +
                                     std::to_string(GLOO_VERSION_MINOR) + "." + std::to_string(GLOO_VERSION_PATCH) +
                                     ", TCP transport";
  static const nnrt_comm_v1 table = {
      sizeof(nnrt_comm_v1), NNRT_COMM_ABI_MAJOR, "gloo", version.c_str(), NNRT_COMM_HOST_MEMORY,
      barrier<Gloo, gloo_create>,
      barrier<Gloo, gloo_destroy>,
      barrier<Gloo, gloo_info>,
      barrier<Gloo, gloo_allreduce>,
      barrier<Gloo, gloo_broadcast>,
      barrier<Gloo, gloo_allgather>,
      barrier<Gloo, gloo_barrier>,
      barrier<Gloo, gloo_wait>,
      barrier<Gloo, gloo_abort>,
      barrier<Gloo, gloo_last_error>,
  };
  return &table;
}
