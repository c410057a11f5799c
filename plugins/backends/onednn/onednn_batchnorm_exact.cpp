// Batch normalization backward in double (onednn_batchnorm_exact.h).
#include "onednn_batchnorm_exact.h"

#include <functional>

#include "nnrt/kernels/batchnorm.h"
#include "onednn_special_values.h"

namespace nnrt::onednn {
namespace {

// Calls f(offset in a, offset in b, offset in c) for every element of channel `channel` of three
// tensors of the same dims (a, b and c strides; dim 1 is the channel), in row-major order.
void for_each_in_channel(const nnrt_tensor_desc &a, const nnrt_tensor_desc &b, const nnrt_tensor_desc &c,
                         int64_t channel, const std::function<void(int64_t, int64_t, int64_t)> &f) {
  int64_t index[NNRT_MAX_DIMS] = {};
  index[1] = channel;
  for (;;) {
    int64_t oa = 0, ob = 0, oc = 0;
    for (int i = 0; i < a.ndim; ++i) {
      oa += index[i] * a.strides[i];
      ob += index[i] * b.strides[i];
      oc += index[i] * c.strides[i];
    }
    f(oa, ob, oc);
    int i = a.ndim - 1;
    for (; i >= 0; --i) {  // the next index, the channel held
      if (i == 1) continue;
      if (++index[i] < a.dims[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

}  // namespace

void exact_batchnorm_backward(const nnrt_op_desc &d, const nnrt_op_args &args) {
  const nnrt_tensor_desc &x = d.inputs[0], &dy = d.inputs[1], &dx = d.outputs[0];
  for (int i = 0; i < x.ndim; ++i)
    if (x.dims[i] == 0) return;  // nothing to compute; dgamma and dbeta are oneDNN's (zeros)
  int64_t count = 1;
  for (int i = 0; i < x.ndim; ++i) count *= i == 1 ? 1 : x.dims[i];
  const double eps = d.attrs.eps;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < x.dims[1]; ++c) {
    const double mean = load_float(args.inputs[2], NNRT_DTYPE_F32, c * d.inputs[2].strides[0]);
    const double var = load_float(args.inputs[3], NNRT_DTYPE_F32, c * d.inputs[3].strides[0]);
    const double gamma = load_float(args.inputs[4], NNRT_DTYPE_F32, c * d.inputs[4].strides[0]);
    const double inv_std = kernels::bn_inv_std(var, eps);
    double sum_dy = 0, sum_dy_xhat = 0;
    for_each_in_channel(x, dy, dx, c, [&](int64_t ox, int64_t ody, int64_t) {
      const double g = load_float(args.inputs[1], dy.dtype, ody);
      sum_dy += g;
      sum_dy_xhat += g * ((load_float(args.inputs[0], x.dtype, ox) - mean) * inv_std);
    });
    store_float(args.outputs[1], NNRT_DTYPE_F32, c * d.outputs[1].strides[0], static_cast<float>(sum_dy_xhat));
    store_float(args.outputs[2], NNRT_DTYPE_F32, c * d.outputs[2].strides[0], static_cast<float>(sum_dy));
    const double scale = gamma * inv_std, mean_dy = sum_dy / static_cast<double>(count),
                 mean_dy_xhat = sum_dy_xhat / static_cast<double>(count);
    for_each_in_channel(x, dy, dx, c, [&](int64_t ox, int64_t ody, int64_t odx) {
      const double xhat = (load_float(args.inputs[0], x.dtype, ox) - mean) * inv_std;
      const double g = load_float(args.inputs[1], dy.dtype, ody);
      store_float(args.outputs[0], dx.dtype, odx,
                  static_cast<float>(kernels::bn_backward(g, xhat, scale, mean_dy, mean_dy_xhat)));
    });
  }
}

}  // namespace nnrt::onednn
