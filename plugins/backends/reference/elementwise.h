// Inner loops of the elementwise ops over one run of a StridedLoop: y[i] = f(a[i]) or
// y[i] = f(a[i], b[i]), with loads and stores converting through the compute type. The common
// layouts (contiguous, or one input broadcast) get loops of their own so that the compiler
// vectorizes them; everything else takes the general strided loop.
#pragma once

#include <stdint.h>

#include "dtype.h"
#include "exec.h"
#include "strided.h"

namespace nnrt::reference {

template <class Y, class A, class F>
void map_run(Y *y, int64_t sy, const A *a, int64_t sa, int64_t n, F f) {
  if (sy == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) store(y + i, f(load(a + i)));
  } else if (sy == 1 && sa == 0) {
    const auto value = f(load(a));
    for (int64_t i = 0; i < n; ++i) store(y + i, value);
  } else {
    for (int64_t i = 0; i < n; ++i) store(y + i * sy, f(load(a + i * sa)));
  }
}

template <class Y, class A, class B, class F>
void map_run(Y *y, int64_t sy, const A *a, int64_t sa, const B *b, int64_t sb, int64_t n, F f) {
  if (sy == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) store(y + i, f(load(a + i), load(b + i)));
  } else if (sy == 1 && sa == 1 && sb == 0) {
    const auto bv = load(b);
    for (int64_t i = 0; i < n; ++i) store(y + i, f(load(a + i), bv));
  } else if (sy == 1 && sa == 0 && sb == 1) {
    const auto av = load(a);
    for (int64_t i = 0; i < n; ++i) store(y + i, f(av, load(b + i)));
  } else {
    for (int64_t i = 0; i < n; ++i) store(y + i * sy, f(load(a + i * sa), load(b + i * sb)));
  }
}

// y = f(a) over a StridedLoop<2> whose operands are (y, a), in parallel.
template <class Y, class A, class F>
void map_elements(const Exec &exec, const StridedLoop<2> &loop, int64_t grain, Y *y, const A *a, F f) {
  parallel_for(exec, loop.count, grain, [&](int64_t begin, int64_t end) {
    for_each_run(loop, begin, end, [&](const int64_t *o, int64_t n) {
      map_run(y + o[0], loop.inner_stride(0), a + o[1], loop.inner_stride(1), n, f);
    });
  });
}

// y = f(a, b) over a StridedLoop<3> whose operands are (y, a, b), in parallel.
template <class Y, class A, class B, class F>
void map_elements(const Exec &exec, const StridedLoop<3> &loop, int64_t grain, Y *y, const A *a,
                  const B *b, F f) {
  parallel_for(exec, loop.count, grain, [&](int64_t begin, int64_t end) {
    for_each_run(loop, begin, end, [&](const int64_t *o, int64_t n) {
      map_run(y + o[0], loop.inner_stride(0), a + o[1], loop.inner_stride(1), b + o[2],
              loop.inner_stride(2), n, f);
    });
  });
}

}  // namespace nnrt::reference
