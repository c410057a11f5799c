// transpose: permutes the dims of each example ("perm", a permutation of 0..rank-1; the batch dim
// stays first). The gradient is permuted back.
#include "model/layer.h"

namespace nnrt::model {
namespace {

class TransposeLayer : public Layer {
 public:
  std::vector<int64_t> perm;

  Shape build(const std::vector<Shape> &inputs) override {
    if (inputs.size() != 1) shape_error("takes one input, got ", inputs.size());
    const Shape &x = inputs[0];
    if (static_cast<int32_t>(perm.size()) != x.rank) {
      shape_error("perm has ", perm.size(), " dims for examples shaped ", to_string(x));
    }
    std::vector<bool> seen(perm.size(), false);
    Shape out = x;
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] < 0 || perm[i] >= x.rank || seen[perm[i]]) shape_error("perm is not a permutation of 0..", x.rank - 1);
      seen[perm[i]] = true;
      out[static_cast<int32_t>(i)] = x[static_cast<int32_t>(perm[i])];
    }
    return out;
  }

  std::vector<int64_t> batch_perm(bool inverse) const {
    std::vector<int64_t> p(perm.size() + 1);
    p[0] = 0;
    for (size_t i = 0; i < perm.size(); ++i) {
      if (inverse) p[perm[i] + 1] = static_cast<int64_t>(i) + 1;
      else p[i + 1] = perm[i] + 1;
    }
    return p;
  }

  Array forward(Pass &pass, const std::vector<Array> &in, const std::vector<Array> &, Saved &) const override {
    return ops::contiguous(pass.ctx, ops::transpose(in[0], batch_perm(false)));
  }

  void backward(Pass &pass, const std::vector<Array> &, const std::vector<Array> &, const Array &, const Saved &,
                const Array &dout, std::vector<Array> &din, std::vector<Array> &) const override {
    if (pass.needs_input_grad(0)) din[0] = ops::contiguous(pass.ctx, ops::transpose(dout, batch_perm(true)));
  }
};

}  // namespace

std::unique_ptr<Layer> make_transpose(JsonReader &config) {
  auto l = std::make_unique<TransposeLayer>();
  if (!config.has("perm")) fail(NNRT_ERR_INVALID_ARGUMENT, config.name("perm"), " is required");
  l->perm = config.get_int_list("perm", {});
  return l;
}

}  // namespace nnrt::model
