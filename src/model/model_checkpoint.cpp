// Model checkpoints: the config in the metadata and every parameter as an F32 tensor.
#include "core/error.h"
#include "core/run_control.h"
#include "model/model.h"
#include "model/model_tensors.h"
#include "model/param_storage.h"

namespace nnrt::model {

void Model::save(const std::string &path) const {
  io::Checkpoint checkpoint;
  checkpoint.metadata[io::kConfigKey] = config_.dump(-1, ' ', false, Json::error_handler_t::replace);
  {
    // A consistent snapshot; the disk write happens after, so training is not held up by it.
    std::shared_lock<WriterPreferringSharedMutex> read(lock_);
    checkpoint.tensors = param_records(*this);
  }
  io::write_checkpoint(path, checkpoint);
}

std::shared_ptr<Model> Model::load(std::shared_ptr<Context> ctx, const std::string &path) {
  std::string what = cat("checkpoint '", path, "'");
  // A call with run options may stop between these stages (core/run_control.h).
  check_run();
  io::Checkpoint checkpoint = io::read_checkpoint(path);
  check_run();
  Json config = checkpoint_config(checkpoint, what);
  std::shared_ptr<Model> m;
  try {
    m = create(std::move(ctx), config);
  } catch (const Error &e) {
    // A config nnrt wrote was valid when saved: one that no longer builds is damage (or a file
    // written by hand), not a mistake of the caller's.
    nnrt_status s = e.status();
    if (s != NNRT_ERR_INVALID_ARGUMENT && s != NNRT_ERR_SHAPE && s != NNRT_ERR_DTYPE) throw;
    fail(NNRT_ERR_CORRUPT, what, ": its ", io::kConfigKey, " is not a valid model config: ", e.what());
  }
  std::vector<const io::TensorRecord *> records = match_params(checkpoint, *m, what);
  for (size_t i = 0; i < records.size(); ++i) {
    check_run();
    write_param(m->ctx(), m->params_[i].value, records[i]->bytes.data(), records[i]->bytes.size());
  }
  return m;
}

}  // namespace nnrt::model
