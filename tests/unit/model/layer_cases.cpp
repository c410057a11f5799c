#include "layer_cases.h"

#include "layer_check.h"
#include "model/layer.h"

namespace nnrt::model::testing {

namespace {

std::vector<LayerCase> all_cases() {
  using K = InputKind;
  std::vector<LayerCase> c = {
      // dense: identity, fused (relu) and unfused (gelu, softmax) activations, no bias, a rank-3 input
      {"dense", R"({"type": "dense", "units": 4})", {{5}}, 3},
      {"dense_relu_fused", R"({"type": "dense", "units": 4, "activation": "relu"})", {{5}}, 3},
      {"dense_gelu", R"({"type": "dense", "units": 4, "activation": "gelu"})", {{5}}, 3},
      {"dense_softmax", R"({"type": "dense", "units": 4, "activation": "softmax"})", {{5}}, 3},
      {"dense_no_bias_image_input", R"({"type": "dense", "units": 3, "bias": false})", {{2, 2, 3}}, 2},
      {"dense_per_token", R"({"type": "dense", "units": 5, "flatten": false, "activation": "gelu"})", {{4, 3}}, 2},
      {"dense_per_position_relu", R"({"type": "dense", "units": 2, "flatten": false, "activation": "relu"})",
       {{2, 3, 4}}, 2},

      // conv2d
      {"conv2d", R"({"type": "conv2d", "filters": 3, "kernel": 3})", {{2, 5, 5}}},
      {"conv2d_stride_padding", R"({"type": "conv2d", "filters": 2, "kernel": 3, "stride": 2, "padding": 1})",
       {{2, 6, 6}}},
      {"conv2d_dilation_same", R"({"type": "conv2d", "filters": 2, "kernel": 3, "dilation": 2, "padding": "same"})",
       {{2, 6, 6}}},
      {"conv2d_groups", R"({"type": "conv2d", "filters": 4, "kernel": [2, 3], "groups": 2})", {{4, 4, 5}}},
      {"conv2d_asymmetric_padding",
       R"({"type": "conv2d", "filters": 2, "kernel": 3, "stride": [1, 2], "padding": [1, 0, 2, 1]})", {{2, 5, 6}}},
      {"conv2d_relu_fused", R"({"type": "conv2d", "filters": 3, "kernel": 3, "activation": "relu"})", {{2, 5, 5}}},
      {"conv2d_tanh", R"({"type": "conv2d", "filters": 3, "kernel": 3, "activation": "tanh"})", {{2, 5, 5}}},
      {"conv2d_gelu_unfused", R"({"type": "conv2d", "filters": 3, "kernel": 3, "activation": "gelu"})", {{2, 5, 5}}},
      {"conv2d_elu_no_bias", R"({"type": "conv2d", "filters": 2, "kernel": 2, "activation": "elu", "bias": false})",
       {{2, 4, 4}}},

      // conv2d_transpose (the adjoint of conv2d: PyTorch's ConvTranspose2d)
      {"conv2d_transpose", R"({"type": "conv2d_transpose", "filters": 3, "kernel": 3})", {{2, 4, 4}}},
      {"conv2d_transpose_stride_output_padding",
       R"({"type": "conv2d_transpose", "filters": 2, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1})",
       {{2, 3, 3}}},
      {"conv2d_transpose_dilation_asymmetric_padding",
       R"({"type": "conv2d_transpose", "filters": 2, "kernel": 3, "stride": [1, 2], "dilation": 2, "padding": [1, 0, 2, 1]})",
       {{2, 4, 5}}},
      {"conv2d_transpose_groups", R"({"type": "conv2d_transpose", "filters": 4, "kernel": [2, 3], "groups": 2})",
       {{4, 3, 3}}},
      {"conv2d_transpose_relu", R"({"type": "conv2d_transpose", "filters": 3, "kernel": 2, "stride": 2, "activation": "relu"})",
       {{2, 3, 3}}},
      {"conv2d_transpose_gelu_no_bias",
       R"({"type": "conv2d_transpose", "filters": 2, "kernel": 3, "activation": "gelu", "bias": false})", {{2, 3, 3}}},

      // pooling
      {"maxpool2d", R"({"type": "maxpool2d", "kernel": 2})", {{2, 5, 5}}, 2, K::kDistinct},
      {"maxpool2d_overlapping_padded", R"({"type": "maxpool2d", "kernel": 3, "stride": 2, "padding": 1})",
       {{2, 5, 5}}, 2, K::kDistinct},
      {"avgpool2d", R"({"type": "avgpool2d", "kernel": 2})", {{2, 5, 5}}},
      {"avgpool2d_padding_counted",
       R"({"type": "avgpool2d", "kernel": 3, "stride": 2, "padding": 1, "count_include_pad": true})", {{2, 5, 5}}},
      {"avgpool2d_padding_not_counted",
       R"({"type": "avgpool2d", "kernel": 3, "stride": 2, "padding": 1, "count_include_pad": false})", {{2, 5, 5}}},
      {"global_avgpool2d", R"({"type": "global_avgpool2d"})", {{3, 4, 5}}},
      {"global_maxpool2d", R"({"type": "global_maxpool2d"})", {{3, 4, 5}}, 2, K::kDistinct},

      // shape
      {"flatten", R"({"type": "flatten"})", {{2, 3, 2}}},
      {"reshape", R"({"type": "reshape", "shape": [3, -1]})", {{2, 6}}},
      {"reshape_to_image", R"({"type": "reshape", "shape": [2, 2, 3]})", {{12}}},

      // several inputs
      {"add", R"({"type": "add"})", {{2, 3}, {2, 3}, {2, 3}}},
      {"concat_channels", R"({"type": "concat"})", {{2, 3, 3}, {1, 3, 3}}},
      {"concat_last_axis", R"({"type": "concat", "axis": -1})", {{2, 3, 1}, {2, 3, 2}, {2, 3, 1}}},
      {"concat_features", R"({"type": "concat", "axis": 0})", {{3}, {2}}, 3},

      // matmul (numpy's: the dims before the last two broadcast), of two inputs or with a constant
      {"binary_matmul_broadcast", R"({"type": "binary", "op": "matmul"})", {{2, 3, 4}, {1, 4, 2}}},
      {"binary_matmul_constant", R"({"type": "binary", "op": "matmul", "constant": [4, 3]})", {{2, 3, 4}}},
      {"binary_matmul_constant_first", R"({"type": "binary", "op": "matmul", "constant": [2, 2, 3],
                                             "constant_first": true})", {{3, 4}}},

      // normalisation and regularisation
      {"batchnorm_features", R"({"type": "batchnorm"})", {{4}}, 5},
      {"batchnorm_images", R"({"type": "batchnorm", "eps": 0.001, "momentum": 0.2})", {{3, 2, 3}}},
      {"layer_norm", R"({"type": "layer_norm"})", {{6}}, 3},
      {"layer_norm_two_dims_no_bias", R"({"type": "layer_norm", "normalized_dims": 2, "bias": false, "eps": 0.001})",
       {{2, 3, 4}}},
      {"layer_norm_no_affine", R"({"type": "layer_norm", "affine": false})", {{3, 5}}},
      {"rms_norm", R"({"type": "rms_norm"})", {{4, 6}}},
      {"rms_norm_bias_all_dims", R"({"type": "rms_norm", "normalized_dims": 2, "bias": true})", {{3, 4}}},
      {"multi_head_attention", R"({"type": "multi_head_attention", "heads": 2})", {{3, 4}}},
      {"multi_head_attention_causal_no_bias", R"({"type": "multi_head_attention", "heads": 3, "causal": true,
                                                 "bias": false})", {{4, 6}}},
      {"multi_head_attention_one_head_one_token", R"({"type": "multi_head_attention", "heads": 1})", {{1, 3}}, 3},
      {"position_embedding", R"({"type": "position_embedding"})", {{4, 3}}},
      {"position_embedding_sinusoidal", R"({"type": "position_embedding", "sinusoidal": true})", {{5, 6}}},
      {"dropout", R"({"type": "dropout", "rate": 0.3})", {{4, 5}}},

      // sequences
      {"embedding", R"({"type": "embedding", "vocab": 7, "units": 3})", {{5}}, 3, K::kIndices, 7},
      {"embedding_float_indices", R"({"type": "embedding", "vocab": 7, "units": 3})", {{4}}, 2, K::kFloatIndices, 7},
      {"embedding_scalar_index", R"({"type": "embedding", "vocab": 4, "units": 2})", {Shape{}}, 5, K::kIndices, 4},
      {"lstm", R"({"type": "lstm", "units": 3})", {{4, 2}}},
      {"lstm_sequences", R"({"type": "lstm", "units": 3, "return_sequences": true})", {{4, 2}}},
      {"lstm_one_step_custom_init", R"({"type": "lstm", "units": 2, "init": "xavier"})", {{1, 3}}, 3},
      // several sequences per example ([B, T, F], as an ONNX LSTM imported as one example)
      {"lstm_sequences_per_example", R"({"type": "lstm", "units": 3, "return_sequences": true})", {{2, 4, 2}}},
      {"lstm_last_per_example", R"({"type": "lstm", "units": 2})", {{3, 2, 3}}},
      {"slice", R"({"type": "slice", "axis": 1, "start": 1, "length": 2})", {{3, 4}}},
      {"slice_last_step", R"({"type": "slice", "axis": 0, "start": 3})", {{4, 3}}, 3},
  };

  // activation: every function, over features and (softmax along the channels) over images
  for (const char *a : {"identity", "relu", "leaky_relu", "elu", "gelu", "sigmoid", "tanh", "softmax", "log_softmax",
                        "relu6", "gelu_tanh", "silu", "hardswish", "hardsigmoid", "softplus", "erf"}) {
    c.push_back({std::string("activation_") + a, std::string(R"({"type": "activation", "activation": ")") + a + "\"}",
                 {{5}}, 3});
  }
  c.push_back({"activation_leaky_relu_alpha", R"({"type": "activation", "activation": "leaky_relu", "alpha": 0.2})",
               {{5}}, 3});
  c.push_back({"activation_swish_alpha", R"({"type": "activation", "activation": "swish", "alpha": 1.5})", {{5}}, 3});
  c.push_back({"activation_hardsigmoid_alpha_beta",
               R"({"type": "activation", "activation": "hardsigmoid", "alpha": 0.2, "beta": 0.4})", {{5}}, 3});
  // Activations a convolution or dense layer applies itself (fused at inference).
  c.push_back({"conv2d_silu", R"({"type": "conv2d", "filters": 3, "kernel": 3, "activation": "silu"})", {{2, 5, 5}}});
  c.push_back({"conv2d_depthwise_hardswish",
               R"({"type": "conv2d", "filters": 2, "kernel": 3, "groups": 2, "padding": 1, "activation": "hardswish"})",
               {{2, 4, 4}}});
  c.push_back({"dense_hardsigmoid", R"({"type": "dense", "units": 4, "activation": "hardsigmoid"})", {{5}}, 3});
  c.push_back({"activation_elu_alpha", R"({"type": "activation", "activation": "elu", "alpha": 0.5})", {{5}}, 3});
  c.push_back({"activation_softmax_images", R"({"type": "activation", "activation": "softmax"})", {{3, 2, 2}}});
  c.push_back({"activation_log_softmax_images", R"({"type": "activation", "activation": "log_softmax"})", {{3, 2, 2}}});
  return c;
}

}  // namespace

const std::vector<LayerCase> &layer_cases() {
  static const std::vector<LayerCase> cases = all_cases();
  return cases;
}

std::vector<Array> make_inputs(Context &ctx, const LayerCase &c, nnrt_dtype dtype, uint64_t seed) {
  std::vector<Array> inputs;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    Shape shape = with_batch(c.batch, c.inputs[k]);
    uint64_t s = seed * 7919 + k;
    switch (c.kind) {
      case InputKind::kNormal: inputs.push_back(random_normal(ctx, dtype, shape, s)); break;
      case InputKind::kDistinct: inputs.push_back(distinct_values(ctx, dtype, shape, s)); break;
      case InputKind::kIndices: inputs.push_back(random_indices(ctx, NNRT_DTYPE_I64, shape, c.vocab, s)); break;
      case InputKind::kFloatIndices: inputs.push_back(random_indices(ctx, dtype, shape, c.vocab, s)); break;
    }
  }
  return inputs;
}

}  // namespace nnrt::model::testing
