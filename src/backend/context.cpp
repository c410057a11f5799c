#include "backend/context.h"

#include <algorithm>
#include <cstdlib>

#include "core/dtype.h"
#include "core/error.h"
#include "core/json_options.h"
#include "core/log.h"
#include "core/version.h"
#include "backend/comm/comm_registry.h"

namespace nnrt {

namespace {

// Device-kind priorities, as in ND4J: the kind with the highest priority that has a usable backend
// wins; within a kind, the backend with the highest score.
int kind_priority(int32_t kind) {
  const char *var = kind == NNRT_DEVICE_GPU ? "NNRT_BACKEND_PRIORITY_GPU" : "NNRT_BACKEND_PRIORITY_CPU";
  int fallback = kind == NNRT_DEVICE_GPU ? 100 : 0;
  const char *v = std::getenv(var);
  if (!v || !*v) return fallback;
  char *end = nullptr;
  long p = std::strtol(v, &end, 10);
  if (*end != 0) {
    log::warn(cat(var, "=", v, " is not an integer; using ", fallback));
    return fallback;
  }
  return static_cast<int>(p);
}

const char *kind_name(int32_t kind) { return kind == NNRT_DEVICE_GPU ? "gpu" : "cpu"; }

const backend::BackendInfo &choose_backend(const std::vector<backend::BackendInfo> &all, const std::string &wanted,
                                           const std::vector<backend::PluginInfo> &plugins) {
  if (wanted != "auto") {
    for (const auto &b : all) {
      if (b.name != wanted) continue;
      if (b.score <= 0) fail(NNRT_ERR_NO_DEVICE, "backend '", wanted, "' cannot run here: ", b.reason);
      return b;
    }
    for (const auto &p : plugins) {
      if (p.name == wanted && !p.loaded) {
        fail(NNRT_ERR_BACKEND, "backend '", wanted, "' did not load (", p.path, "): ", p.error);
      }
    }
    std::string names;
    for (const auto &b : all) names += (names.empty() ? "" : ", ") + b.name;
    fail(NNRT_ERR_INVALID_ARGUMENT, "options.backend: unknown backend '", wanted, "' (available: auto, ", names, ")");
  }
  const backend::BackendInfo *best = nullptr;
  int best_priority = 0;
  for (const auto &b : all) {
    if (b.score <= 0) continue;
    int priority = kind_priority(b.table->kind);
    if (!best || priority > best_priority || (priority == best_priority && b.score > best->score)) {
      best = &b;
      best_priority = priority;
    }
  }
  return *best;  // the reference backend is always usable
}

}  // namespace

ContextOptions ContextOptions::parse(const char *text) {
  Json j = parse_json_object(text, "options");
  JsonReader r(j, "options");
  ContextOptions o;
  o.backend = r.get_string("backend", o.backend);
  if (o.backend.empty()) fail(NNRT_ERR_INVALID_ARGUMENT, "options.backend: expected a backend name, got \"\"");
  o.device = static_cast<int32_t>(r.get_int("device", 0, 0, INT32_MAX));
  o.strict = r.get_bool("strict", false);
  o.threads = static_cast<int32_t>(r.get_int("threads", 0, 1, 4096));
  o.deterministic = r.get_bool("deterministic", false);
  o.seed = static_cast<uint64_t>(r.get_int("seed", 0, 0));
  o.map_checkpoints = r.get_bool("map_checkpoints", true);
  std::string dt = r.get_string("default_dtype", "f32");
  if (dt == "f32") o.default_dtype = NNRT_DTYPE_F32;
  else if (dt == "f16") o.default_dtype = NNRT_DTYPE_F16;
  else if (dt == "bf16") o.default_dtype = NNRT_DTYPE_BF16;
  else fail(NNRT_ERR_INVALID_ARGUMENT, "options.default_dtype: expected \"f32\", \"f16\" or \"bf16\", got \"", dt, "\"");
  if (r.has("cache")) {
    JsonReader c = r.get_object("cache");
    o.cache.defaults = !c.has("max_cached_bytes") && !c.has("max_block_bytes");
    o.cache.max_cached_bytes = static_cast<size_t>(c.get_int("max_cached_bytes", static_cast<int64_t>(o.cache.max_cached_bytes), 0));
    o.cache.max_block_bytes = static_cast<size_t>(c.get_int("max_block_bytes", static_cast<int64_t>(o.cache.max_block_bytes), 0));
    o.cache.max_total_bytes = static_cast<size_t>(c.get_int("max_total_bytes", 0, 0));
    c.finish();
  }
  r.finish();
  return o;
}

std::shared_ptr<Context> Context::create(const ContextOptions &options) {
  auto &registry = backend::Registry::instance();
  registry.discover();
  std::vector<backend::BackendInfo> backends = registry.backends();
  const backend::BackendInfo &chosen = choose_backend(backends, options.backend, registry.plugins());
  if (options.device >= chosen.device_count) {
    fail(NNRT_ERR_NO_DEVICE, "backend '", chosen.name, "' has ", chosen.device_count, " device(s); device ",
         options.device, " does not exist");
  }

  std::shared_ptr<Context> ctx(new Context);
  ctx->options_ = options;
  if (ctx->options_.threads <= 0) ctx->options_.threads = default_thread_count();
  ctx->seed_counter_ = options.seed;
  ctx->pool_ = std::make_shared<ThreadPool>(ctx->options_.threads);
  ctx->host_cache_ = std::make_shared<MemoryCache>(host_memory_source(), options.cache);
  ctx->device_ = backend::Device::open(chosen, options.device, ctx->pool_, options.deterministic, ctx->host_cache_,
                                       options.cache);
  // A CPU backend with a thread team of its own runs the context's parallel work on it (see
  // nnrt_backend_v1::parallel_run).
  const nnrt_backend_v1 &table = ctx->device_->table();
  if (table.kind == NNRT_DEVICE_CPU && NNRT_HAS_MEMBER(&table, nnrt_backend_v1, parallel_run) && table.parallel_run) {
    ctx->pool_->run_chunks_on(table.parallel_run);
    log::debug(cat("context: parallel work runs on backend ", chosen.name, "'s threads"));
  }
  if (chosen.name == "reference") {
    ctx->reference_ = ctx->device_;
  } else {
    ctx->reference_ = backend::Device::open(backends.front(), 0, ctx->pool_, options.deterministic,
                                            ctx->host_cache_, options.cache);
  }
  log::debug(cat("context: backend ", chosen.name, ", device ", options.device, ", ", ctx->options_.threads,
                 " thread(s)"));
  return ctx;
}

uint64_t Context::next_seed() {
  // splitmix64 of a counter: distinct, well-mixed seeds that depend only on the context seed.
  uint64_t z = (seed_counter_.fetch_add(1) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string Context::describe() const {
  auto &registry = backend::Registry::instance();
  Json j;
  j["version"] = kVersionString;
  j["abi"] = NNRT_ABI_VERSION;
  j["backend"] = device_->name();
  j["device"] = device_->index();
  j["threads"] = pool_->threads();
  j["deterministic"] = options_.deterministic;
  j["strict"] = options_.strict;
  j["map_checkpoints"] = options_.map_checkpoints;
  j["default_dtype"] = dtype_name(options_.default_dtype);

  Json backends = Json::array();
  for (const auto &b : registry.backends()) {
    if (b.score <= 0) continue;
    backends.push_back({{"name", b.name},
                        {"kind", kind_name(b.table->kind)},
                        {"score", b.score},
                        {"selected", b.name == device_->name()},
                        {"version", b.table->version ? b.table->version : ""},
                        {"devices", b.device_count},
                        {"priority", kind_priority(b.table->kind)}});
  }
  j["backends"] = backends;

  Json plugins = Json::array();
  for (const auto &p : registry.plugins()) {
    Json e = {{"name", p.name}, {"path", p.path}, {"loaded", p.loaded}, {"error", p.error}};
    for (const auto &b : registry.backends()) {
      // A plugin that loads but finds no device (a GPU backend on a machine without a GPU).
      if (b.path == p.path && b.score <= 0) {
        e["usable"] = false;
        e["error"] = b.reason;
      } else if (b.path == p.path) {
        e["usable"] = true;
      }
    }
    if (!p.loaded) e["usable"] = false;
    plugins.push_back(e);
  }
  j["plugins"] = plugins;

  // Communicator plugins for distributed training, loaded here so that a broken one shows why.
  auto &comm_registry = backend::CommRegistry::instance();
  comm_registry.discover();
  Json comms = Json::array();
  for (const auto &c : comm_registry.plugins()) {
    comms.push_back({{"name", c.name},
                     {"path", c.path},
                     {"loaded", c.loaded},
                     {"error", c.error},
                     {"version", c.table && c.table->version ? c.table->version : ""}});
  }
  j["comms"] = comms;

  Json devices = Json::array();
  for (const auto &b : registry.backends()) {
    if (b.name != device_->name()) continue;
    for (int32_t i = 0; i < b.device_count; ++i) {
      nnrt_device_props props{};
      props.struct_size = sizeof props;
      if (b.table->device_props(i, &props) != NNRT_OK) {
        backend::take_backend_error();
        continue;
      }
      props.name[sizeof props.name - 1] = 0;
      Json d = {{"index", i},
                {"name", props.name},
                {"kind", kind_name(props.kind)},
                {"memory_bytes", props.memory_bytes},
                {"cores", props.cores}};
      Json dtypes = Json::array();
      for (int t = NNRT_DTYPE_F32; t <= NNRT_DTYPE_BOOL; ++t) {
        if (props.native_dtypes & (1u << t)) dtypes.push_back(dtype_name(static_cast<nnrt_dtype>(t)));
      }
      d["native_dtypes"] = dtypes;
      devices.push_back(d);
    }
  }
  j["devices"] = devices;

  CacheStats s = device_->memory().stats();
  CacheLimits l = device_->memory().limits();
  j["cache"] = {{"allocated_bytes", s.allocated_bytes}, {"cached_bytes", s.cached_bytes},
                {"peak_bytes", s.peak_bytes},           {"hits", s.hits},
                {"misses", s.misses},                   {"max_cached_bytes", l.max_cached_bytes},
                {"max_block_bytes", l.max_block_bytes},   {"max_total_bytes", l.max_total_bytes}};
  j["cached_ops"] = device_->cached_op_count();
  return j.dump();
}

}  // namespace nnrt
