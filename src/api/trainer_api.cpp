// nnrt_trainer_*: create, step, fit, result, cancel, release.
#include "api/handles.h"

using namespace nnrt;
using namespace nnrt::api;

extern "C" {

nnrt_status nnrt_trainer_create(nnrt_model *m, const char *options_json, nnrt_trainer **out) {
  return guard("nnrt_trainer_create", [&] {
    check_handle(m, "m");
    require(out != nullptr, "out is NULL; expected a pointer to receive the trainer");
    train::TrainerOptions options = train::TrainerOptions::parse(options_json, m->impl->ctx());
    auto h = std::make_unique<nnrt_trainer>();
    h->impl = std::make_unique<train::Trainer>(m->impl, std::move(options));
    *out = h.release();
  });
}

void nnrt_trainer_release(nnrt_trainer *t) { release_handle(t, "nnrt_trainer_release"); }

nnrt_status nnrt_trainer_set_progress(nnrt_trainer *t, nnrt_progress_fn fn, void *user) {
  return guard("nnrt_trainer_set_progress", [&] {
    check_handle(t, "t");
    t->impl->set_progress(fn, user);
  });
}

nnrt_status nnrt_trainer_step(nnrt_trainer *t, const nnrt_array *x, const nnrt_array *y, double *loss) {
  return guard("nnrt_trainer_step", [&] {
    check_handle(t, "t");
    check_handle(x, "x");
    check_handle(y, "y");
    double l = t->impl->step(x->impl, y->impl);
    if (loss) *loss = l;
  });
}

nnrt_status nnrt_trainer_fit(nnrt_trainer *t, nnrt_dataset *train, nnrt_dataset *validation, int32_t epochs) {
  nnrt_status result = NNRT_OK;
  nnrt_status s = guard("nnrt_trainer_fit", [&] {
    check_handle(t, "t");
    check_handle(train, "train");
    if (validation) check_handle(validation, "validation");
    result = t->impl->fit(train->impl, validation ? validation->impl : nullptr, epochs);
    if (result == NNRT_ERR_CANCELLED) set_last_error("nnrt_trainer_fit: cancelled by nnrt_trainer_cancel");
  });
  return s != NNRT_OK ? s : result;
}

nnrt_status nnrt_trainer_result(const nnrt_trainer *t, char *buf, size_t cap, size_t *len) {
  return guard("nnrt_trainer_result", [&] {
    check_handle(t, "t");
    write_string(t->impl->result(), buf, cap, len);
  });
}

nnrt_status nnrt_trainer_cancel(nnrt_trainer *t) {
  return guard("nnrt_trainer_cancel", [&] {
    check_handle(t, "t");
    t->impl->cancel();
  });
}

nnrt_status nnrt_trainer_rank(const nnrt_trainer *t, int32_t *rank, int32_t *world_size) {
  return guard("nnrt_trainer_rank", [&] {
    check_handle(t, "t");
    if (rank) *rank = t->impl->rank();
    if (world_size) *world_size = t->impl->world_size();
  });
}

}  // extern "C"
