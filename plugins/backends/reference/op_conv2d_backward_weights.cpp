// NNRT_OP_CONV2D_BACKWARD_WEIGHTS: dw[O,C/groups,KH,KW] (and db[O]) from x[N,C,H,W] and dy.
//
// Per group, dW_g [Og x taps] = dy_g [Og x columns] * im2col(x)_g^T [columns x taps]: a product
// whose depth is every output position of every image. A small dW (LeNet's first layer has 500
// weights and 36864 columns) would leave threads idle, so the depth is cut into chunks whose number
// comes from the shapes alone; each chunk's product goes to its own partial dW, and the partials
// are added in chunk order. db sums dy over (n, oh, ow) in the cascade order.
#include <vector>

#include "conv2d_common.h"
#include "conv2d_packers.h"
#include "dtype.h"
#include "gemm.h"
#include "op_kernel.h"
#include "strided.h"
#include "summation.h"
#include "validate.h"

namespace nnrt::reference {
namespace {

constexpr int64_t kMinChunkColumns = 2048;
constexpr int64_t kMaxChunks = 16;
constexpr int64_t kMaxPartialElements = int64_t{1} << 22;  // bounds the partial dWs' memory

template <class T, class C>
struct ChannelPacker {  // A: dy_g over the columns of one chunk
  OutputGradient<T, C> dy;
  int64_t first_column;
  void pack(int64_t group, int64_t i0, int64_t mc, int64_t p0, int64_t kc, C *dst) const {
    dy.template pack_channels<gemm::Blocking<C>::MR>(group, i0, mc, first_column + p0, kc, dst);
  }
};

template <class T, class C>
struct TapPacker {  // B: im2col(x)_g^T over the columns of one chunk
  Im2col<T, C> x;
  int64_t first_column;
  void pack(int64_t group, int64_t p0, int64_t kc, int64_t j0, int64_t nc, C *dst) const {
    x.template pack_taps<gemm::Blocking<C>::NR>(group, first_column + p0, kc, j0, nc, dst);
  }
};

template <class C>
struct PartialSink {  // the chunk's dW_g, dense [Og x taps]
  C *partial;
  int64_t taps;
  void store(int64_t, int64_t i0, int64_t mc, int64_t j0, int64_t nc, C *tile, int64_t ld) const {
    for (int64_t i = 0; i < mc; ++i)
      for (int64_t j = 0; j < nc; ++j) partial[(i0 + i) * taps + j0 + j] = tile[i * ld + j];
  }
};

class Conv2dBackwardWeightsKernel final : public OpKernel {
 public:
  Conv2dBackwardWeightsKernel(const OpSetup &setup, const ConvGeometry &geometry)
      : exec_(setup.exec), x_(setup.desc.inputs[0]), dy_(setup.desc.inputs[1]), dw_(setup.desc.outputs[0]),
        has_bias_(setup.desc.n_outputs == 2), g_(geometry), taps_(geometry) {
    if (has_bias_) db_ = setup.desc.outputs[1];
    tap_offsets_ = taps_.filter_offsets(dw_.strides);
    window_offsets_ = taps_.window_offsets(x_.strides);
    const int64_t columns = g_.columns();
    const int64_t weights = g_.o * g_.taps();
    int64_t chunks = (columns + kMinChunkColumns - 1) / kMinChunkColumns;
    if (chunks > kMaxChunks) chunks = kMaxChunks;
    if (weights > 0 && chunks > kMaxPartialElements / weights) chunks = kMaxPartialElements / weights;
    if (chunks < 1) chunks = 1;
    chunk_columns_ = gemm::round_up((columns + chunks - 1) / chunks, 256);
    if (chunk_columns_ < 1) chunk_columns_ = 1;
    chunks_ = columns > 0 ? (columns + chunk_columns_ - 1) / chunk_columns_ : 1;
    shape_.m = g_.og;
    shape_.n = g_.taps();
    shape_.k = chunk_columns_ < columns ? chunk_columns_ : columns;
    visit_float(dw_.dtype, [&](auto type) {
      using C = compute_t<typename decltype(type)::type>;
      tiling_ = gemm::choose_tiling<C>(exec_, chunks_ * g_.groups, shape_.m, shape_.n);
      tasks_ = tiling_.count(chunks_ * g_.groups);
      slots_ = static_cast<int>(tasks_ < exec_.threads ? (tasks_ > 0 ? tasks_ : 1) : exec_.threads);
      partial_bytes_ = gemm::round_up(static_cast<int64_t>(chunks_ * weights * sizeof(C)), 64);
      slot_bytes_ = gemm::ScratchSize<C>(shape_).bytes();
      workspace_bytes_ = static_cast<size_t>(partial_bytes_) + static_cast<size_t>(slots_) * slot_bytes_ + 64;
    });
    const int64_t *strides[1] = {dy_.strides};
    const int64_t dims[4] = {g_.n, 1, g_.oh, g_.ow};
    bias_terms_ = make_strided_loop<1>(4, dims, strides);
  }

  void run(const nnrt_op_args &args) const override {
    visit_float(dw_.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      using C = compute_t<T>;
      const T *x = input_ptr<T>(args, 0), *dy = input_ptr<T>(args, 1);
      if (g_.o * g_.taps() > 0) weight_gradient<T, C>(x, dy, output_ptr<T>(args, 0), args.workspace);
      if (has_bias_) bias_gradient<T, C>(dy, output_ptr<T>(args, 1));
    });
  }

 private:
  template <class T, class C>
  void weight_gradient(const T *x, const T *dy, T *dw, void *workspace) const {
    char *base = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(workspace) + 63) & ~uintptr_t{63});
    C *partials = reinterpret_cast<C *>(base);
    const int64_t group_weights = g_.og * g_.taps(), weights = g_.o * g_.taps();
    const int64_t columns = g_.columns();
    const gemm::ScratchSize<C> size(shape_);
    parallel_slots(exec_, tasks_, slots_, [&](int slot, int64_t task) {
      const gemm::Scratch<C> scratch =
          gemm::carve_scratch<C>(base + partial_bytes_ + static_cast<size_t>(slot) * slot_bytes_, size);
      const gemm::Tiling &t = tiling_;
      const int64_t jb = task % t.n_tiles, ib = task / t.n_tiles % t.m_tiles;
      const int64_t group = task / (t.n_tiles * t.m_tiles) % g_.groups, chunk = task / (t.n_tiles * t.m_tiles * g_.groups);
      const int64_t first_column = chunk * chunk_columns_;
      const int64_t depth = columns - first_column < chunk_columns_ ? columns - first_column : chunk_columns_;
      ChannelPacker<T, C> a{OutputGradient<T, C>{dy, Strides4(dy_), &g_}, first_column};
      TapPacker<T, C> b{Im2col<T, C>{x, Strides4(x_), &g_, &taps_, window_offsets_.data()}, first_column};
      PartialSink<C> sink{partials + chunk * weights + group * group_weights, g_.taps()};
      const int64_t i0 = ib * t.mc, j0 = jb * t.nc;
      gemm::compute_tile<C>(a, b, sink, group, i0, gemm::min64(t.mc, shape_.m - i0), j0, gemm::min64(t.nc, shape_.n - j0),
                            depth > 0 ? depth : 0, scratch);
    });
    // dw = the partials added in chunk order, stored through dw's strides.
    const int64_t taps = g_.taps();
    parallel_for(exec_, g_.o, kCheapGrain / (taps * chunks_ + 1) + 1, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o)
        for (int64_t t = 0; t < taps; ++t) {
          C sum = partials[o * taps + t];
          for (int64_t c = 1; c < chunks_; ++c) sum += partials[c * weights + o * taps + t];
          store(dw + o * dw_.strides[0] + tap_offsets_[static_cast<size_t>(t)], sum);
        }
    });
  }

  template <class T, class C>
  void bias_gradient(const T *dy, T *db) const {
    auto sum_channel = [&](int64_t o) {
      CascadeSum<C> sum;
      for_each_run(bias_terms_, 0, bias_terms_.count, [&](const int64_t *off, int64_t n) {
        sum.add_run(dy + o * dy_.strides[1] + off[0], bias_terms_.inner_stride(0), n, [](C v) { return v; });
      });
      return sum.result();
    };
    if (g_.o < 4 * exec_.threads) {
      for (int64_t o = 0; o < g_.o; ++o)
        store(db + o * db_.strides[0],
              parallel_cascade_sum<C>(exec_, bias_terms_, dy + o * dy_.strides[1], [](C v) { return v; }));
      return;
    }
    const int64_t grain = bias_terms_.count >= kCheapGrain ? 1 : kCheapGrain / (bias_terms_.count + 1) + 1;
    parallel_for(exec_, g_.o, grain, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) store(db + o * db_.strides[0], sum_channel(o));
    });
  }

  Exec exec_;
  nnrt_tensor_desc x_, dy_, dw_, db_{};
  bool has_bias_;
  ConvGeometry g_;
  ConvTaps taps_;
  std::vector<int64_t> tap_offsets_, window_offsets_;  // of each tap in a filter of dw, and in x
  int64_t chunk_columns_ = 1, chunks_ = 1, tasks_ = 0;
  gemm::Tiling tiling_{};
  int slots_ = 1;
  gemm::Shape shape_;
  int64_t partial_bytes_ = 0;
  size_t slot_bytes_ = 0;
  StridedLoop<1> bias_terms_;
};

}  // namespace

KernelPtr create_conv2d_backward_weights(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &x = d.inputs[0], &dy = d.inputs[1], &dw = d.outputs[0];
  expect_dtype(x, "input x", kFloatDtypes);
  expect_same_dtype(dy, "input dy", x, "input x");
  expect_same_dtype(dw, "output dw", x, "input x");
  const ConvGeometry g = make_conv_geometry(d.attrs, x, "input x", dw, "output dw", dy, "input dy");
  if (d.n_outputs == 2) {
    expect_same_dtype(d.outputs[1], "output db", x, "input x");
    expect_dims(d.outputs[1], "output db ([O])", {g.o});
  }
  return std::make_unique<Conv2dBackwardWeightsKernel>(setup, g);
}

}  // namespace nnrt::reference
