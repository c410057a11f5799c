// CONV2D, CONV2D_BACKWARD_DATA and CONV2D_BACKWARD_WEIGHTS through the cuDNN 9 backend (graph) API:
// at op creation a graph of one convolution operation is built (conv_params.h), cuDNN's
// heuristics rank the engine configurations (mode A, then the fallback list), and the first that
// engine_refusal allows, that finalizes into an execution plan and whose workspace is within the
// limit (an eighth of the device's memory, at most 1 GiB; else the plan needing least) is kept.
// A run copies staged operands into their packed buffers, executes the plan with a variant pack of
// the data pointers and the workspace the host gives, and copies a staged output back. The workspace holds cuDNN's
// own workspace, then one packed buffer per staged operand (zeroed first where the padding is
// written out in it), then, for an input gradient, a device flag.
//
// An input gradient (CONV2D_BACKWARD_DATA) from a filter with a NaN or infinite weight is not left
// to cuDNN: its engines compute dx as a convolution over dy with zeros inserted between strides and
// around it for the padding, and 0 * inf or 0 * NaN put NaN into dx elements that the weight never
// multiplies into (about one conformance case a seed on an H100, cuDNN 9.14). So a kernel flags a
// non-finite w on the device, and after cuDNN a second kernel recomputes dx element by element
// (kernels/conv2d.h, the CPU's products) when the flag is set and returns at once when it is not:
// two small launches a step and no host synchronization.
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "conv_params.h"
#include "kernels.h"
#include "ops.h"

namespace nnrt::cudnn {

namespace {

// One cuDNN backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    NNRT_CUDNN(cudnnBackendCreateDescriptor(type, &d_));
  }
  Desc(Desc &&o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc &operator=(Desc &&) = delete;
  Desc(const Desc &) = delete;
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  template <class T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T *values, int64_t count) {
    check_cudnn(cudnnBackendSetAttribute(d_, name, type, count, values), "cudnnBackendSetAttribute");
  }
  void set_desc(cudnnBackendAttributeName_t name, const Desc &other) {
    cudnnBackendDescriptor_t o = other.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o, 1);
  }
  void finalize() { check_cudnn(cudnnBackendFinalize(d_), "cudnnBackendFinalize"); }
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

enum Uid : int64_t { kX = 1, kW = 2, kY = 3 };

Desc tensor_desc(const CudnnTensor &t, Uid uid, const ConvParams &p) {
  Desc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  cudnnDataType_t type = p.data_type;
  int64_t id = uid, alignment = p.alignment;
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type, 1);
  d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, t.dims, 4);
  d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, t.strides, 4);
  d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id, 1);
  d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment, 1);
  d.finalize();
  return d;
}

// "" if the engine of `config` may run the convolution (engine_refusal), else why not.
std::string config_refusal(const Desc &config, const ConvParams &p, bool deterministic) {
  cudnnBackendDescriptor_t engine_handle = nullptr;
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  engine_handle = engine.get();
  int64_t n = 0;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                               &engine_handle) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
    return "engines whose numerical notes cuDNN does not give";
  return engine_refusal(p, notes, count, deterministic);
}

constexpr int64_t kBufferAlignment = 256;  // each packed buffer in the workspace starts on this

int64_t aligned(int64_t bytes) { return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment; }

class ConvOp final : public Op {
 public:
  ConvOp(const nnrt_backend_instance &inst, const nnrt_op_desc &d)
      : inst_(const_cast<nnrt_backend_instance &>(inst)), desc_(d) {
    std::string why = translate_conv(d, &p_);
    if (!why.empty()) throw Failure(NNRT_ERR_UNSUPPORTED, why);
    {
      // Building the plan uses the instance's cuDNN handle, which another thread's run may be
      // using (op creation runs outside the host's lock): a handle serves one thread at a time.
      std::lock_guard<std::mutex> lock(inst_.cudnn_mutex);
      build();
    }
    prepare_staging();
    prepare_epilogues();
    prepare_exact_input_gradient();
  }

  size_t workspace_bytes() const override {
    return static_cast<size_t>(desc_.kind == NNRT_OP_CONV2D_BACKWARD_DATA ? flag_offset_ + kBufferAlignment
                                                                          : workspace_ + staging_bytes_);
  }

  void run(const nnrt_op_args &a, cudaStream_t stream) const override {
    // The operands in the caller's layouts, by role: 0 x (or dx), 1 w (or dw), 2 y (or dy).
    void *own[3];
    void *in0 = const_cast<void *>(a.inputs[0]), *in1 = const_cast<void *>(a.inputs[1]);
    if (desc_.kind == NNRT_OP_CONV2D) {
      own[0] = in0, own[1] = in1, own[2] = a.outputs[0];
    } else if (desc_.kind == NNRT_OP_CONV2D_BACKWARD_DATA) {
      own[2] = in0, own[1] = in1, own[0] = a.outputs[0];
    } else {
      own[0] = in0, own[2] = in1, own[1] = a.outputs[0];
    }
    // What cuDNN reads and writes: the packed buffer of a staged operand.
    void *given[3] = {own[0], own[1], own[2]};
    const int32_t dtype = desc_.inputs[0].dtype;
    void *first[3] = {};  // where in the packed buffer the operand's first element goes
    int *nonfinite_w = nullptr;
    if (desc_.kind == NNRT_OP_CONV2D_BACKWARD_DATA) {
      nonfinite_w = reinterpret_cast<int *>(static_cast<char *>(a.workspace) + flag_offset_);
      check_cuda(cudaMemsetAsync(nonfinite_w, 0, sizeof(int), stream), "clear the non-finite flag");
      check_cuda(gpu::flag_nonfinite(dtype, a.inputs[1], w_index_, w_count_, nonfinite_w, stream),
                 "non-finite filter kernel");
    }
    for (const Staging &s : staging_) {
      given[s.role] = static_cast<char *>(a.workspace) + s.offset;
      first[s.role] = static_cast<char *>(given[s.role]) + s.first * p_.element_bytes;
      if (s.zero_bytes) check_cuda(cudaMemsetAsync(given[s.role], 0, s.zero_bytes, stream), "zero the padding");
      if (s.role != output_role_)
        check_cuda(gpu::copy(first[s.role], dtype, own[s.role], dtype, s.index, s.count, stream), "staging copy");
    }
    {
      // The handle is the instance's: its stream is set for this call only.
      std::lock_guard<std::mutex> lock(inst_.cudnn_mutex);
      NNRT_CUDNN(cudnnSetStream(inst_.cudnn, stream));
      Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      const int64_t uids[3] = {kX, kW, kY};
      void *workspace = a.workspace;
      pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, 3);
      pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, given, 3);
      pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace, 1);
      pack.finalize();
      NNRT_CUDNN(cudnnBackendExecute(inst_.cudnn, plan_->get(), pack.get()));
    }
    for (const Staging &s : staging_)
      if (s.role == output_role_)
        check_cuda(gpu::copy(own[s.role], dtype, first[s.role], dtype, s.index, s.count, stream), "staging copy");
    if (nonfinite_w)
      check_cuda(gpu::conv2d_backward_data_exact(dtype, geometry_, strides_, nonfinite_w, a.outputs[0], a.inputs[0],
                                                 a.inputs[1], stream),
                 "exact input gradient kernel");
    void *y = own[2];  // the epilogues work on y (or read dy) in the caller's layout
    if (p_.bias)
      check_cuda(gpu::binary(NNRT_BINARY_ADD, dtype, y, y, a.inputs[2], bias_index_, y_count_, stream), "bias kernel");
    if (p_.post_activation)
      check_cuda(gpu::unary(p_.post_activation, dtype, y, y, desc_.attrs.alpha, desc_.attrs.beta, act_index_,
                            y_count_, stream),
                 "activation kernel");
    if (p_.bias_gradient)
      check_cuda(gpu::reduce(NNRT_REDUCE_SUM, dtype, a.outputs[1], y, db_lines_, stream), "bias gradient kernel");
  }

 private:
  void build() {
    const ConvParams &p = p_;
    keep_.reserve(8);  // tx, tw, ty and op are referred to while more are added: no reallocation
    keep_.push_back(tensor_desc(p.x, kX, p));
    keep_.push_back(tensor_desc(p.w, kW, p));
    keep_.push_back(tensor_desc(p.y, kY, p));
    const Desc &tx = keep_[0], &tw = keep_[1], &ty = keep_[2];

    Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t compute = p.compute_type;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t spatial = 2;
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute, 1);
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode, 1);
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial, 1);
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, p.dilation, 2);
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, p.stride, 2);
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, p.pre_padding, 2);
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, p.post_padding, 2);
    conv.finalize();

    // alpha 1, beta 0, in the compute type's width.
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = p.compute_type == CUDNN_DATA_DOUBLE;
    cudnnBackendAttributeType_t scale_type = f64 ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
    const void *one = f64 ? static_cast<const void *>(&one_d) : &one_f;
    const void *zero = f64 ? static_cast<const void *>(&zero_d) : &zero_f;

    Desc *op = nullptr;
    if (desc_.kind == NNRT_OP_CONV2D) {
      keep_.emplace_back(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      op = &keep_.back();
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, tx);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, tw);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, ty);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scale_type, one, 1);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scale_type, zero, 1);
    } else if (desc_.kind == NNRT_OP_CONV2D_BACKWARD_DATA) {
      keep_.emplace_back(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
      op = &keep_.back();
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, tx);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, tw);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, ty);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, scale_type, one, 1);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, scale_type, zero, 1);
    } else {
      keep_.emplace_back(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
      op = &keep_.back();
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, tx);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, tw);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, ty);
      op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, scale_type, one, 1);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, scale_type, zero, 1);
    }
    op->finalize();

    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnBackendDescriptor_t ops[1] = {op->get()};
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops, 1);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &inst_.cudnn, 1);
    graph.finalize();

    std::vector<Desc> configs = ranked_configs(graph, CUDNN_HEUR_MODE_A);
    for (Desc &config : ranked_configs(graph, CUDNN_HEUR_MODE_FALLBACK)) configs.push_back(std::move(config));
    std::string last = "no engine configuration";
    // The first plan, in cuDNN's order, whose workspace fits the limit; else the one that needs
    // the least (an engine may ask for gigabytes that the run's allocation would then fail on).
    const int64_t limit = workspace_limit();
    std::unique_ptr<Desc> smallest_plan;
    int64_t smallest = -1;
    size_t smallest_config = 0;
    for (size_t i = 0; i < configs.size(); ++i) {
      Desc &config = configs[i];
      std::string refusal = config_refusal(config, p, inst_.deterministic);
      if (!refusal.empty()) {
        last = refusal;
        continue;
      }
      Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &inst_.cudnn, 1);
      plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
      cudnnStatus_t s = plan.try_finalize();
      if (s != CUDNN_STATUS_SUCCESS) {
        last = cudnnGetErrorString(s);
        continue;
      }
      int64_t n = 0, bytes = 0;
      NNRT_CUDNN(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                          &n, &bytes));
      if (bytes <= limit) {
        workspace_ = bytes;
        keep_.push_back(std::move(config));
        plan_ = std::make_unique<Desc>(std::move(plan));
        return;
      }
      last = "every engine's workspace is over the limit of " + std::to_string(limit) + " bytes";
      if (smallest < 0 || bytes < smallest) {
        smallest = bytes;
        smallest_config = i;
        smallest_plan = std::make_unique<Desc>(std::move(plan));
      }
    }
    if (smallest_plan) {
      workspace_ = smallest;
      keep_.push_back(std::move(configs[smallest_config]));
      plan_ = std::move(smallest_plan);
      return;
    }
    throw Failure(NNRT_ERR_UNSUPPORTED, "cuDNN has no execution plan for this convolution (" + last + ")");
  }

  // The most workspace a plan may ask for before a smaller one is preferred: an eighth of the
  // device's memory, at most 1 GiB.
  static int64_t workspace_limit() {
    constexpr int64_t kMost = int64_t(1) << 30;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      cudaGetLastError();
      return kMost;
    }
    const int64_t eighth = static_cast<int64_t>(total_bytes / 8);
    return eighth < kMost ? eighth : kMost;
  }

  std::vector<Desc> ranked_configs(const Desc &graph, cudnnBackendHeurMode_t mode) {
    std::vector<Desc> configs;
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode, 1);
    if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) return configs;
    int64_t count = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                 nullptr) != CUDNN_STATUS_SUCCESS || count <= 0)
      return configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(configs.back().get());
    }
    int64_t got = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                 raw.data()) != CUDNN_STATUS_SUCCESS)
      return {};
    while (static_cast<int64_t>(configs.size()) > got) configs.pop_back();
    return configs;
  }

  // A packed buffer in the workspace, after cuDNN's own, for each staged operand, and its copy's
  // index map.
  void prepare_staging() {
    output_role_ = desc_.kind == NNRT_OP_CONV2D ? 2 : desc_.kind == NNRT_OP_CONV2D_BACKWARD_DATA ? 0 : 1;
    const CudnnTensor *roles[3] = {&p_.x, &p_.w, &p_.y};
    int64_t offset = aligned(workspace_);
    for (int role = 0; role < 3; ++role) {
      const CudnnTensor &t = *roles[role];
      if (!t.staged) continue;
      Staging s;
      s.role = role;
      s.offset = offset;
      s.count = staging_index(t, role == output_role_, &s.index);
      s.first = t.first;
      if (t.zero_filled) s.zero_bytes = static_cast<size_t>(t.elements() * p_.element_bytes);
      offset += aligned(t.elements() * p_.element_bytes);
      staging_.push_back(s);
    }
    staging_bytes_ = staging_.empty() ? 0 : offset - workspace_;
  }

  // The bias, activation and bias-gradient kernels' index maps, over y (or dy).
  void prepare_epilogues() {
    const nnrt_tensor_desc &y = desc_.kind == NNRT_OP_CONV2D ? desc_.outputs[0] : desc_.inputs[1];
    if (p_.bias || p_.post_activation) {
      const nnrt_tensor_desc &b = desc_.inputs[p_.bias ? 2 : 0];
      const int64_t bias_strides[4] = {0, p_.bias ? b.strides[0] : 0, 0, 0};
      const int64_t *three[3] = {y.strides, y.strides, bias_strides};
      std::memset(&bias_index_, 0, sizeof bias_index_);
      y_count_ = kernels::make_strided_index<3>(4, y.dims, three, &bias_index_);
      const int64_t *two[2] = {y.strides, y.strides};
      std::memset(&act_index_, 0, sizeof act_index_);
      kernels::make_strided_index<2>(4, y.dims, two, &act_index_);
    }
    if (p_.bias_gradient) {
      const int64_t db_strides[4] = {0, desc_.outputs[1].strides[0], 0, 0};
      db_lines_ = reduce_lines(y, db_strides, 0xDu);  // sum over N, H, W
    }
  }

  // CONV2D_BACKWARD_DATA: the flag's place after the staging buffers, the index map of the scan of
  // w, and the geometry and strides of the exact kernel.
  void prepare_exact_input_gradient() {
    if (desc_.kind != NNRT_OP_CONV2D_BACKWARD_DATA) return;
    flag_offset_ = aligned(workspace_ + staging_bytes_);
    const nnrt_tensor_desc &dy = desc_.inputs[0], &w = desc_.inputs[1], &dx = desc_.outputs[0];
    const int64_t *one[1] = {w.strides};
    std::memset(&w_index_, 0, sizeof w_index_);
    w_count_ = kernels::make_strided_index<1>(4, w.dims, one, &w_index_);
    const nnrt_op_attrs &a = desc_.attrs;
    geometry_ = kernels::Conv2dGeometry{dx.dims[0], dx.dims[1], dx.dims[2], dx.dims[3], w.dims[0], w.dims[2],
                                        w.dims[3], dy.dims[2], dy.dims[3], a.groups, a.stride[0], a.stride[1],
                                        a.pad[0], a.pad[1], a.dilation[0], a.dilation[1]};
    for (int i = 0; i < 4; ++i) {
      strides_.dx[i] = dx.strides[i];
      strides_.dy[i] = dy.strides[i];
      strides_.w[i] = w.strides[i];
    }
  }

  nnrt_backend_instance &inst_;
  nnrt_op_desc desc_;
  ConvParams p_;
  std::vector<Desc> keep_;  // the descriptors the plan was built from
  std::unique_ptr<Desc> plan_;
  int64_t workspace_ = 0;  // cuDNN's
  struct Staging {
    int role = 0;  // 0 x (or dx), 1 w (or dw), 2 y (or dy)
    int64_t offset = 0, count = 0;
    int64_t first = 0;      // CudnnTensor::first
    size_t zero_bytes = 0;  // cleared before the copy (padding written out), or 0
    gpu::Index2 index{};
  };
  std::vector<Staging> staging_;
  int64_t staging_bytes_ = 0;  // the workspace beyond cuDNN's
  int output_role_ = 2;
  gpu::Index3 bias_index_{};
  gpu::Index2 act_index_{};
  int64_t y_count_ = 0;
  gpu::Lines<2> db_lines_{};
  int64_t flag_offset_ = 0;  // CONV2D_BACKWARD_DATA: the non-finite-filter flag in the workspace
  gpu::Index1 w_index_{};
  int64_t w_count_ = 0;
  kernels::Conv2dGeometry geometry_{};
  gpu::ConvStrides strides_{};
};

}  // namespace

std::string conv_refusal(const nnrt_op_desc &d) {
  ConvParams p;
  return translate_conv(d, &p);
}

std::unique_ptr<Op> create_conv_op(const nnrt_backend_instance &instance, const nnrt_op_desc &d) {
  return std::make_unique<ConvOp>(instance, d);
}

}  // namespace nnrt::cudnn
