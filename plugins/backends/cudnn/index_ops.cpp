// ARGREDUCE, GATHER and SCATTER_ADD as CUDA kernels (kernels.h), with the reference backend's
// semantics through the shared rules of kernels/index_ops.h. GATHER and SCATTER_ADD check every
// index on the device before anything is written (one small copy back and a wait); an index
// outside the table is NNRT_ERR_INVALID_ARGUMENT naming its position and value, as on the CPU.
// SCATTER_ADD scans the indices in order without atomics (deterministic, bit-identical to the
// reference backend), except for large tables outside deterministic mode, where it adds with
// atomics (scatter_path.h).
#include <cstring>

#include "kernels.h"
#include "nnrt/kernels/dtype_info.h"
#include "ops.h"
#include "scatter_path.h"

namespace nnrt::cudnn {

namespace {

bool index_dtype(int32_t dtype) { return dtype == NNRT_DTYPE_I32 || dtype == NNRT_DTYPE_I64; }
bool numeric(int32_t dtype) {
  return is_float(dtype) || dtype == NNRT_DTYPE_I32 || dtype == NNRT_DTYPE_I64 || dtype == NNRT_DTYPE_U8;
}

// "" when `rows` is [...indices dims, width].
std::string check_rows(const nnrt_tensor_desc &rows, const char *name, const nnrt_tensor_desc &indices,
                       int64_t width) {
  bool ok = rows.ndim == indices.ndim + 1 && rows.dims[indices.ndim] == width;
  for (int d = 0; ok && d < indices.ndim; ++d) ok = rows.dims[d] == indices.dims[d];
  return ok ? "" : std::string(name) + " must have the dims of indices followed by the table's width";
}

std::string check_indices_desc(const nnrt_tensor_desc &indices) {
  if (!index_dtype(indices.dtype)) return "indices must be I32 or I64";
  if (indices.ndim >= NNRT_MAX_DIMS) return "indices have too many dims for the rows to fit";
  return "";
}

class ArgReduceOp final : public Op {
 public:
  explicit ArgReduceOp(const nnrt_op_desc &d) : alg_(d.attrs.alg), dtype_(d.inputs[0].dtype) {
    const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
    const int64_t *strides[2] = {y.strides, x.strides};
    std::memset(&lines_.outer, 0, sizeof lines_.outer);
    lines_.count = kernels::make_strided_index<2>(y.ndim, y.dims, strides, &lines_.outer);
    lines_.length = x.dims[d.attrs.axis];
    lines_.stride = x.strides[d.attrs.axis];
  }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    check_cuda(gpu::argreduce(alg_, dtype_, static_cast<int64_t *>(a.outputs[0]), a.inputs[0], lines_, s),
               "argreduce kernel");
  }

 private:
  int32_t alg_, dtype_;
  gpu::ArgLines lines_;
};

// GATHER (rows = y, table = the table input) and SCATTER_ADD (rows = dy, table = dtable).
class IndexRowsOp final : public Op {
 public:
  IndexRowsOp(const nnrt_op_desc &d, bool deterministic)
      : gather_(d.kind == NNRT_OP_GATHER), dtype_(d.outputs[0].dtype) {
    const nnrt_tensor_desc &indices = d.inputs[1];
    const nnrt_tensor_desc &rows = gather_ ? d.outputs[0] : d.inputs[0];
    const nnrt_tensor_desc &table = gather_ ? d.inputs[0] : d.outputs[0];
    indices_ = indices;
    const int64_t *strides[2] = {indices.strides, rows.strides};
    std::memset(&r_.walk, 0, sizeof r_.walk);
    r_.positions = kernels::make_strided_index<2>(indices.ndim, indices.dims, strides, &r_.walk);
    r_.index_dtype = indices.dtype;
    r_.rows = table.dims[0];
    r_.width = table.dims[1];
    r_.table_row = table.strides[0];
    r_.table_col = table.strides[1];
    r_.rows_col = rows.strides[rows.ndim - 1];
    atomic_ = !gather_ && scatter_add_path(deterministic, dtype_, r_.rows, r_.width, r_.positions) ==
                              ScatterAddPath::kAtomic;
  }
  size_t workspace_bytes() const override { return sizeof(unsigned long long); }
  void run(const nnrt_op_args &a, cudaStream_t s) const override {
    const void *indices = a.inputs[1];
    check_all(indices, static_cast<unsigned long long *>(a.workspace), s);
    if (gather_) {
      check_cuda(gpu::gather(static_cast<int>(kernels::dtype_size(dtype_)), r_, a.outputs[0], a.inputs[0], indices, s), "gather kernel");
    } else if (atomic_) {
      check_cuda(gpu::scatter_add_atomic(dtype_, r_, a.outputs[0], a.inputs[0], indices, s),
                 "scatter-add kernel (atomic)");
    } else {
      check_cuda(gpu::scatter_add(dtype_, r_, a.outputs[0], a.inputs[0], indices, s), "scatter-add kernel");
    }
  }

 private:
  void check_all(const void *indices, unsigned long long *first_bad, cudaStream_t s) const {
    if (r_.positions == 0) return;
    unsigned long long bad = ~0ull;
    check_cuda(cudaMemsetAsync(first_bad, 0xff, sizeof bad, s), "clear the index check");
    check_cuda(gpu::check_indices(r_, indices, first_bad, s), "index check kernel");
    check_cuda(cudaMemcpyAsync(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost, s), "read the index check");
    check_cuda(cudaStreamSynchronize(s), "wait for the index check");
    if (bad == ~0ull) return;
    const int64_t position = static_cast<int64_t>(bad);
    int64_t o[2];
    kernels::strided_offsets(r_.walk, position, o);
    int64_t value = 0;
    if (r_.index_dtype == NNRT_DTYPE_I32) {
      int32_t v32 = 0;
      check_cuda(cudaMemcpy(&v32, static_cast<const int32_t *>(indices) + o[0], sizeof v32, cudaMemcpyDeviceToHost),
                 "read the bad index");
      value = v32;
    } else {
      check_cuda(cudaMemcpy(&value, static_cast<const int64_t *>(indices) + o[0], sizeof value,
                            cudaMemcpyDeviceToHost),
                 "read the bad index");
    }
    throw Failure(NNRT_ERR_INVALID_ARGUMENT, "indices" + position_text(position) + " = " + std::to_string(value) +
                                                 " is outside the table's rows [0, " + std::to_string(r_.rows) + ")");
  }

  // "[i, j]": the coordinates of a row-major position in the index tensor.
  std::string position_text(int64_t position) const {
    int64_t at[NNRT_MAX_DIMS];
    for (int d = indices_.ndim - 1; d >= 0; --d) {
      at[d] = position % indices_.dims[d];
      position /= indices_.dims[d];
    }
    std::string t = "[";
    for (int d = 0; d < indices_.ndim; ++d) t += (d ? ", " : "") + std::to_string(at[d]);
    return t + "]";
  }

  bool gather_;
  bool atomic_ = false;  // SCATTER_ADD with atomics
  int32_t dtype_;
  nnrt_tensor_desc indices_;
  gpu::IndexRows r_;
};

}  // namespace

std::string index_refusal(const nnrt_op_desc &d) {
  std::string e = check_counts(d, d.kind == NNRT_OP_ARGREDUCE ? 1 : 2, d.kind == NNRT_OP_ARGREDUCE ? 1 : 2, 1, 1);
  if (!e.empty()) return e;
  if (d.kind == NNRT_OP_ARGREDUCE) {
    const nnrt_tensor_desc &x = d.inputs[0], &y = d.outputs[0];
    if (d.attrs.alg != NNRT_ARG_MAX && d.attrs.alg != NNRT_ARG_MIN) return "unknown argreduce alg";
    if (!numeric(x.dtype)) return "argreduce needs a numeric x";
    if (y.dtype != NNRT_DTYPE_I64) return "argreduce's y must be I64";
    if (d.attrs.axis < 0 || d.attrs.axis >= x.ndim) return "the axis is outside x's dims";
    if (y.ndim != x.ndim) return "y must have x's rank";
    for (int i = 0; i < x.ndim; ++i)
      if (y.dims[i] != (i == d.attrs.axis ? 1 : x.dims[i])) return "y's dims are not x's with 1 along the axis";
    if (x.dims[d.attrs.axis] == 0 && element_count(y) > 0) return "an arg-reduction of an empty line has no index";
    return "";
  }
  const nnrt_tensor_desc &indices = d.inputs[1];
  if (!(e = check_indices_desc(indices)).empty()) return e;
  if (d.kind == NNRT_OP_GATHER) {
    const nnrt_tensor_desc &table = d.inputs[0], &y = d.outputs[0];
    if (table.ndim != 2) return "the table must be [V, D]";
    if (y.dtype != table.dtype) return "y must have the table's dtype";
    return check_rows(y, "y", indices, table.dims[1]);
  }
  const nnrt_tensor_desc &dy = d.inputs[0], &dtable = d.outputs[0];
  if (dtable.ndim != 2) return "dtable must be [V, D]";
  if (!is_float(dtable.dtype)) return "scatter-add needs a float dtable";
  if (dy.dtype != dtable.dtype) return "dy must have dtable's dtype";
  return check_rows(dy, "dy", indices, dtable.dims[1]);
}

std::unique_ptr<Op> create_index_op(const nnrt_op_desc &d, bool deterministic) {
  if (d.kind == NNRT_OP_ARGREDUCE) return std::make_unique<ArgReduceOp>(d);
  return std::make_unique<IndexRowsOp>(d, deterministic);
}

}  // namespace nnrt::cudnn
