// gemm.h packers for the convolutions: the weights as a matrix (either way round), the implicit
// im2col matrix of x (either way round), and dy as a matrix over im2col columns.
// A `batch` index of the product is the group g unless a kernel says otherwise.
//
// The im2col gathers are the cost that matters for small convolutions (LeNet's first layer has 25
// taps: packing moves as many values as the product multiplies), so columns are decoded once per
// panel by stepping a cursor, windows that lie wholly inside the image skip the bounds checks,
// and a panel of columns along one output row becomes a (usually contiguous) row copy.
#pragma once

#include <stdint.h>

#include "conv2d_common.h"
#include "dtype.h"
#include "gemm.h"

namespace nnrt::reference {

// Strides of a 4-D tensor.
struct Strides4 {
  int64_t n, c, h, w;
  explicit Strides4(const nnrt_tensor_desc &t) : n(t.strides[0]), c(t.strides[1]), h(t.strides[2]), w(t.strides[3]) {}
};

// Walks consecutive im2col columns (n, oh, ow) in order without dividing for each one.
struct ColumnCursor {
  const ConvGeometry *g;
  int64_t image, out_row, out_col;

  ColumnCursor(const ConvGeometry &geometry, int64_t j) : g(&geometry) {
    const ConvColumn c = conv_column(geometry, j);
    image = c.image;
    out_row = c.out_row;
    out_col = c.out_col;
  }
  void next() {
    if (++out_col < g->ow) return;
    out_col = 0;
    if (++out_row < g->oh) return;
    out_row = 0;
    ++image;
  }
  int64_t row0() const { return out_row * g->stride_h - g->pad_top; }
  int64_t col0() const { return out_col * g->stride_w - g->pad_left; }
  // The element offset of (n, oh, ow) in a tensor shaped like y.
  int64_t output_offset(const Strides4 &s) const { return image * s.n + out_row * s.h + out_col * s.w; }
};

// W_g as [Og x taps] (forward, transposed = false) or [taps x Og] (backward data, transposed = true);
// tap_offsets[k] is the offset of tap k within one output channel's filter.
template <class T, class C, int W, bool Transposed>
struct WeightPacker {
  const T *w;
  int64_t o_stride;
  const int64_t *tap_offsets;
  int64_t og;

  void pack(int64_t group, int64_t l0, int64_t lanes, int64_t p0, int64_t depth, C *dst) const {
    for (int64_t q0 = 0; q0 < lanes; q0 += W) {
      C *d = dst + q0 * depth;
      for (int64_t l = 0; l < W; ++l) {
        const int64_t lane = l0 + q0 + l;
        if (q0 + l >= lanes) {
          for (int64_t p = 0; p < depth; ++p) d[p * W + l] = C(0);
        } else if (!Transposed) {  // lane = output channel, depth = tap
          const T *filter = w + (group * og + lane) * o_stride;
          for (int64_t p = 0; p < depth; ++p) d[p * W + l] = load(filter + tap_offsets[p0 + p]);
        } else {  // lane = tap, depth = output channel
          const T *tap = w + group * og * o_stride + tap_offsets[lane];
          for (int64_t p = 0; p < depth; ++p) d[p * W + l] = load(tap + (p0 + p) * o_stride);
        }
      }
    }
  }
};

// The im2col matrix of x for group g: element (k, j) as in conv2d_common.h. tap_offsets[k] is the
// offset of tap k (channel, row, column) in x, relative to a window's top-left corner.
template <class T, class C>
struct Im2col {
  const T *x;
  Strides4 s;
  const ConvGeometry *g;
  const ConvTaps *taps;
  const int64_t *tap_offsets;

  // A column: the offset of its window's top-left corner (which may lie in the padding, so it is
  // only ever added to a tap offset that lands inside), and whether the whole window is inside.
  struct Column {
    int64_t origin, row0, col0;
    bool inside;
  };

  void describe(int64_t j, int64_t count, Column *out) const {
    const int64_t last_row = (g->kh - 1) * g->dilation_h, last_col = (g->kw - 1) * g->dilation_w;
    ColumnCursor cursor(*g, j);
    for (int64_t i = 0; i < count; ++i, cursor.next()) {
      const int64_t r = cursor.row0(), c = cursor.col0();
      out[i] = Column{cursor.image * s.n + r * s.h + c * s.w, r, c,
                      r >= 0 && r + last_row < g->h && c >= 0 && c + last_col < g->w};
    }
  }

  C checked_value(int64_t base, int64_t k, const Column &col) const {
    const int64_t ih = col.row0 + taps->dh[static_cast<size_t>(k)], iw = col.col0 + taps->dw[static_cast<size_t>(k)];
    if (!inside(ih, g->h) || !inside(iw, g->w)) return C(0);
    return load(x + (base + col.origin + tap_offsets[k]));
  }

  // B[k][j] of the forward product: k in [p0, p0+kc), j in [j0, j0+nc), in NR-column panels.
  void pack(int64_t group, int64_t p0, int64_t kc, int64_t j0, int64_t nc, C *dst) const {
    constexpr int NR = gemm::Blocking<C>::NR;
    const int64_t base = group * g->cg * s.c, step = g->stride_w * s.w;
    for (int64_t l0 = 0; l0 < nc; l0 += NR) {
      C *d = dst + l0 * kc;
      const int64_t w = nc - l0 < NR ? nc - l0 : NR;
      Column cols[NR];
      describe(j0 + l0, w, cols);
      bool all_inside = w == NR, one_row = true;
      for (int64_t l = 0; l < w; ++l) {
        all_inside = all_inside && cols[l].inside;
        one_row = one_row && cols[l].origin == cols[0].origin + l * step;
      }
      if (all_inside && one_row && step == 1) {
        for (int64_t p = 0; p < kc; ++p) {
          const T *src = x + (base + cols[0].origin + tap_offsets[p0 + p]);
          for (int l = 0; l < NR; ++l) d[p * NR + l] = load(src + l);
        }
      } else if (all_inside) {
        for (int64_t p = 0; p < kc; ++p) {
          const int64_t off = base + tap_offsets[p0 + p];
          for (int l = 0; l < NR; ++l) d[p * NR + l] = load(x + (off + cols[l].origin));
        }
      } else {
        for (int64_t p = 0; p < kc; ++p)
          for (int64_t l = 0; l < NR; ++l) d[p * NR + l] = l < w ? checked_value(base, p0 + p, cols[l]) : C(0);
      }
    }
  }

  // Panels of W taps [t0, t0+nt) over a depth of columns [c0, c0+depth) (depth <= KC): the im2col
  // matrix transposed, as the B operand of the weight gradient.
  template <int W>
  void pack_taps(int64_t group, int64_t c0, int64_t depth, int64_t t0, int64_t nt, C *dst) const {
    const int64_t base = group * g->cg * s.c;
    Column cols[gemm::Blocking<C>::KC];
    describe(c0, depth, cols);
    for (int64_t l0 = 0; l0 < nt; l0 += W) {
      C *d = dst + l0 * depth;
      const int64_t w = nt - l0 < W ? nt - l0 : W;
      const int64_t *offsets = tap_offsets + t0 + l0;
      for (int64_t p = 0; p < depth; ++p) {
        const Column &col = cols[p];
        if (col.inside && w == W) {
          const int64_t at = base + col.origin;
          for (int l = 0; l < W; ++l) d[p * W + l] = load(x + (at + offsets[l]));
        } else {
          for (int64_t l = 0; l < W; ++l) d[p * W + l] = l < w ? checked_value(base, t0 + l0 + l, col) : C(0);
        }
      }
    }
  }
};

// dy of group g as a matrix [Og x columns]: element (o, j) = dy[n, g*Og + o, oh, ow].
template <class T, class C>
struct OutputGradient {
  const T *dy;
  Strides4 s;
  const ConvGeometry *g;

  void describe(int64_t j, int64_t count, int64_t *offsets) const {
    ColumnCursor cursor(*g, j);
    for (int64_t i = 0; i < count; ++i, cursor.next()) offsets[i] = cursor.output_offset(s);
  }

  // As the B of the data gradient: panels of NR columns [j0, j0+nc) over depth o in [p0, p0+kc).
  void pack(int64_t group, int64_t p0, int64_t kc, int64_t j0, int64_t nc, C *dst) const {
    constexpr int NR = gemm::Blocking<C>::NR;
    for (int64_t l0 = 0; l0 < nc; l0 += NR) {
      C *d = dst + l0 * kc;
      const int64_t w = nc - l0 < NR ? nc - l0 : NR;
      int64_t offsets[NR];
      describe(j0 + l0, w, offsets);
      for (int64_t p = 0; p < kc; ++p) {
        const T *channel = dy + (group * g->og + p0 + p) * s.c;
        int64_t l = 0;
        for (; l < w; ++l) d[p * NR + l] = load(channel + offsets[l]);
        for (; l < NR; ++l) d[p * NR + l] = C(0);
      }
    }
  }

  // As the A of the weight gradient: panels of W output channels [o0, o0+mc) over a depth of
  // columns [c0, c0+depth) (depth <= KC).
  template <int W>
  void pack_channels(int64_t group, int64_t o0, int64_t mc, int64_t c0, int64_t depth, C *dst) const {
    int64_t offsets[gemm::Blocking<C>::KC];
    describe(c0, depth, offsets);
    for (int64_t l0 = 0; l0 < mc; l0 += W) {
      C *d = dst + l0 * depth;
      const int64_t w = mc - l0 < W ? mc - l0 : W;
      const T *first = dy + (group * g->og + o0 + l0) * s.c;
      for (int64_t p = 0; p < depth; ++p) {
        const T *at = first + offsets[p];
        int64_t l = 0;
        for (; l < w; ++l) d[p * W + l] = load(at + l * s.c);
        for (; l < W; ++l) d[p * W + l] = C(0);
      }
    }
  }
};

}  // namespace nnrt::reference
