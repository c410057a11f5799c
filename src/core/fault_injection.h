// Fault injection for tests (built with -Dfault_injection=true, which defines NNRT_FAULT_INJECTION):
// the k-th allocation from the moment a test arms it fails, as sqlite's test_malloc and curl's
// "runtests -t" fail each allocation in turn. The memory caches (host and device) ask here before
// every allocation; a test program may route operator new here as well. In a normal build nothing
// calls these functions.
#pragma once

#include <atomic>
#include <cstdint>

namespace nnrt::fault {

namespace detail {
inline std::atomic<int64_t> countdown{0};  // allocations left before the one that fails; 0: off
inline std::atomic<bool> fired{false};
}  // namespace detail

// Arms the fault: the k-th allocation from now (k >= 1) fails, once; k = 0 disarms.
inline void fail_allocation(int64_t k) {
  detail::fired = false;
  detail::countdown = k;
}

// Whether the armed fault has fired since fail_allocation.
inline bool fault_fired() { return detail::fired; }

// Called before an allocation: true when this one is to fail.
inline bool allocation_fails() {
  int64_t left = detail::countdown.load(std::memory_order_relaxed);
  while (left > 0) {
    if (detail::countdown.compare_exchange_weak(left, left - 1)) {
      if (left != 1) return false;
      detail::fired = true;
      return true;
    }
  }
  return false;
}

}  // namespace nnrt::fault
