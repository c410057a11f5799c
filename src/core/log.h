// Logging through the application's callback (default: stderr, warnings and up; NNRT_LOG_LEVEL).
#pragma once

#include <string>

#include "nnrt/nnrt.h"

namespace nnrt::log {

void set_callback(nnrt_log_fn fn, void *user, int min_level);

// True when a message of this level would be delivered: check it before building costly messages.
bool enabled(int level);

void message(int level, const std::string &text);

inline void debug(const std::string &text) { message(NNRT_LOG_DEBUG, text); }
inline void info(const std::string &text) { message(NNRT_LOG_INFO, text); }
inline void warn(const std::string &text) { message(NNRT_LOG_WARN, text); }

}  // namespace nnrt::log
