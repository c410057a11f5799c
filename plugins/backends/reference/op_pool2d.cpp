// NNRT_OP_POOL2D and NNRT_OP_POOL2D_BACKWARD, NCHW, float dtypes: MAX, AVG_INCLUDE_PAD (divide by
// the kernel area) and AVG_EXCLUDE_PAD (divide by the window's positions inside the input).
// Padded positions never win a max; a window wholly in the padding gives -inf (max) or 0 (avg).
// MAX propagates NaN, and its gradient goes to the first position holding the maximum (row-major
// in the window) - the first NaN when there is one. Work is split by (n, c) planes, which are
// independent, so results do not depend on the thread count.
#include <math.h>

#include <vector>

#include "conv2d_common.h"
#include "dtype.h"
#include "op_kernel.h"
#include "strided.h"
#include "validate.h"
#include "nnrt/kernels/pool.h"

namespace nnrt::reference {
namespace {

// The window geometry and the max/average rules are the header-only ones the GPU backend shares.
using kernels::PoolGeometry;
using Window = kernels::PoolWindow;
using kernels::pool_replaces_max;

// Runs fn(plane) for the N*C planes in parallel.
template <class F>
void for_each_plane(const Exec &exec, const PoolGeometry &g, F fn) {
  const int64_t work = g.oh * g.ow * g.kh * g.kw + g.h * g.w;
  parallel_for(exec, g.n * g.c, kCheapGrain / (work + 1) + 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) fn(p / g.c, p % g.c);
  });
}

class Pool2dKernel final : public OpKernel {
 public:
  Pool2dKernel(const OpSetup &setup, const PoolGeometry &g)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), y_(setup.desc.outputs[0]), g_(g) {}

  void run(const nnrt_op_args &args) const override {
    visit_float(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *x = input_ptr<T>(args, 0);
      T *y = output_ptr<T>(args, 0);
      const int64_t *sx = x_.strides, *sy = y_.strides;
      for_each_plane(exec_, g_, [&](int64_t n, int64_t c) {
        const T *plane = x + n * sx[0] + c * sx[1];
        T *out = y + n * sy[0] + c * sy[1];
        for (int64_t i = 0; i < g_.oh; ++i)
          for (int64_t j = 0; j < g_.ow; ++j) {
            const Window win(g_, i, j);
            C result;
            if (g_.alg == NNRT_POOL_MAX) {
              result = -static_cast<C>(INFINITY);
              for (int64_t r = win.r0; r < win.r1; ++r)
                for (int64_t q = win.c0; q < win.c1; ++q) {
                  const C v = load(plane + r * sx[2] + q * sx[3]);
                  if (pool_replaces_max(v, result)) result = v;
                }
            } else {
              C sum = 0;
              for (int64_t r = win.r0; r < win.r1; ++r)
                for (int64_t q = win.c0; q < win.c1; ++q) sum += load(plane + r * sx[2] + q * sx[3]);
              result = win.count() == 0 ? C(0) : sum / kernels::pool_average_divisor<C>(g_, win);
            }
            store(out + i * sy[2] + j * sy[3], result);
          }
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc x_, y_;
  PoolGeometry g_;
};

class Pool2dBackwardKernel final : public OpKernel {
 public:
  Pool2dBackwardKernel(const OpSetup &setup, const PoolGeometry &g)
      : exec_(setup.exec), dy_(setup.desc.inputs[0]), x_(setup.desc.inputs[1]), dx_(setup.desc.outputs[0]), g_(g) {}

  void run(const nnrt_op_args &args) const override {
    visit_float(x_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *dy = input_ptr<T>(args, 0), *x = input_ptr<T>(args, 1);
      T *dx = output_ptr<T>(args, 0);
      const int64_t *sdy = dy_.strides, *sx = x_.strides, *sdx = dx_.strides;
      for_each_plane(exec_, g_, [&](int64_t n, int64_t c) {
        std::vector<C> acc(static_cast<size_t>(g_.h * g_.w), C(0));
        const T *xp = x + n * sx[0] + c * sx[1];
        const T *dyp = dy + n * sdy[0] + c * sdy[1];
        for (int64_t i = 0; i < g_.oh; ++i)
          for (int64_t j = 0; j < g_.ow; ++j) {
            const Window win(g_, i, j);
            if (win.count() == 0) continue;
            const C grad = load(dyp + i * sdy[2] + j * sdy[3]);
            if (g_.alg == NNRT_POOL_MAX) {
              C m = -static_cast<C>(INFINITY);
              int64_t at = -1;
              for (int64_t r = win.r0; r < win.r1; ++r)
                for (int64_t q = win.c0; q < win.c1; ++q) {
                  const C v = load(xp + r * sx[2] + q * sx[3]);
                  if (at < 0 || pool_replaces_max(v, m)) {
                    m = v;
                    at = r * g_.w + q;
                  }
                }
              acc[static_cast<size_t>(at)] += grad;
            } else {
              const C share = grad / kernels::pool_average_divisor<C>(g_, win);
              for (int64_t r = win.r0; r < win.r1; ++r)
                for (int64_t q = win.c0; q < win.c1; ++q) acc[static_cast<size_t>(r * g_.w + q)] += share;
            }
          }
        T *dxp = dx + n * sdx[0] + c * sdx[1];
        for (int64_t r = 0; r < g_.h; ++r)
          for (int64_t q = 0; q < g_.w; ++q) store(dxp + r * sdx[2] + q * sdx[3], acc[static_cast<size_t>(r * g_.w + q)]);
      });
    });
  }

 private:
  Exec exec_;
  nnrt_tensor_desc dy_, x_, dx_;
  PoolGeometry g_;
};

PoolGeometry make_pool_geometry(const nnrt_op_desc &d, const nnrt_tensor_desc &x, const char *x_name,
                                const nnrt_tensor_desc &y, const char *y_name) {
  const nnrt_op_attrs &a = d.attrs;
  if (a.alg < NNRT_POOL_MAX || a.alg > NNRT_POOL_AVG_EXCLUDE_PAD)
    fail(NNRT_ERR_UNSUPPORTED, "alg %d is not an nnrt_pool_alg (MAX 1, AVG_INCLUDE_PAD 2, AVG_EXCLUDE_PAD 3)", a.alg);
  expect_rank(x, x_name, 4);
  expect_rank(y, y_name, 4);
  expect_attr(a.kernel[0] >= 1 && a.kernel[1] >= 1, "kernel [%d, %d] must be >= 1", a.kernel[0], a.kernel[1]);
  expect_attr(a.stride[0] >= 1 && a.stride[1] >= 1, "stride [%d, %d] must be >= 1", a.stride[0], a.stride[1]);
  expect_attr(a.pad[0] >= 0 && a.pad[1] >= 0 && a.pad[2] >= 0 && a.pad[3] >= 0,
              "pad [%d, %d, %d, %d] (top, left, bottom, right) must be >= 0", a.pad[0], a.pad[1], a.pad[2], a.pad[3]);
  PoolGeometry g;
  g.n = x.dims[0];
  g.c = x.dims[1];
  g.h = x.dims[2];
  g.w = x.dims[3];
  g.kh = a.kernel[0];
  g.kw = a.kernel[1];
  g.stride_h = a.stride[0];
  g.stride_w = a.stride[1];
  g.pad_top = a.pad[0];
  g.pad_left = a.pad[1];
  g.alg = a.alg;
  g.oh = conv_output_size(g.h, a.pad[0], a.pad[2], g.kh, 1, g.stride_h);
  g.ow = conv_output_size(g.w, a.pad[1], a.pad[3], g.kw, 1, g.stride_w);
  if (g.oh < 1 || g.ow < 1)
    fail(NNRT_ERR_SHAPE, "the %lld x %lld kernel does not fit in the %lld x %lld input padded by [%d, %d, %d, %d]",
         static_cast<long long>(g.kh), static_cast<long long>(g.kw), static_cast<long long>(g.h),
         static_cast<long long>(g.w), a.pad[0], a.pad[1], a.pad[2], a.pad[3]);
  const int64_t expected[4] = {g.n, g.c, g.oh, g.ow};
  bool same = true;
  for (int k = 0; k < 4; ++k) same = same && y.dims[k] == expected[k];
  if (!same)
    fail(NNRT_ERR_SHAPE,
         "%s has dims %s; expected %s: [N, C, floor((H + pt + pb - KH) / sh) + 1, floor((W + pl + pr - KW) / sw) + 1] "
         "for %s %s, kernel [%d, %d], stride [%d, %d], pad [%d, %d, %d, %d]",
         y_name, dims_string(y).c_str(), dims_string(expected, 4).c_str(), x_name, dims_string(x).c_str(),
         a.kernel[0], a.kernel[1], a.stride[0], a.stride[1], a.pad[0], a.pad[1], a.pad[2], a.pad[3]);
  return g;
}

}  // namespace

KernelPtr create_pool2d(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  expect_dtype(d.inputs[0], "input x", kFloatDtypes);
  expect_same_dtype(d.outputs[0], "output y", d.inputs[0], "input x");
  const PoolGeometry g = make_pool_geometry(d, d.inputs[0], "input x", d.outputs[0], "output y");
  return std::make_unique<Pool2dKernel>(setup, g);
}

KernelPtr create_pool2d_backward(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &dy = d.inputs[0], &x = d.inputs[1], &dx = d.outputs[0];
  expect_dtype(x, "input x", kFloatDtypes);
  expect_same_dtype(dy, "input dy", x, "input x");
  expect_same_dtype(dx, "output dx", x, "input x");
  expect_same_dims(dx, "output dx", x, "input x");
  const PoolGeometry g = make_pool_geometry(d, x, "input x", dy, "input dy");
  return std::make_unique<Pool2dBackwardKernel>(setup, g);
}

}  // namespace nnrt::reference
