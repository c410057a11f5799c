// NNRT_OP_MATMUL_INT8: c[M, N] = fused(scale * scales[n] * sum_k (a[m, k] - zero_point) * b[k, n]
// + bias[n]) with a U8 or I8, b I8 and the sums exact in int32, over any strides. The oracle of the
// optimized backends' int8 products: plain loops, rows split over the pool (each row's sums are
// exact integers, so the result does not depend on the split).
#include <vector>

#include "op_kernel.h"
#include "quantized_common.h"
#include "strided.h"

namespace nnrt::reference {
namespace {

class MatmulInt8Kernel final : public OpKernel {
 public:
  explicit MatmulInt8Kernel(const OpSetup &setup) : exec_(setup.exec), desc_(setup.desc) {}

  void run(const nnrt_op_args &args) const override {
    if (desc_.inputs[0].dtype == NNRT_DTYPE_U8) product(input_ptr<uint8_t>(args, 0), args);
    else product(input_ptr<int8_t>(args, 0), args);
  }

 private:
  template <class A>
  void product(const A *a, const nnrt_op_args &args) const {
    const int8_t *b = input_ptr<int8_t>(args, 1);
    float *c = output_ptr<float>(args, 0);
    const nnrt_tensor_desc &at = desc_.inputs[0], &bt = desc_.inputs[1], &ct = desc_.outputs[0];
    const int64_t m = ct.dims[0], n = ct.dims[1], k = at.dims[1];
    const int32_t zero_point = desc_.attrs.zero_point;
    const Int8Epilogue epilogue = int8_epilogue(desc_, args);
    const int64_t grain = std::max<int64_t>(1, kCheapGrain / std::max<int64_t>(1, n * k));
    parallel_for(exec_, m, grain, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> acc(static_cast<size_t>(n));
      std::vector<float> row(static_cast<size_t>(n));
      for (int64_t i = begin; i < end; ++i) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t p = 0; p < k; ++p) {
          const int32_t av = static_cast<int32_t>(a[i * at.strides[0] + p * at.strides[1]]) - zero_point;
          if (av == 0) continue;
          const int8_t *brow = b + p * bt.strides[0];
          for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<int32_t>(brow[j * bt.strides[1]]);
        }
        epilogue.apply(acc.data(), 0, n, row.data());
        for (int64_t j = 0; j < n; ++j) c[i * ct.strides[0] + j * ct.strides[1]] = row[j];
      }
    });
  }

  Exec exec_;
  nnrt_op_desc desc_;
};

}  // namespace

KernelPtr create_matmul_int8(const OpSetup &setup) {
  const nnrt_op_desc &d = setup.desc;
  const nnrt_tensor_desc &a = d.inputs[0], &c = d.outputs[0];
  expect_rank(a, "input a", 2);
  expect_rank(c, "output c", 2);
  const int64_t m = c.dims[0], n = c.dims[1], k = a.dims[1];
  expect_dims(a, "input a ([M, K])", {m, k});
  expect_dims(d.inputs[1], "input b ([K, N])", {k, n});
  expect_int8_operands(d, "input a", "input b", n, k);
  return std::make_unique<MatmulInt8Kernel>(setup);
}

}  // namespace nnrt::reference
