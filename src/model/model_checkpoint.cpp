// Model checkpoints: the config in the metadata and every parameter as an F32 tensor (I8 for a
// quantized layer's weight).
#include "core/dtype.h"
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
  const bool host = ctx->device()->host_memory();
  // A call with run options may stop between these stages (core/run_control.h).
  check_run();
  io::Checkpoint checkpoint = io::read_checkpoint(path, ctx->options().map_checkpoints);
  check_run();
  Json config = checkpoint_config(checkpoint, what);
  // Each parameter as the config builds it: a view of the file's mapping where the backend reads host
  // memory and the bytes are aligned for F32 (always, in files nnrt wrote: every tensor is F32 and
  // the data section starts at a multiple of 8), else a copy.
  auto from_checkpoint = [&](size_t, const Param &p) {
    check_run();
    const io::TensorRecord *r = checkpoint.find(p.name);
    if (!r) fail(NNRT_ERR_CORRUPT, what, ": the parameter \"", p.name, "\" that its config defines is missing");
    check_param_record(*r, p.spec, what);
    auto *bytes = const_cast<unsigned char *>(r->data());
    if (host && checkpoint.mapped && r->size() > 0 && reinterpret_cast<uintptr_t>(bytes) % dtype_size(p.spec.dtype) == 0) {
      return Array::lend(ctx->device(), p.spec.dtype, r->shape, contiguous_strides(r->shape), bytes, r->size(),
                         [keep = r->source] {});
    }
    Array value = new_param(*ctx, p.spec.dtype, r->shape);
    write_param(*ctx, value, r->data(), r->size());
    return value;
  };
  std::shared_ptr<Model> m(new Model);
  m->ctx_ = ctx;  // not moved: from_checkpoint uses ctx
  m->config_ = config;
  try {
    m->build(config, from_checkpoint);
  } catch (const Error &e) {
    // A config nnrt wrote was valid when saved: one that no longer builds is damage (or a file
    // written by hand), not a mistake of the caller's.
    nnrt_status s = e.status();
    if (s != NNRT_ERR_INVALID_ARGUMENT && s != NNRT_ERR_SHAPE && s != NNRT_ERR_DTYPE) throw;
    fail(NNRT_ERR_CORRUPT, what, ": its ", io::kConfigKey, " is not a valid model config: ", e.what());
  }
  match_params(checkpoint, *m, what);  // refuses tensors that are neither parameters nor optimizer state
  return m;
}

}  // namespace nnrt::model
