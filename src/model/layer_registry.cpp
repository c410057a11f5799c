// Layer type names -> factories. Each factory lives in the layer's own file under layers/.
#include <map>

#include "core/error.h"
#include "model/layer.h"

namespace nnrt::model {

std::unique_ptr<Layer> make_dense(JsonReader &config);
std::unique_ptr<Layer> make_conv2d(JsonReader &config);
std::unique_ptr<Layer> make_conv2d_transpose(JsonReader &config);
std::unique_ptr<Layer> make_maxpool2d(JsonReader &config);
std::unique_ptr<Layer> make_avgpool2d(JsonReader &config);
std::unique_ptr<Layer> make_global_avgpool2d(JsonReader &config);
std::unique_ptr<Layer> make_global_maxpool2d(JsonReader &config);
std::unique_ptr<Layer> make_batchnorm(JsonReader &config);
std::unique_ptr<Layer> make_layer_norm(JsonReader &config);
std::unique_ptr<Layer> make_rms_norm(JsonReader &config);
std::unique_ptr<Layer> make_multi_head_attention(JsonReader &config);
std::unique_ptr<Layer> make_position_embedding(JsonReader &config);
std::unique_ptr<Layer> make_dropout(JsonReader &config);
std::unique_ptr<Layer> make_activation(JsonReader &config);
std::unique_ptr<Layer> make_flatten(JsonReader &config);
std::unique_ptr<Layer> make_reshape(JsonReader &config);
std::unique_ptr<Layer> make_add(JsonReader &config);
std::unique_ptr<Layer> make_concat(JsonReader &config);
std::unique_ptr<Layer> make_embedding(JsonReader &config);
std::unique_ptr<Layer> make_lstm(JsonReader &config);
std::unique_ptr<Layer> make_output(JsonReader &config);
std::unique_ptr<Layer> make_binary(JsonReader &config);
std::unique_ptr<Layer> make_clip(JsonReader &config);
std::unique_ptr<Layer> make_reduce(JsonReader &config);
std::unique_ptr<Layer> make_softmax(JsonReader &config);
std::unique_ptr<Layer> make_transpose(JsonReader &config);
std::unique_ptr<Layer> make_slice(JsonReader &config);

std::unique_ptr<Layer> make_layer(const std::string &type, JsonReader &config) {
  static const std::map<std::string, LayerFactory> factories = {
      {"dense", make_dense},
      {"conv2d", make_conv2d},
      {"conv2d_transpose", make_conv2d_transpose},
      {"maxpool2d", make_maxpool2d},
      {"avgpool2d", make_avgpool2d},
      {"global_avgpool2d", make_global_avgpool2d},
      {"global_maxpool2d", make_global_maxpool2d},
      {"batchnorm", make_batchnorm},
      {"layer_norm", make_layer_norm},
      {"rms_norm", make_rms_norm},
      {"multi_head_attention", make_multi_head_attention},
      {"position_embedding", make_position_embedding},
      {"dropout", make_dropout},
      {"activation", make_activation},
      {"flatten", make_flatten},
      {"reshape", make_reshape},
      {"add", make_add},
      {"concat", make_concat},
      {"embedding", make_embedding},
      {"lstm", make_lstm},
      {"output", make_output},
      {"binary", make_binary},
      {"clip", make_clip},
      {"reduce", make_reduce},
      {"softmax", make_softmax},
      {"transpose", make_transpose},
      {"slice", make_slice},
  };
  auto it = factories.find(type);
  if (it == factories.end()) {
    std::string known;
    for (const auto &f : factories) known += (known.empty() ? "" : ", ") + f.first;
    fail(NNRT_ERR_INVALID_ARGUMENT, config.where(), ".type: unknown layer type \"", type, "\" (expected one of: ", known,
         ")");
  }
  return it->second(config);
}

}  // namespace nnrt::model
