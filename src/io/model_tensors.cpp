#include "io/model_tensors.h"

#include "core/dtype.h"
#include "core/error.h"

namespace nnrt::io {

TensorRecord record_from_array(Context &ctx, const std::string &name, const Array &value) {
  Array f32 = value.dtype() == NNRT_DTYPE_F32 ? value : ops::cast(ctx, value, NNRT_DTYPE_F32);
  TensorRecord r;
  r.name = name;
  r.dtype = NNRT_DTYPE_F32;
  r.shape = f32.shape();
  r.bytes.resize(f32.nbytes());
  f32.copy_to_host(r.bytes.data(), r.bytes.size());
  return r;
}

Array array_from_record(Context &ctx, const TensorRecord &record) {
  return ops::from_host(ctx, record.dtype, record.shape, record.bytes.data(), record.bytes.size());
}

std::vector<TensorRecord> param_records(const model::Model &m) {
  std::vector<TensorRecord> records;
  for (const model::Param &p : m.params()) records.push_back(record_from_array(m.ctx(), p.name, p.value));
  return records;
}

Json checkpoint_config(const Checkpoint &checkpoint, const std::string &what) {
  auto it = checkpoint.metadata.find(kConfigKey);
  if (it == checkpoint.metadata.end()) {
    fail(NNRT_ERR_CORRUPT, what, ": __metadata__ has no \"", kConfigKey, "\" (the model config)");
  }
  try {
    return parse_json_object(it->second.c_str(), kConfigKey);
  } catch (const Error &e) {  // malformed, too deep, a key twice, a number beyond a double
    fail(NNRT_ERR_CORRUPT, what, ": ", e.what());
  }
}

void check_record(const TensorRecord &record, const Shape &shape, const std::string &what) {
  if (record.dtype != NNRT_DTYPE_F32 || record.shape != shape) {
    fail(NNRT_ERR_CORRUPT, what, ": tensor \"", record.name, "\" is ", safetensors_dtype_name(record.dtype), " ",
         to_string(record.shape), "; the model needs F32 ", to_string(shape));
  }
}

std::vector<const TensorRecord *> match_params(const Checkpoint &checkpoint, const model::Model &m,
                                               const std::string &what) {
  std::vector<const TensorRecord *> matched;
  for (const model::Param &p : m.params()) {
    const TensorRecord *r = checkpoint.find(p.name);
    if (!r) fail(NNRT_ERR_CORRUPT, what, ": the parameter \"", p.name, "\" that its config defines is missing");
    check_record(*r, p.value.shape(), what);
    matched.push_back(r);
  }
  std::string prefix = kOptimizerPrefix;
  for (const TensorRecord &t : checkpoint.tensors) {
    if (t.name.compare(0, prefix.size(), prefix) == 0 || m.find_param(t.name)) continue;
    fail(NNRT_ERR_CORRUPT, what, ": tensor \"", t.name,
         "\" is neither a parameter of the model its config defines nor optimizer state (\"optim.*\")");
  }
  return matched;
}

}  // namespace nnrt::io
