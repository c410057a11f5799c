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
//
// b that the host vouches for (a model's weight in a prediction: args.counter, nnrt_backend.h) may
// also be kept in another layout from call to call (onednn_kept_input.h), as ONNX Runtime prepacks
// its weights. A dense layer's weight [out, in] is read as b = W^T, and with in a multiple of 256
// floats it is stored in padded rows (model/param_storage.h), which leaves oneDNN 2.6 only its gemm
// kernel, reading b across rows: a BERT-base feed-forward product (128x768 x 768x3072, 1 thread,
// AVX-512 Zen 4) took 7.8 ms that way, 5.3 with b kept in oneDNN's blocked layout, and
// 128x3072 x 3072x768 7.0 ms against 5.4 with b kept plain in padded rows. So such a b has two
// more candidates, kept blocked and kept plain, measured with the others (the kept copy's reorder
// not counted: it runs once per weights version) but chosen only when 10% faster and a has at
// least kMinKeptRows rows, since each costs a copy of the weight. Calls without a version
// (training) read b where it lies.
#include "onednn_common.h"
#include "onednn_kept_input.h"
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

// b as a dense row-major matrix (per batch), its rows kPadBytes longer when they are a multiple of
// kAliasingBytes long and there are at least 64 of them (as padded_rows): a layout to keep b in.
md plain_rows(const nnrt_tensor_desc &b) {
  const int r = b.ndim;
  const dt type = dnnl_type(b.dtype);
  const int64_t bytes = static_cast<int64_t>(dnnl::memory::data_type_size(type));
  dims ds(static_cast<size_t>(r)), st(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) ds[i] = b.strides[i] == 0 ? 1 : b.dims[i];  // broadcast_desc's dims
  st[r - 1] = 1;
  st[r - 2] = ds[r - 1] + (ds[r - 2] >= 64 && ds[r - 1] * bytes % kAliasingBytes == 0 ? kPadBytes / bytes : 0);
  for (int i = r - 2; i-- > 0;) st[i] = st[i + 1] * ds[i + 1];
  return strided_desc(ds, type, st);
}

// Products of fewer rows of a keep no copy of b: they read each weight about once a call in any
// layout, and callers that predict a few examples at a time are those that map and share weights
// to hold them once (nnrt.h: nnrt_model_load, nnrt_model_share).
constexpr int64_t kMinKeptRows = 32;

int64_t rows_of(const nnrt_tensor_desc &a) {
  int64_t rows = 1;
  for (int i = 0; i < a.ndim - 1; ++i) rows *= a.strides[i] == 0 ? 1 : a.dims[i];
  return rows;
}

// Whether b is one matrix for every batch (a weight): its batch dims are broadcast or 1.
bool one_matrix(const nnrt_tensor_desc &b) {
  for (int i = 0; i < b.ndim - 2; ++i)
    if (b.dims[i] != 1 && b.strides[i] != 0) return false;
  return true;
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
    const bool measure = !bd.plan_only && !bd.deterministic;
    if (is_reference_impl(pd)) {
      dnnl::matmul::primitive_desc blocked =
          make_pd<dnnl::matmul>(attr, any_layout(a_user), any_layout(b_user), bias, any_layout(c_user));
      if (!is_reference_impl(blocked)) pd = blocked;
    } else {
      // Deterministic mode and plans take the first: the copy into padded rows when there is one
      // (it costs a few percent where the product in place is fine, and saves half where it is
      // not; oneDNN's AVX-512 gemm forces the same no-copy path for these shapes), else b in place.
      std::vector<dnnl::matmul::primitive_desc> pds;
      std::vector<Candidate> candidates;
      const md b_padded = padded_rows(b);
      if (!b_padded.is_zero()) pds.push_back(make_pd<dnnl::matmul>(attr, a_user, b_padded, bias, c_user));  // oneDNN 3's empty desc converts to true
      pds.push_back(pd);
      const size_t in_place = pds.size();  // those before are read from b at every call
      if (measure && one_matrix(b) && rows_of(a) >= kMinKeptRows) {
        pds.push_back(make_pd<dnnl::matmul>(attr, a_user, any_layout(b_user), bias, c_user));
        if (const md plain = plain_rows(b); plain != b_user) pds.push_back(make_pd<dnnl::matmul>(attr, a_user, plain, bias, c_user));
      }
      std::vector<size_t> from;  // each candidate's index in pds
      for (size_t i = 0; i < pds.size(); ++i) {
        // A layout to keep b in that is b's own is no other way than b in place.
        if (is_reference_impl(pds[i]) || (i >= in_place && pds[i].weights_desc() == b_user)) continue;
        Candidate c{&pds[i], {}};
        if (i < in_place) c.user_layouts = {{DNNL_ARG_WEIGHTS, b_user}};
        else c.handicap = 1.1;
        candidates.push_back(c);
        from.push_back(i);
      }
      if (!candidates.empty()) {
        const size_t chosen = from[fastest_candidate(bd.key(), candidates, measure)];
        if (chosen >= in_place) {
          kept_ = std::make_unique<Kept>();
          kept_->pd = pds[chosen];
        } else {
          pd = pds[chosen];
        }
      }
    }
    const bool plan_only = bd.plan_only;
    layout.need_scratchpad(pd);
    a_ = Bridge::to_inner(a_user, pd.src_desc(), layout, plan_only);
    b_ = Bridge::to_inner(b_user, pd.weights_desc(), layout, plan_only);
    if (has_bias_) bias_ = Bridge::to_inner(bias, pd.bias_desc(), layout, plan_only);
    c_ = Bridge::to_user(pd.dst_desc(), c_user, layout, plan_only);
    if (kept_) {
      // The kept path reads a, bias and c as the user gives them (its descriptors are the user's).
      layout.need_scratchpad(kept_->pd);
      kept_->a = a_user;
      kept_->bias = bias;
      kept_->c = c_user;
      kept_->b = Bridge::to_kept(b_user, kept_->pd.weights_desc(), layout, plan_only);
      kept_->input = std::make_unique<KeptInput>(b, false, true);
    }
    if (!plan_only) {
      log_impl("matmul", pd);
      matmul_ = dnnl::matmul(pd);
      if (kept_) {
        log_impl("matmul, weights kept", kept_->pd);
        kept_->matmul = dnnl::matmul(kept_->pd);
      }
    }
  }

  void run(const Run &r) const override {
    if (kept_) {
      if (std::shared_ptr<const KeptInput::Entry> b = kept_->input->get(r, 1, kept_->b)) {
        ExecArgs args{{DNNL_ARG_SRC, r.input(kept_->a, 0)}, {DNNL_ARG_WEIGHTS, b->memory}, {DNNL_ARG_DST, r.output(kept_->c, 0)}};
        if (has_bias_) args.emplace(DNNL_ARG_BIAS, r.input(kept_->bias, 2));
        r.execute(kept_->matmul, std::move(args));
        return;
      }
    }
    dnnl::memory c = c_.out(r, 0);
    ExecArgs args{
        {DNNL_ARG_SRC, a_.in(r, 0)}, {DNNL_ARG_WEIGHTS, b_.in(r, 1)}, {DNNL_ARG_DST, c}};
    if (has_bias_) args.emplace(DNNL_ARG_BIAS, bias_.in(r, 2));
    r.execute(matmul_, std::move(args));
    c_.finish(r, c, 0);
  }

 private:
  // The path for a b kept in another layout (see the top of this file).
  struct Kept {
    dnnl::matmul::primitive_desc pd;
    md a, bias, c;  // pd's, the user's layouts (members: a run's memory objects are keyed by their address)
    Bridge b;  // b_user to pd's weights layout, run once per weights version
    std::unique_ptr<KeptInput> input;
    dnnl::matmul matmul;
  };
  bool has_bias_ = false;
  Bridge a_, b_, bias_, c_;
  dnnl::matmul matmul_;
  std::unique_ptr<Kept> kept_;
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
