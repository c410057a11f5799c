// The blocked matrix product every heavy op of this backend runs on (MATMUL, and CONV2D forward and
// backward through implicit im2col).
//
// C (m x n) = A (m x k) * B (k x n), per batch entry, in the compute type C (float for f32, f16
// and bf16; double for f64). The operands are never read directly: an A packer and a B packer copy
// (and convert, or gather, as for im2col) blocks into panels laid out for the micro-kernel, and a
// sink receives each finished tile of C (and adds bias, applies an activation, converts, scatters).
// Interfaces, with C the compute type:
//   a.pack(batch, i0, mc, p0, kc, C *dst)  rows [i0, i0+mc) x cols [p0, p0+kc) of A into panels of
//                                          MR rows: dst[(i / MR) * MR * kc + p * MR + i % MR]
//   b.pack(batch, p0, kc, j0, nc, C *dst)  rows [p0, p0+kc) x cols [j0, j0+nc) of B into panels of
//                                          NR cols: dst[(j / NR) * NR * kc + p * NR + j % NR]
//   sink.store(batch, i0, mc, j0, nc, C *tile, int64_t ld)   tile[i * ld + j], complete; the sink
//                                          may modify it (it is scratch)
// Panels are zero-padded to whole MR/NR, so the micro-kernel always runs full.
//
// Blocking is the usual one (Goto): a KC x NR sliver of B stays in L1 while the MC x KC block of A
// streams from L2. Each tile of C (at most MC x NC) is computed whole by one thread, summing over k
// in blocks of KC in order, so results do not depend on the thread count or the tiling.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "exec.h"

namespace nnrt::reference::gemm {

template <class C>
struct Blocking;
// MR x NR of 4 x 8 floats keeps 8 SSE accumulators plus operands within the 16 xmm registers of
// baseline x86-64, and is what GCC vectorizes best from plain loops (measured against 6x8, 8x8).
template <>
struct Blocking<float> {
  static constexpr int MR = 4, NR = 8;
  static constexpr int64_t MC = 128, KC = 256, NC = 512;
};
template <>
struct Blocking<double> {
  static constexpr int MR = 4, NR = 4;
  static constexpr int64_t MC = 64, KC = 256, NC = 256;
};

constexpr int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
constexpr int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// c[MR x NR] (row stride ldc) = (accumulate ? c : 0) + sum over p of a[p][i] * b[p][j].
template <class C>
inline void micro_kernel(int64_t kc, const C *__restrict a, const C *__restrict b, C *__restrict c,
                         int64_t ldc, bool accumulate) {
  constexpr int MR = Blocking<C>::MR, NR = Blocking<C>::NR;
  C acc[MR * NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const C *ap = a + p * MR;
    const C *bp = b + p * NR;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 16
      for (int j = 0; j < NR; ++j) acc[i * NR + j] += ap[i] * bp[j];
    }
  }
  if (accumulate) {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) c[i * ldc + j] += acc[i * NR + j];
  } else {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) c[i * ldc + j] = acc[i * NR + j];
  }
}

// Packs a strided matrix into panels of W lanes: lane l, depth p of the source is
// src[l * lane_stride + p * depth_stride]; lanes beyond `lanes` are zero.
template <int W, class T, class C>
void pack_panels(const T *src, int64_t lane_stride, int64_t depth_stride, int64_t lanes, int64_t depth,
                 C *dst) {
  for (int64_t l0 = 0; l0 < lanes; l0 += W) {
    const int64_t w = min64(W, lanes - l0);
    C *d = dst + l0 * depth;
    const T *s = src + l0 * lane_stride;
    if (lane_stride == 1 && w == W) {
      for (int64_t p = 0; p < depth; ++p)
        for (int l = 0; l < W; ++l) d[p * W + l] = load(s + p * depth_stride + l);
      continue;
    }
    if (depth_stride == 1) {
      for (int64_t l = 0; l < w; ++l)
        for (int64_t p = 0; p < depth; ++p) d[p * W + l] = load(s + l * lane_stride + p);
    } else {
      for (int64_t p = 0; p < depth; ++p)
        for (int64_t l = 0; l < w; ++l) d[p * W + l] = load(s + l * lane_stride + p * depth_stride);
    }
    for (int64_t l = w; l < W; ++l)
      for (int64_t p = 0; p < depth; ++p) d[p * W + l] = C(0);
  }
}

struct Shape {
  int64_t batches = 1, m = 0, n = 0, k = 0;
};

template <class C>
struct Scratch {
  C *a, *b, *c;
};

// Elements of scratch one thread needs for a product of this shape.
template <class C>
struct ScratchSize {
  int64_t a, b, c;
  explicit ScratchSize(const Shape &s) {
    using B = Blocking<C>;
    const int64_t mc = min64(B::MC, round_up(s.m, B::MR)), nc = min64(B::NC, round_up(s.n, B::NR));
    const int64_t kc = min64(B::KC, s.k > 0 ? s.k : 1);
    a = mc * kc;
    b = kc * nc;
    c = mc * nc;
  }
  size_t bytes() const { return static_cast<size_t>(a + b + c) * sizeof(C) + 3 * kAlign; }
  static constexpr size_t kAlign = 64;
};

template <class C>
Scratch<C> carve_scratch(void *memory, const ScratchSize<C> &size) {
  auto align = [](uintptr_t p) { return (p + ScratchSize<C>::kAlign - 1) & ~uintptr_t{ScratchSize<C>::kAlign - 1}; };
  uintptr_t p = align(reinterpret_cast<uintptr_t>(memory));
  Scratch<C> s;
  s.a = reinterpret_cast<C *>(p);
  p = align(p + static_cast<uintptr_t>(size.a) * sizeof(C));
  s.b = reinterpret_cast<C *>(p);
  p = align(p + static_cast<uintptr_t>(size.b) * sizeof(C));
  s.c = reinterpret_cast<C *>(p);
  return s;
}

// One tile of C: rows [i0, i0+mc) x cols [j0, j0+nc) of batch entry `batch`, over all of k.
template <class C, class APacker, class BPacker, class Sink>
void compute_tile(const APacker &a, const BPacker &b, const Sink &sink, int64_t batch, int64_t i0,
                  int64_t mc, int64_t j0, int64_t nc, int64_t k, const Scratch<C> &s) {
  using B = Blocking<C>;
  const int64_t mp = round_up(mc, B::MR), np = round_up(nc, B::NR);
  if (k == 0)
    for (int64_t i = 0; i < mp * np; ++i) s.c[i] = C(0);
  for (int64_t p0 = 0; p0 < k; p0 += B::KC) {
    const int64_t kc = min64(B::KC, k - p0);
    a.pack(batch, i0, mc, p0, kc, s.a);
    b.pack(batch, p0, kc, j0, nc, s.b);
    for (int64_t jr = 0; jr < np; jr += B::NR)
      for (int64_t ir = 0; ir < mp; ir += B::MR)
        micro_kernel<C>(kc, s.a + ir * kc, s.b + jr * kc, s.c + ir * np + jr, np, p0 > 0);
  }
  sink.store(batch, i0, mc, j0, nc, s.c, np);
}

// A whole product on one thread, tile after tile (for callers that parallelize around it).
template <class C, class APacker, class BPacker, class Sink>
void compute_serial(const Shape &shape, const APacker &a, const BPacker &b, const Sink &sink,
                    int64_t batch, const Scratch<C> &s) {
  using B = Blocking<C>;
  for (int64_t i0 = 0; i0 < shape.m; i0 += B::MC)
    for (int64_t j0 = 0; j0 < shape.n; j0 += B::NC)
      compute_tile<C>(a, b, sink, batch, i0, min64(B::MC, shape.m - i0), j0, min64(B::NC, shape.n - j0),
                      shape.k, s);
}

// Tile sizes for a parallel product. Which tile computes an element of C does not change how it is
// computed (k is always summed in the same KC blocks), so tiles may shrink when there are too few of
// them to keep every thread busy - a 64 x 500 dense layer is a single MC x NC tile - without
// changing any result.
struct Tiling {
  int64_t mc, nc, m_tiles, n_tiles;
  int64_t count(int64_t batches) const { return batches * m_tiles * n_tiles; }
};

template <class C>
Tiling choose_tiling(const Exec &exec, int64_t batches, int64_t m, int64_t n) {
  using B = Blocking<C>;
  Tiling t{B::MC, B::NC, 0, 0};
  auto update = [&] {
    t.m_tiles = (m + t.mc - 1) / t.mc;
    t.n_tiles = (n + t.nc - 1) / t.nc;
  };
  update();
  const int64_t wanted = exec.threads > 1 ? 4 * static_cast<int64_t>(exec.threads) : 1;
  while (t.count(batches) < wanted && t.nc > 4 * B::NR && t.n_tiles * 2 <= (n + B::NR - 1) / B::NR) {
    t.nc = round_up(t.nc / 2, B::NR);
    update();
  }
  while (t.count(batches) < wanted && t.mc > 4 * B::MR && t.m_tiles * 2 <= (m + B::MR - 1) / B::MR) {
    t.mc = round_up(t.mc / 2, B::MR);
    update();
  }
  return t;
}

// The parallel product: tiles dealt to min(threads, tiles) slots, each with its own scratch.
template <class C>
int parallel_slot_count(const Exec &exec, const Shape &s) {
  const int64_t tiles = choose_tiling<C>(exec, s.batches, s.m, s.n).count(s.batches);
  return static_cast<int>(tiles < exec.threads ? (tiles > 0 ? tiles : 1) : exec.threads);
}

template <class C>
size_t parallel_workspace_bytes(const Exec &exec, const Shape &s) {
  return static_cast<size_t>(parallel_slot_count<C>(exec, s)) * ScratchSize<C>(s).bytes();
}

template <class C, class APacker, class BPacker, class Sink>
void compute_parallel(const Exec &exec, const Shape &shape, const APacker &a, const BPacker &b,
                      const Sink &sink, void *workspace) {
  if (shape.batches == 0 || shape.m == 0 || shape.n == 0) return;
  const ScratchSize<C> size(shape);
  const int slots = parallel_slot_count<C>(exec, shape);
  const Tiling t = choose_tiling<C>(exec, shape.batches, shape.m, shape.n);
  parallel_slots(exec, t.count(shape.batches), slots, [&](int slot, int64_t task) {
    const Scratch<C> s = carve_scratch<C>(static_cast<char *>(workspace) + slot * size.bytes(), size);
    const int64_t jb = task % t.n_tiles, ib = (task / t.n_tiles) % t.m_tiles, batch = task / (t.n_tiles * t.m_tiles);
    const int64_t i0 = ib * t.mc, j0 = jb * t.nc;
    compute_tile<C>(a, b, sink, batch, i0, min64(t.mc, shape.m - i0), j0, min64(t.nc, shape.n - j0), shape.k, s);
  });
}

}  // namespace nnrt::reference::gemm
