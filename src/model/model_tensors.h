// A model's config and parameters inside a checkpoint, both ways: what Model and Trainer
// checkpoints share. Parameters are stored as F32 tensors named like the parameters, in PyTorch's
// layouts, so the file loads into the equivalent PyTorch module.
#pragma once

#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "model/model.h"

namespace nnrt::model {

// The prefix of optimizer state tensors ("optim.<param>.state0"): the only tensors besides the
// parameters that a checkpoint may hold.
inline constexpr const char *kOptimizerPrefix = "optim.";

// An F32 host copy of an array (converted when it is another float type; I8, a quantized weight,
// stays I8), as a record.
io::TensorRecord record_from_array(Context &ctx, const std::string &name, const Array &value);

// A new array on the context's device holding an F32 record's values.
Array array_from_record(Context &ctx, const io::TensorRecord &record);

// Every parameter's current value as a record, in the model's order. The caller holds the model's
// lock (shared is enough).
std::vector<io::TensorRecord> param_records(const Model &m);

// nnrt.config parsed; throws NNRT_ERR_CORRUPT when it is missing or not a JSON object. `what`
// names the file in messages.
Json checkpoint_config(const io::Checkpoint &checkpoint, const std::string &what);

// The record of each of the model's parameters, in its order. Throws NNRT_ERR_CORRUPT naming the
// parameter when one is missing or is not F32 of the parameter's shape, or naming the tensor when
// the file holds one that is neither a parameter nor optimizer state.
std::vector<const io::TensorRecord *> match_params(const io::Checkpoint &checkpoint, const Model &m,
                                                   const std::string &what);

// Checks one tensor of a known dtype and shape; throws NNRT_ERR_CORRUPT saying what was expected.
void check_record(const io::TensorRecord &record, const Shape &shape, const std::string &what,
                  nnrt_dtype dtype = NNRT_DTYPE_F32);

// Checks a parameter's record against its spec: dtype, shape, and an I8 weight's range (max_abs).
void check_param_record(const io::TensorRecord &record, const ParamSpec &spec, const std::string &what);

}  // namespace nnrt::model
