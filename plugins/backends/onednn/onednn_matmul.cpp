// NNRT_OP_MATMUL through oneDNN's matmul primitive: f32 or bf16, batch dims broadcast (nnrt's
// stride-0 dims become dims of 1), transposed operands read in place as strided descriptors,
// optional bias [N], fused activation as an eltwise post-op.
//
// Layout choice (measured on this project's bench, 2 threads, AVX-512): oneDNN's brgemm matmul
// reading nnrt's row-major or transposed operands directly beats letting it pick a blocked
// weights layout and reordering b on every call for the small-M products of training (64x784x1024:
// 340 vs 284 GFLOP/s; 64x800x200: 299 vs 194), and is within 10% on 1024^3. inner_product was
// no faster than matmul with the same weights treatment, so matmul serves dense layers too. When
// oneDNN has only its reference kernel for nnrt's strides (neither of the last two dims of an
// operand is contiguous), the operands are reordered into the layouts oneDNN picks instead.
//
// b with rows a multiple of 1 KB apart, read row by row (a dense layer's backward-data product
// dY x W, W stored [out, in] as PyTorch stores it): for a small M oneDNN 2.6's gemm reads such a b
// in place with a kernel whose loads down a column all fall into one cache set. Measured (AVX2
// AMD EPYC, 64x1024 x 1024x1024): 43 GFLOP/s at 1 thread and 84 at 2, against 92 and 188 once b
// is copied with rows 64 bytes longer, a copy of 0.13 and 0.08 ms that leaves 2x. So such a b has
// a second candidate, b copied into padded rows, and the op measures both (onednn_measure.h).
#include "onednn_common.h"
#include "onednn_measure.h"

namespace nnrt::onednn {
namespace {

// bias [N] as oneDNN's matmul wants it: c's rank, with dims of 1 but the last.
md bias_desc(const nnrt_tensor_desc &bias, int rank) {
  dims ds(static_cast<size_t>(rank), 1), st(static_cast<size_t>(rank), 1);
  ds.back() = bias.dims[0];
  st.back() = bias.strides[0];
  return strided_desc(ds, dnnl_type(bias.dtype), st);
}

// b's layout with each row (the last dim) kPadBytes longer, when b is read row by row and its
// rows are a multiple of kAliasingBytes apart; an empty descriptor (is_zero()) otherwise. Batch dims stay
// dense over the padded matrices.
constexpr int64_t kAliasingBytes = 1024, kPadBytes = 64;
md padded_rows(const nnrt_tensor_desc &b) {
  const int r = b.ndim;
  const dt type = dnnl_type(b.dtype);
  const int64_t bytes = static_cast<int64_t>(dnnl::memory::data_type_size(type));
  if (r < 2 || b.strides[r - 1] != 1 || b.dims[r - 1] == 1 || b.dims[r - 2] < 64 ||
      b.strides[r - 2] * bytes % kAliasingBytes != 0)
    return md();
  dims ds(static_cast<size_t>(r)), padded(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) ds[i] = b.strides[i] == 0 ? 1 : b.dims[i];  // broadcast_desc's dims
  padded[r - 1] = 1;
  padded[r - 2] = ds[r - 1] + kPadBytes / bytes;
  for (int i = r - 2; i-- > 0;) padded[i] = padded[i + 1] * ds[i + 1];
  return strided_desc(ds, type, padded);
}

class MatmulOp : public Op {
 public:
  explicit MatmulOp(const Build &bd) {
    const nnrt_op_desc &d = bd.desc;
    const nnrt_tensor_desc &a = d.inputs[0], &b = d.inputs[1], &c = d.outputs[0];
    has_bias_ = d.n_inputs > 2;
    dnnl::primitive_attr attr = base_attr();
    attr.set_post_ops(fused_post_ops(d.attrs.fused, d.attrs.alpha, d.attrs.beta));
    const md a_user = broadcast_desc(a), b_user = broadcast_desc(b), c_user = memory_desc(c);
    const md bias = has_bias_ ? bias_desc(d.inputs[2], c.ndim) : md();

    dnnl::matmul::primitive_desc pd = make_pd<dnnl::matmul>(attr, a_user, b_user, bias, c_user);
    if (is_reference_impl(pd)) {
      dnnl::matmul::primitive_desc blocked =
          make_pd<dnnl::matmul>(attr, any_layout(a_user), any_layout(b_user), bias, any_layout(c_user));
      if (!is_reference_impl(blocked)) pd = blocked;
    } else if (const md b_padded = padded_rows(b); !b_padded.is_zero()) {  // oneDNN 3's empty desc converts to true
      dnnl::matmul::primitive_desc padded = make_pd<dnnl::matmul>(attr, a_user, b_padded, bias, c_user);
      if (!is_reference_impl(padded)) {
        // Deterministic mode and plans take the copy: it costs a few percent where the product in
        // place is fine, and saves half where it is not (oneDNN's AVX-512 gemm forces the same
        // no-copy path for these shapes; unmeasured there).
        const std::vector<Candidate> candidates{{&padded, {{DNNL_ARG_WEIGHTS, b_user}}}, {&pd, {{DNNL_ARG_WEIGHTS, b_user}}}};
        const Candidate &chosen = candidates[fastest_candidate(bd.key(), candidates, !bd.plan_only && !bd.deterministic)];
        if (chosen.pd == &padded) pd = padded;
      }
    }
    const bool plan_only = bd.plan_only;
    layout.need_scratchpad(pd);
    a_ = Bridge::to_inner(a_user, pd.src_desc(), layout, plan_only);
    b_ = Bridge::to_inner(b_user, pd.weights_desc(), layout, plan_only);
    if (has_bias_) bias_ = Bridge::to_inner(bias, pd.bias_desc(), layout, plan_only);
    c_ = Bridge::to_user(pd.dst_desc(), c_user, layout, plan_only);
    if (!plan_only) {
      log_impl("matmul", pd);
      matmul_ = dnnl::matmul(pd);
    }
  }

  void run(const Run &r) const override {
    dnnl::memory c = c_.out(r, 0);
    ExecArgs args{
        {DNNL_ARG_SRC, a_.in(r, 0)}, {DNNL_ARG_WEIGHTS, b_.in(r, 1)}, {DNNL_ARG_DST, c}};
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, bias_.in(r, 2));
    r.execute(matmul_, std::move(args));
    c_.finish(r, c, 0);
  }

 private:
  bool has_bias_ = false;
  Bridge a_, b_, bias_, c_;
  dnnl::matmul matmul_;
};

}  // namespace

std::unique_ptr<Op> make_matmul(const Build &bd) {
  const nnrt_op_desc &d = bd.desc;
  check_common(d, 2, 3, 1, 1);
  const nnrt_tensor_desc &a = d.inputs[0], &b = d.inputs[1], &c = d.outputs[0];
  if (d.n_inputs > 2)
    require_compute_dtype({&a, &b, &d.inputs[2], &c});
  else
    require_compute_dtype({&a, &b, &c});
  const int r = c.ndim;
  require(r >= 2 && a.ndim == r && b.ndim == r, "matmul: a, b and c must have the same rank >= 2");
  for (int i = 0; i < r - 2; ++i)
    require(a.dims[i] == c.dims[i] && b.dims[i] == c.dims[i], "matmul: batch dims must be c's");
  require(a.dims[r - 2] == c.dims[r - 2] && b.dims[r - 1] == c.dims[r - 1] && a.dims[r - 1] == b.dims[r - 2],
          "matmul: shapes are not [..., M, K] x [..., K, N] -> [..., M, N]");
  // Only batch dims broadcast; a stride 0 in M, K or N is a repeated row or column, which oneDNN
  // cannot read in place and is rare enough to leave to the reference backend.
  for (const nnrt_tensor_desc *t : {&a, &b})
    require((t->strides[r - 2] > 0 || t->dims[r - 2] == 1) && (t->strides[r - 1] > 0 || t->dims[r - 1] == 1),
            "matmul: an operand repeats along M, K or N (stride 0)");
  if (d.n_inputs > 2) require(d.inputs[2].ndim == 1 && d.inputs[2].dims[0] == c.dims[r - 1], "matmul: bias is not [N]");
  auto op = std::make_unique<MatmulOp>(bd);
  return bd.plan_only ? nullptr : std::move(op);
}

}  // namespace nnrt::onednn
