// NNRT_OP_CONV2D_BACKWARD_DATA: dx[N,C,H,W] from dy[N,O,OH,OW] and w[O,C/groups,KH,KW].
//
// Per group, the gradient of the im2col matrix is W_g^T [taps x Og] * dy_g [Og x columns]; col2im
// then adds each of its elements into the dx position the tap read. Overlapping windows add into
// the same dx element, so one task owns whole images (a fixed block of them, chosen from the
// shapes only) and one group: it accumulates their dx in scratch, in a fixed order, then stores.
// Results therefore do not depend on the thread count.
#include <vector>

#include "conv2d_common.h"
#include "conv2d_packers.h"
#include "dtype.h"
#include "gemm.h"
#include "op_kernel.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

// Images per task: enough for a few hundred columns per product, from the shapes only.
int64_t images_per_task(const ConvGeometry &g) {
  const int64_t p = g.positions() > 0 ? g.positions() : 1;
  int64_t images = (256 + p - 1) / p;
  return images < g.n ? images : (g.n > 0 ? g.n : 1);
}

// dy restricted to the columns of one block of images.
template <class T, class C>
struct BlockGradient {
  OutputGradient<T, C> dy;
  int64_t first_column;
  void pack(int64_t group, int64_t p0, int64_t kc, int64_t j0, int64_t nc, C *dst) const {
    dy.pack(group, p0, kc, first_column + j0, nc, dst);
  }
};

// col2im: adds tiles of the im2col gradient [taps x block columns] into the block's dx scratch,
// laid out [image][c][h][w] densely.
template <class C>
struct Col2imSink {
  C *dx;
  const ConvGeometry *g;
  const ConvTaps *taps;
  int64_t first_column, first_image;

  void store(int64_t, int64_t i0, int64_t mc, int64_t j0, int64_t nc, C *tile, int64_t ld) const {
    constexpr int64_t NC = gemm::Blocking<C>::NC;
    int64_t image[NC], row0[NC], col0[NC];
    ColumnCursor cursor(*g, first_column + j0);
    for (int64_t j = 0; j < nc; ++j, cursor.next()) {
      image[j] = cursor.image - first_image;
      row0[j] = cursor.row0();
      col0[j] = cursor.col0();
    }
    for (int64_t i = 0; i < mc; ++i) {
      const int64_t k = i0 + i;
      const int64_t c = taps->channel[static_cast<size_t>(k)], dh = taps->dh[static_cast<size_t>(k)],
                    dw = taps->dw[static_cast<size_t>(k)];
      const C *row = tile + i * ld;
      for (int64_t j = 0; j < nc; ++j) {
        const int64_t ih = row0[j] + dh, iw = col0[j] + dw;
        if (inside(ih, g->h) && inside(iw, g->w)) dx[((image[j] * g->cg + c) * g->h + ih) * g->w + iw] += row[j];
      }
    }
  }
};

class Conv2dBackwardDataKernel final : public OpKernel {
 public:
  Conv2dBackwardDataKernel(const OpSetup &setup, const ConvGeometry &geometry)
      : exec_(setup.exec), dy_(setup.desc.inputs[0]), w_(setup.desc.inputs[1]), dx_(setup.desc.outputs[0]),
        g_(geometry), taps_(geometry) {
    tap_offsets_ = taps_.filter_offsets(w_.strides);
    images_ = images_per_task(g_);
    blocks_ = g_.n > 0 ? (g_.n + images_ - 1) / images_ : 0;
    tasks_ = blocks_ * g_.groups;
    slots_ = static_cast<int>(tasks_ < exec_.threads ? (tasks_ > 0 ? tasks_ : 1) : exec_.threads);
    shape_.m = g_.taps();
    shape_.n = images_ * g_.positions();
    shape_.k = g_.og;
    visit_float(dx_.dtype, [&](auto type) {
      using C = compute_t<typename decltype(type)::type>;
      slot_bytes_ = gemm::ScratchSize<C>(shape_).bytes() + accumulator_elements() * sizeof(C) + 64;
      workspace_bytes_ = static_cast<size_t>(slots_) * slot_bytes_;
    });
  }

  void run(const nnrt_op_args &args) const override {
    if (tasks_ == 0 || g_.cg == 0 || g_.h == 0 || g_.w == 0) return;
    visit_float(dx_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *w = input_ptr<T>(args, 1);
      const T *dy = input_ptr<T>(args, 0);
      T *dx = output_ptr<T>(args, 0);
      parallel_slots(exec_, tasks_, slots_, [&](int slot, int64_t task) {
        char *memory = static_cast<char *>(args.workspace) + static_cast<size_t>(slot) * slot_bytes_;
        const gemm::ScratchSize<C> size(shape_);
        const gemm::Scratch<C> scratch = gemm::carve_scratch<C>(memory, size);
        C *acc = reinterpret_cast<C *>((reinterpret_cast<uintptr_t>(memory + size.bytes()) + 63) & ~uintptr_t{63});
        run_task<T, C>(task, w, dy, dx, scratch, acc);
      });
    });
  }

 private:
  size_t accumulator_elements() const { return static_cast<size_t>(images_ * g_.cg * g_.h * g_.w); }

  template <class T, class C>
  void run_task(int64_t task, const T *w, const T *dy, T *dx, const gemm::Scratch<C> &scratch, C *acc) const {
    const int64_t group = task % g_.groups, block = task / g_.groups;
    const int64_t first_image = block * images_;
    const int64_t images = g_.n - first_image < images_ ? g_.n - first_image : images_;
    const int64_t first_column = first_image * g_.positions();
    const size_t acc_size = static_cast<size_t>(images * g_.cg * g_.h * g_.w);
    for (size_t i = 0; i < acc_size; ++i) acc[i] = C(0);

    gemm::Shape shape = shape_;
    shape.n = images * g_.positions();
    WeightPacker<T, C, gemm::Blocking<C>::MR, true> a{w, w_.strides[0], tap_offsets_.data(), g_.og};
    BlockGradient<T, C> b{OutputGradient<T, C>{dy, Strides4(dy_), &g_}, first_column};
    Col2imSink<C> sink{acc, &g_, &taps_, first_column, first_image};
    if (shape.m > 0) gemm::compute_serial<C>(shape, a, b, sink, group, scratch);

    const Strides4 s(dx_);
    const C *from = acc;
    for (int64_t n = 0; n < images; ++n)
      for (int64_t c = 0; c < g_.cg; ++c) {
        T *plane = dx + (first_image + n) * s.n + (group * g_.cg + c) * s.c;
        for (int64_t h = 0; h < g_.h; ++h)
          for (int64_t x = 0; x < g_.w; ++x) store(plane + h * s.h + x * s.w, *from++);
      }
  }

  Exec exec_;
  nnrt_tensor_desc dy_, w_, dx_;
  ConvGeometry g_;
  ConvTaps taps_;
  std::vector<int64_t> tap_offsets_;
  int64_t images_ = 1, blocks_ = 0, tasks_ = 0;
  int slots_ = 1;
  gemm::Shape shape_;
  size_t slot_bytes_ = 0;
};

}  // namespace

KernelPtr create_conv2d_backward_data(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &dy = d.inputs[0], &w = d.inputs[1], &dx = d.outputs[0];
  expect_dtype(dy, "input dy", kFloatDtypes);
  expect_same_dtype(w, "input w", dy, "input dy");
  expect_same_dtype(dx, "output dx", dy, "input dy");
  const ConvGeometry g = make_conv_geometry(d.attrs, dx, "output dx", w, "input w", dy, "input dy");
  return std::make_unique<Conv2dBackwardDataKernel>(setup, g);
}

}  // namespace nnrt::reference
