// Backward-data convolution as one batched product and a col2im (onednn_conv_backward_data_gemm.h).
#include "onednn_conv_backward_data_gemm.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "onednn_measure.h"

namespace nnrt::onednn {
namespace {

using tag = dnnl::memory::format_tag;

// Dense channels-last strides of [N, C, H, W].
bool channels_last_dense(const nnrt_tensor_desc &t) {
  const int64_t c = t.dims[1], h = t.dims[2], w = t.dims[3];
  return t.ndim == 4 && t.strides[1] == 1 && t.strides[3] == c && t.strides[2] == w * c &&
         (t.dims[0] == 1 || t.strides[0] == h * w * c);
}

}  // namespace

bool GemmBackwardData::applies(const nnrt_op_desc &d) {
  const nnrt_tensor_desc &dy = d.inputs[0], &w = d.inputs[1], &dx = d.outputs[0];
  if (dy.dtype != NNRT_DTYPE_F32 || w.dtype != NNRT_DTYPE_F32 || dx.dtype != NNRT_DTYPE_F32) return false;
  if (d.attrs.groups != 1 || d.attrs.dilation[0] != 1 || d.attrs.dilation[1] != 1) return false;
  if (!channels_last_dense(dy) || !channels_last_dense(dx)) return false;
  const double columns = static_cast<double>(dy.dims[0]) * static_cast<double>(dy.dims[2] * dy.dims[3]) *
                         static_cast<double>(w.dims[1] * w.dims[2] * w.dims[3]) * sizeof(float);
  return columns <= static_cast<double>(kMaxColumnBytes);
}

GemmBackwardData::GemmBackwardData(const nnrt_op_desc &d, WorkspaceLayout &layout) {
  const nnrt_tensor_desc &dy = d.inputs[0], &w = d.inputs[1], &dx = d.outputs[0];
  n_ = dx.dims[0];
  c_ = dx.dims[1];
  h_ = dx.dims[2];
  w_ = dx.dims[3];
  o_ = dy.dims[1];
  oh_ = dy.dims[2];
  ow_ = dy.dims[3];
  kh_ = w.dims[2];
  kw_ = w.dims[3];
  stride_h_ = d.attrs.stride[0];
  stride_w_ = d.attrs.stride[1];
  pad_t_ = d.attrs.pad[0];
  pad_l_ = d.attrs.pad[1];
  const int64_t rows = n_ * oh_ * ow_, patch = kh_ * kw_ * c_;
  w_user_ = memory_desc(w, dt::f32);
  w_ohwi_ = md({o_, c_, kh_, kw_}, dt::f32, tag::ohwi);
  dy_rows_ = md({rows, o_}, dt::f32, tag::ab);
  w_rows_ = md({o_, patch}, dt::f32, tag::ab);
  dcol_rows_ = md({rows, patch}, dt::f32, tag::ab);
  pd_ = make_pd<dnnl::matmul>(base_attr(), dy_rows_, w_rows_, md(), dcol_rows_);
  layout.need_scratchpad(pd_);
  weights_ = Bridge::to_inner(w_user_, w_ohwi_, layout, false);
  dcol_slot_ = layout.add_buffer(dcol_rows_.get_size());
  matmul_ = dnnl::matmul(pd_);
}

void GemmBackwardData::run(const Run &r) const {
  const dnnl::memory w = weights_.in(r, 1);
  const dnnl::memory dy = r.input(dy_rows_, 0);
  const dnnl::memory dcol = r.buffer(dcol_rows_, dcol_slot_);
  const dnnl::memory w_rows(w_rows_, cpu_engine(), w.get_data_handle());
  r.execute(matmul_, {{DNNL_ARG_SRC, dy}, {DNNL_ARG_WEIGHTS, w_rows}, {DNNL_ARG_DST, dcol}});
  col2im(static_cast<const float *>(dcol.get_data_handle()), static_cast<float *>(r.args().outputs[0]));
}

// dX[n, ih, iw, :] is the sum of the columns of every (oh, ow, kh, kw) that reads it, added in that
// order; one image per task, so the result does not depend on the thread count.
void GemmBackwardData::col2im(const float *dcol, float *dx) const {
  const int64_t image = h_ * w_ * c_, patch = kh_ * kw_ * c_;
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < n_; ++n) {
    float *out = dx + n * image;
    std::memset(out, 0, static_cast<size_t>(image) * sizeof(float));
    for (int64_t oh = 0; oh < oh_; ++oh)
      for (int64_t ow = 0; ow < ow_; ++ow) {
        const float *col = dcol + ((n * oh_ + oh) * ow_ + ow) * patch;
        for (int64_t kh = 0; kh < kh_; ++kh) {
          const int64_t ih = oh * stride_h_ + kh - pad_t_;
          if (ih < 0 || ih >= h_) continue;
          for (int64_t kw = 0; kw < kw_; ++kw) {
            const int64_t iw = ow * stride_w_ + kw - pad_l_;
            if (iw < 0 || iw >= w_) continue;
            float *to = out + (ih * w_ + iw) * c_;
            const float *from = col + (kh * kw_ + kw) * c_;
            for (int64_t c = 0; c < c_; ++c) to[c] += from[c];
          }
        }
      }
  }
}

std::function<double()> GemmBackwardData::scratch_timer() const {
  struct Scratch {
    bool made = false;
    dnnl::memory w_user, w, dy, dcol, dx, w_rows;
    ExecArgs args{};
    dnnl::reorder reorder;
  };
  // Filled at the first call; shared by the copies of the timer.
  auto scratch = std::make_shared<Scratch>();
  return [this, scratch] {
    dnnl::stream &s = thread_stream();
    auto run = [&] {
      const auto start = std::chrono::steady_clock::now();
      scratch->reorder.execute(s, scratch->w_user, scratch->w);
      dnnl::error::wrap_c_api(
          dnnl_primitive_execute(matmul_.get(), s.get(), scratch->args.size(), scratch->args.c_args()),
          "could not execute a primitive");
      s.wait();
      col2im(static_cast<const float *>(scratch->dcol.get_data_handle()),
             static_cast<float *>(scratch->dx.get_data_handle()));
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if (!scratch->made) {
      scratch->w_user = scratch_memory(w_user_);
      scratch->w = scratch_memory(w_ohwi_);
      scratch->dy = scratch_memory(dy_rows_);
      scratch->dcol = scratch_memory(dcol_rows_);
      scratch->dx = scratch_memory(md({n_ * h_ * w_ * c_}, dt::f32, tag::a));
      scratch->w_rows = dnnl::memory(w_rows_, cpu_engine(), scratch->w.get_data_handle());
      scratch->args = ExecArgs{{DNNL_ARG_SRC, scratch->dy}, {DNNL_ARG_WEIGHTS, scratch->w_rows}, {DNNL_ARG_DST, scratch->dcol}};
      const md scratchpad_md = pd_.scratchpad_desc();
      if (scratchpad_md.get_size() != 0) scratch->args.emplace(DNNL_ARG_SCRATCHPAD, scratch_memory(scratchpad_md));
      scratch->reorder = dnnl::reorder(scratch->w_user, scratch->w);
      scratch->made = true;
      run();  // a first run, untimed, as a primitive's first (kernels made, caches warm)
    }
    return run();
  };
}

}  // namespace nnrt::onednn
