// Post-training static quantization (nnrt_model_quantize): an int8 copy of a float model,
// calibrated on examples.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/model.h"

namespace nnrt::model {

struct QuantizeOptions {
  int64_t batches = 8;      // calibration batches predicted; 0: the whole set
  int64_t batch_size = 32;
  int32_t weight_bits = 7;  // 7 or 8
  std::vector<std::string> exclude;  // layer names kept in float

  // From the options JSON of nnrt_model_quantize; throws NNRT_ERR_INVALID_ARGUMENT naming the key.
  static QuantizeOptions parse(const Json &options);
};

// Every dense and conv2d layer of m not excluded gets int8 weights (per output unit, symmetric)
// and an input quantization from the range its input took on the calibration batches; the rest
// is copied. Throws as nnrt_model_quantize documents.
std::shared_ptr<Model> quantize(const Model &m, const std::shared_ptr<const data::Dataset> &calibration,
                                const QuantizeOptions &options);

}  // namespace nnrt::model
