#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace nnrt::log {

namespace {

int level_from_env() {
  const char *v = std::getenv("NNRT_LOG_LEVEL");
  if (!v) return NNRT_LOG_WARN;
  if (!std::strcmp(v, "debug")) return NNRT_LOG_DEBUG;
  if (!std::strcmp(v, "info")) return NNRT_LOG_INFO;
  if (!std::strcmp(v, "error")) return NNRT_LOG_ERROR;
  return NNRT_LOG_WARN;
}

struct Sink {
  std::mutex mutex;
  nnrt_log_fn fn = nullptr;
  void *user = nullptr;
  std::atomic<int> min_level{level_from_env()};
};

Sink &sink() {
  static Sink *s = new Sink;  // never destroyed: threads may still log during exit
  return *s;
}

const char *level_name(int level) {
  switch (level) {
    case NNRT_LOG_DEBUG: return "debug";
    case NNRT_LOG_INFO: return "info";
    case NNRT_LOG_WARN: return "warning";
    default: return "error";
  }
}

}  // namespace

void set_callback(nnrt_log_fn fn, void *user, int min_level) {
  Sink &s = sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.fn = fn;
  s.user = user;
  if (min_level < NNRT_LOG_DEBUG) min_level = NNRT_LOG_DEBUG;
  if (min_level > NNRT_LOG_ERROR) min_level = NNRT_LOG_ERROR;
  s.min_level = min_level;
}

bool enabled(int level) { return level >= sink().min_level.load(std::memory_order_relaxed); }

void message(int level, const std::string &text) {
  if (!enabled(level)) return;
  Sink &s = sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.fn) {
    s.fn(level, text.c_str(), s.user);
  } else {
    std::fprintf(stderr, "nnrt %s: %s\n", level_name(level), text.c_str());
  }
}

}  // namespace nnrt::log
