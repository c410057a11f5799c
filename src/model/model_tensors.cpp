#include "model/model_tensors.h"

#include "core/dtype.h"
#include "core/error.h"

namespace nnrt::model {

io::TensorRecord record_from_array(Context &ctx, const std::string &name, const Array &value) {
  const nnrt_dtype dtype = value.dtype() == NNRT_DTYPE_I8 ? NNRT_DTYPE_I8 : NNRT_DTYPE_F32;
  Array f32 = value.dtype() == dtype ? value : ops::cast(ctx, value, dtype);
  io::TensorRecord r;
  r.name = name;
  r.dtype = dtype;
  r.shape = f32.shape();
  r.bytes.resize(f32.nbytes());
  f32.copy_to_host(r.bytes.data(), r.bytes.size());
  return r;
}

Array array_from_record(Context &ctx, const io::TensorRecord &record) {
  return ops::from_host(ctx, record.dtype, record.shape, record.data(), record.size());
}

std::vector<io::TensorRecord> param_records(const Model &m) {
  std::vector<io::TensorRecord> records;
  for (const Param &p : m.params()) records.push_back(record_from_array(m.ctx(), p.name, p.value));
  return records;
}

Json checkpoint_config(const io::Checkpoint &checkpoint, const std::string &what) {
  auto it = checkpoint.metadata.find(io::kConfigKey);
  if (it == checkpoint.metadata.end()) {
    fail(NNRT_ERR_CORRUPT, what, ": __metadata__ has no \"", io::kConfigKey, "\" (the model config)");
  }
  try {
    return parse_json_object(it->second.c_str(), io::kConfigKey);
  } catch (const Error &e) {
    fail(NNRT_ERR_CORRUPT, what, ": ", e.what());
  } catch (const Json::exception &e) {  // e.g. a number too large for a double
    fail(NNRT_ERR_CORRUPT, what, ": ", io::kConfigKey, " is not valid JSON (", e.what(), ")");
  }
}

void check_record(const io::TensorRecord &record, const Shape &shape, const std::string &what, nnrt_dtype dtype) {
  if (record.dtype != dtype || record.shape != shape) {
    fail(NNRT_ERR_CORRUPT, what, ": tensor \"", record.name, "\" is ", io::safetensors_dtype_name(record.dtype), " ",
         to_string(record.shape), "; the model needs ", io::safetensors_dtype_name(dtype), " ", to_string(shape));
  }
}

void check_param_record(const io::TensorRecord &record, const ParamSpec &spec, const std::string &what) {
  check_record(record, spec.shape, what, spec.dtype);
  if (spec.dtype != NNRT_DTYPE_I8 || spec.max_abs == 0) return;
  const auto *values = reinterpret_cast<const int8_t *>(record.data());
  for (size_t i = 0; i < record.size(); ++i) {
    if (values[i] < -spec.max_abs || values[i] > spec.max_abs) {
      fail(NNRT_ERR_CORRUPT, what, ": tensor \"", record.name, "\" holds ", int(values[i]), " at element ", i,
           "; its layer's weights are within [-", spec.max_abs, ", ", spec.max_abs, "]");
    }
  }
}

std::vector<const io::TensorRecord *> match_params(const io::Checkpoint &checkpoint, const Model &m,
                                               const std::string &what) {
  std::vector<const io::TensorRecord *> matched;
  for (const Param &p : m.params()) {
    const io::TensorRecord *r = checkpoint.find(p.name);
    if (!r) fail(NNRT_ERR_CORRUPT, what, ": the parameter \"", p.name, "\" that its config defines is missing");
    check_param_record(*r, p.spec, what);
    matched.push_back(r);
  }
  std::string prefix = kOptimizerPrefix;
  for (const io::TensorRecord &t : checkpoint.tensors) {
    if (t.name.compare(0, prefix.size(), prefix) == 0 || m.find_param(t.name)) continue;
    fail(NNRT_ERR_CORRUPT, what, ": tensor \"", t.name,
         "\" is neither a parameter of the model its config defines nor optimizer state (\"optim.*\")");
  }
  return matched;
}

}  // namespace nnrt::model
