// The libFuzzer entry point every fuzz target defines, and how a target reports a finding: an
// error the reader was never supposed to raise aborts, so that the fuzzer keeps the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace nnrt::fuzz {

// Readers may refuse an input only with the statuses they document.
template <class... Allowed>
void expect_status(const Error &e, Allowed... allowed) {
  if (((e.status() == allowed) || ...)) return;
  std::fprintf(stderr, "unexpected %s: %s\n", status_name(e.status()), e.what());
  std::abort();
}

}  // namespace nnrt::fuzz
