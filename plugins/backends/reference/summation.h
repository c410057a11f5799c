// The one order in which this backend adds up a float sum, so that a sum is accurate (error grows
// with log n, not n) and bit-identical whatever the thread count or the memory layout.
//
// The terms, in their logical order, are cut into blocks of 256. Within a block, term r goes to
// lane r % 8 and each lane adds sequentially (this is what lets the inner loop vectorize); the block
// value is ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Block values are combined pairwise: the sum of
// blocks [lo, hi) is sum[lo, mid) + sum[mid, hi) with mid - lo the largest power of two below
// hi - lo. A running binary counter computes exactly that tree, and so does splitting the blocks
// into aligned power-of-two groups summed in parallel (parallel_cascade_sum below).
#pragma once

#include <stdint.h>

#include <vector>

#include "dtype.h"
#include "exec.h"
#include "strided.h"

namespace nnrt::reference {

constexpr int kSumLanes = 8;
constexpr int64_t kSumBlock = 256;
constexpr int64_t kSumGroupBlocks = 16;  // parallel sums split into groups of 16 blocks (4096 terms)

// Acc may also be a vector of floats or doubles (a GCC vector, or op_reduce.cpp's SideBySide pack of
// them): each lane then holds the cascade of its own terms, in the same order and with the same bits
// as a scalar CascadeSum of that lane's terms.
template <class Acc>
class CascadeSum {
 public:
  void add(Acc term) {
    lanes_[position_ % kSumLanes] += term;
    if (++position_ == kSumBlock) flush_block();
  }

  // Adds term(i) for i in [0, n), in order.
  template <class Term>
  void add_indexed(int64_t n, Term term) {
    int64_t i = 0;
    while (i < n) {
      if (position_ % kSumLanes == 0 && n - i >= kSumLanes) {
        int64_t groups = (kSumBlock - position_) / kSumLanes;
        if ((n - i) / kSumLanes < groups) groups = (n - i) / kSumLanes;
        Acc lanes[kSumLanes];
        for (int j = 0; j < kSumLanes; ++j) lanes[j] = lanes_[j];
        for (int64_t g = 0; g < groups; ++g)
          for (int j = 0; j < kSumLanes; ++j) lanes[j] += term(i + g * kSumLanes + j);
        for (int j = 0; j < kSumLanes; ++j) lanes_[j] = lanes[j];
        i += groups * kSumLanes;
        position_ += groups * kSumLanes;
        if (position_ == kSumBlock) flush_block();
      } else {
        add(term(i));
        ++i;
      }
    }
  }

  // Adds f(load(p + i * stride)) for i in [0, n).
  template <class T, class F>
  void add_run(const T *p, int64_t stride, int64_t n, F f) {
    if (stride == 1) {
      add_indexed(n, [&](int64_t i) { return f(load(p + i)); });
    } else {
      add_indexed(n, [&](int64_t i) { return f(load(p + i * stride)); });
    }
  }

  // Adds a value that is already the sum of a whole aligned group of `blocks` blocks (a power of
  // two), as parallel_cascade_sum computes them. Only valid on a block boundary.
  void add_group(Acc value, int64_t blocks) { push(value, blocks); }

  Acc result() const {
    Acc total = position_ > 0 ? block_value() : Acc{};
    bool have = position_ > 0;
    for (int i = depth_ - 1; i >= 0; --i) {
      total = have ? stack_[i] + total : stack_[i];
      have = true;
    }
    return total;
  }

 private:
  Acc block_value() const {
    return ((lanes_[0] + lanes_[1]) + (lanes_[2] + lanes_[3])) +
           ((lanes_[4] + lanes_[5]) + (lanes_[6] + lanes_[7]));
  }

  void flush_block() {
    push(block_value(), 1);
    for (int j = 0; j < kSumLanes; ++j) lanes_[j] = Acc{};
    position_ = 0;
  }

  void push(Acc value, int64_t blocks) {
    stack_[depth_] = value;
    count_[depth_] = blocks;
    ++depth_;
    while (depth_ >= 2 && count_[depth_ - 2] == count_[depth_ - 1]) {
      stack_[depth_ - 2] = stack_[depth_ - 2] + stack_[depth_ - 1];
      count_[depth_ - 2] *= 2;
      --depth_;
    }
  }

  Acc lanes_[kSumLanes] = {};
  int64_t position_ = 0;  // terms in the current block
  Acc stack_[64];
  int64_t count_[64];
  int depth_ = 0;
};

// The cascade sum of the terms of a strided loop, in its row-major order, computed on the pool
// when it is long; the same bits as a serial CascadeSum. add_run(sum, offsets, n) adds the terms
// of one run of the loop to sum.
template <class Acc, int K, class AddRun>
Acc parallel_cascade_sum(const Exec &exec, const StridedLoop<K> &loop, AddRun add_run) {
  const int64_t group = kSumBlock * kSumGroupBlocks;
  const int64_t n = loop.count;
  auto sum_range = [&](int64_t begin, int64_t end) {
    CascadeSum<Acc> sum;
    for_each_run(loop, begin, end, [&](const int64_t *offsets, int64_t count) { add_run(sum, offsets, count); });
    return sum.result();
  };
  if (n <= 2 * group || exec.threads <= 1) return sum_range(0, n);
  const int64_t groups = (n + group - 1) / group;
  std::vector<Acc> partial(static_cast<size_t>(groups));
  parallel_for(exec, groups, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) partial[static_cast<size_t>(g)] = sum_range(g * group, (g + 1) * group < n ? (g + 1) * group : n);
  });
  CascadeSum<Acc> total;
  for (int64_t g = 0; g < groups; ++g)  // the last group may be partial: it never merges
    total.add_group(partial[static_cast<size_t>(g)], g + 1 < groups ? kSumGroupBlocks : -1);
  return total.result();
}

// The same for f(load(x + offset)) over a one-tensor loop.
template <class Acc, class T, class F>
Acc parallel_cascade_sum(const Exec &exec, const StridedLoop<1> &loop, const T *x, F f) {
  return parallel_cascade_sum<Acc>(exec, loop, [&](CascadeSum<Acc> &sum, const int64_t *offsets, int64_t count) {
    sum.add_run(x + offsets[0], loop.inner_stride(0), count, f);
  });
}

}  // namespace nnrt::reference
