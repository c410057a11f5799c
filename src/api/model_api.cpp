// nnrt_model_*: create, share, quantize, predict, generate, summary, parameters, evaluate, release.
#include <algorithm>
#include <functional>

#include "api/handles.h"
#include "core/dtype.h"
#include "model/generate.h"
#include "model/quantize.h"

using namespace nnrt;
using namespace nnrt::api;

namespace {

const model::Param &find(const model::Model &m, const char *name) {
  require(name != nullptr, "name is NULL; expected a parameter name such as \"layer0.weight\"");
  if (const model::Param *p = m.find_param(name)) return *p;
  std::string names;
  for (const model::Param &p : m.params()) names += (names.empty() ? "" : ", ") + p.name;
  fail(NNRT_ERR_INVALID_ARGUMENT, "the model has no parameter \"", name, "\" (it has: ", names, ")");
}

}  // namespace

extern "C" {

nnrt_status nnrt_model_create(nnrt_context *ctx, const char *config_json, nnrt_model **out) {
  return guard("nnrt_model_create", [&] {
    check_handle(ctx, "ctx");
    require(config_json != nullptr, "config_json is NULL; expected a JSON model config");
    require(out != nullptr, "out is NULL; expected a pointer to receive the model");
    Json config = parse_json_object(config_json, "config");
    auto h = std::make_unique<nnrt_model>();
    h->impl = model::Model::create(ctx->impl, config);
    *out = h.release();
  });
}

nnrt_status nnrt_model_share(const nnrt_model *m, nnrt_model **out) {
  return guard("nnrt_model_share", [&] {
    check_handle(m, "m");
    require(out != nullptr, "out is NULL; expected a pointer to receive the model");
    auto h = std::make_unique<nnrt_model>();
    h->impl = m->impl->share();
    *out = h.release();
  });
}

nnrt_status nnrt_model_quantize(nnrt_model *m, nnrt_dataset *calibration, const char *options_json, nnrt_model **out) {
  return guard("nnrt_model_quantize", [&] {
    check_handle(m, "m");
    check_handle(calibration, "calibration");
    require(out != nullptr, "out is NULL; expected a pointer to receive the model");
    Json options = options_json ? parse_json_object(options_json, "options") : Json::object();
    auto h = std::make_unique<nnrt_model>();
    h->impl = model::quantize(*m->impl, calibration->impl, model::QuantizeOptions::parse(options));
    *out = h.release();
  });
}

void nnrt_model_release(nnrt_model *m) { release_handle(m, "nnrt_model_release"); }

nnrt_status nnrt_model_predict(nnrt_model *m, const nnrt_array *input, nnrt_array **output) {
  return nnrt_model_predict_ex(m, input, nullptr, output);
}

nnrt_status nnrt_model_predict_ex(nnrt_model *m, const nnrt_array *input, const nnrt_run_options *options,
                                  nnrt_array **output) {
  return guard(options ? "nnrt_model_predict_ex" : "nnrt_model_predict", [&] {
    check_handle(m, "m");
    check_handle(input, "input");
    require(output != nullptr, "output is NULL; expected a pointer to receive the result");
    RunScope run(run_control(options, "options"));
    auto h = std::make_unique<nnrt_array>();
    h->impl = m->impl->predict(input->impl);
    *output = h.release();
  });
}

nnrt_status nnrt_model_predict_into(nnrt_model *m, const nnrt_array *input, nnrt_array *output,
                                    const nnrt_run_options *options) {
  return guard("nnrt_model_predict_into", [&] {
    check_handle(m, "m");
    check_handle(input, "input");
    check_handle(output, "output");
    const Array &out = output->impl;
    const Context &ctx = m->impl->ctx();
    if (&out.device() != ctx.device().get() && !(out.device().host_memory() && ctx.device()->host_memory())) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "output is on backend '", out.device().name(), "', the model on '",
           ctx.device()->name(), "'; expected an output the model's backend can write");
    }
    RunScope run(run_control(options, "options"));
    m->impl->predict_into(input->impl, out);
  });
}

nnrt_status nnrt_model_predict_many(nnrt_model *m, const nnrt_array *const *inputs, int32_t n_inputs,
                                    const nnrt_run_options *options, nnrt_array **outputs, int32_t n_outputs) {
  return guard("nnrt_model_predict_many", [&] {
    check_handle(m, "m");
    const model::Model &model = *m->impl;
    const size_t want_inputs = model.input_shapes().size(), have_outputs = model.outputs().size();
    require(inputs != nullptr, "inputs is NULL; expected an array of the model's inputs");
    require(outputs != nullptr, "outputs is NULL; expected an array to receive the outputs");
    if (n_inputs < 0 || static_cast<size_t>(n_inputs) != want_inputs) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "n_inputs is ", n_inputs, "; the model takes ", want_inputs, " (", model.input_list(), ")");
    }
    if (n_outputs < 1 || static_cast<size_t>(n_outputs) > have_outputs) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "n_outputs is ", n_outputs, "; expected 1 to ", have_outputs, " (the model's outputs)");
    }
    std::vector<Array> xs;
    for (int32_t k = 0; k < n_inputs; ++k) {
      check_handle(inputs[k], "inputs", k);
      xs.push_back(inputs[k]->impl);
    }
    RunScope run(run_control(options, "options"));
    std::vector<Array> ys = model.predict(xs);
    std::vector<std::unique_ptr<nnrt_array>> made;
    for (int32_t j = 0; j < n_outputs; ++j) {
      made.push_back(std::make_unique<nnrt_array>());
      made.back()->impl = ys[j];
    }
    for (int32_t j = 0; j < n_outputs; ++j) outputs[j] = made[j].release();
  });
}

nnrt_status nnrt_model_input_count(const nnrt_model *m, int32_t *count) {
  return guard("nnrt_model_input_count", [&] {
    check_handle(m, "m");
    require(count != nullptr, "count is NULL; expected a pointer to receive the count");
    *count = static_cast<int32_t>(m->impl->input_shapes().size());
  });
}

nnrt_status nnrt_model_input(const nnrt_model *m, int32_t index, char *buf, size_t cap, size_t *len, int32_t *ndim,
                             int64_t shape[NNRT_MAX_DIMS]) {
  return guard("nnrt_model_input", [&] {
    check_handle(m, "m");
    const model::Model &model = *m->impl;
    const int64_t count = static_cast<int64_t>(model.input_shapes().size());
    if (index < 0 || index >= count) fail(NNRT_ERR_INVALID_ARGUMENT, "index is ", index, "; the model has inputs 0 to ", count - 1);
    require(ndim != nullptr && shape != nullptr, "ndim or shape is NULL; expected pointers to receive the shape");
    write_string(model.input_names()[index], buf, cap, len);
    const Shape &s = model.input_shapes()[index];
    *ndim = s.rank;
    for (int32_t i = 0; i < s.rank; ++i) shape[i] = s.dims[i];
  });
}

nnrt_status nnrt_model_output_count(const nnrt_model *m, int32_t *count) {
  return guard("nnrt_model_output_count", [&] {
    check_handle(m, "m");
    require(count != nullptr, "count is NULL; expected a pointer to receive the count");
    *count = static_cast<int32_t>(m->impl->outputs().size());
  });
}

nnrt_status nnrt_model_output_shape(const nnrt_model *m, int64_t batch, int32_t *ndim, int64_t shape[NNRT_MAX_DIMS]) {
  return guard("nnrt_model_output_shape", [&] {
    check_handle(m, "m");
    require(ndim != nullptr && shape != nullptr, "ndim or shape is NULL; expected pointers to receive the shape");
    if (batch < 0) fail(NNRT_ERR_INVALID_ARGUMENT, "batch is ", batch, "; expected >= 0");
    Shape s = m->impl->output_shape(batch);
    *ndim = s.rank;
    for (int32_t i = 0; i < s.rank; ++i) shape[i] = s.dims[i];
  });
}

nnrt_status nnrt_model_generate(nnrt_model *m, const int64_t *prompt, size_t prompt_len, const char *options_json,
                                int64_t *tokens, size_t max_tokens, size_t *n_tokens, nnrt_token_fn on_token, void *user) {
  return guard("nnrt_model_generate", [&] {
    check_handle(m, "m");
    require(prompt_len > 0, "prompt_len is 0; generation needs at least one token to continue");
    require(prompt != nullptr, "prompt is NULL; expected the prompt's token ids");
    require(tokens != nullptr || max_tokens == 0, "tokens is NULL; expected a buffer of max_tokens token ids");
    require(n_tokens != nullptr, "n_tokens is NULL; expected a pointer to receive the number of tokens generated");
    model::GenerateOptions options = model::GenerateOptions::parse(options_json, m->impl->ctx());
    std::function<bool(int64_t)> each;
    if (on_token) each = [&](int64_t token) { return on_token(token, user) != 0; };
    std::vector<int64_t> out =
        model::generate(*m->impl, std::vector<int64_t>(prompt, prompt + prompt_len), max_tokens, options, each);
    std::copy(out.begin(), out.end(), tokens);
    *n_tokens = out.size();
  });
}

nnrt_status nnrt_model_summary(const nnrt_model *m, char *buf, size_t cap, size_t *len) {
  return guard("nnrt_model_summary", [&] {
    check_handle(m, "m");
    write_string(m->impl->summary(), buf, cap, len);
  });
}

nnrt_status nnrt_model_param_count(const nnrt_model *m, int64_t *count) {
  return guard("nnrt_model_param_count", [&] {
    check_handle(m, "m");
    require(count != nullptr, "count is NULL; expected a pointer to receive the count");
    *count = m->impl->param_count();
  });
}

nnrt_status nnrt_model_get_param(const nnrt_model *m, const char *name, nnrt_array **out) {
  return guard("nnrt_model_get_param", [&] {
    check_handle(m, "m");
    require(out != nullptr, "out is NULL; expected a pointer to receive the array");
    std::shared_lock<WriterPreferringSharedMutex> read(m->impl->lock());
    const model::Param &p = find(*m->impl, name);
    auto h = std::make_unique<nnrt_array>();
    h->impl = ops::cast(m->impl->ctx(), p.value, NNRT_DTYPE_F32);
    *out = h.release();
  });
}

nnrt_status nnrt_model_set_param(nnrt_model *m, const char *name, const nnrt_array *value) {
  return guard("nnrt_model_set_param", [&] {
    check_handle(m, "m");
    check_handle(value, "value");
    std::unique_lock<WriterPreferringSharedMutex> write = m->impl->lock_for_writing();
    const model::Param &p = find(*m->impl, name);
    const Array &v = value->impl;
    if (v.shape() != p.value.shape()) {
      fail(NNRT_ERR_SHAPE, "parameter \"", p.name, "\" is ", to_string(p.value.shape()), ", the value is ",
           to_string(v.shape()));
    }
    if (p.spec.dtype == NNRT_DTYPE_I8) {
      // A quantized layer's weight: integers as stored, within the range its layer's kernels assume.
      if (v.dtype() != NNRT_DTYPE_I8) {
        fail(NNRT_ERR_DTYPE, "parameter \"", p.name, "\" is a quantized weight: the value must be i8, got ", dtype_name(v.dtype()));
      }
      if (p.spec.max_abs > 0) {
        for (double x : ops::to_doubles(v)) {
          if (x < -p.spec.max_abs || x > p.spec.max_abs) {
            fail(NNRT_ERR_INVALID_ARGUMENT, "parameter \"", p.name, "\" holds 7-bit weights, within [-", p.spec.max_abs,
                 ", ", p.spec.max_abs, "]; the value has ", x);
          }
        }
      }
    } else if (!dtype_is_float(v.dtype())) {
      fail(NNRT_ERR_DTYPE, "the value must be a float array, got ", dtype_name(v.dtype()));
    }
    ops::copy_into(m->impl->ctx(), v, p.value);
  });
}

nnrt_status nnrt_model_evaluate(nnrt_model *m, nnrt_dataset *data, nnrt_evaluation **out) {
  return nnrt_model_evaluate_ex(m, data, nullptr, out);
}

nnrt_status nnrt_model_evaluate_ex(nnrt_model *m, nnrt_dataset *data, const nnrt_run_options *options,
                                   nnrt_evaluation **out) {
  return guard(options ? "nnrt_model_evaluate_ex" : "nnrt_model_evaluate", [&] {
    check_handle(m, "m");
    check_handle(data, "data");
    require(out != nullptr, "out is NULL; expected a pointer to receive the evaluation");
    RunScope run(run_control(options, "options"));
    auto h = std::make_unique<nnrt_evaluation>();
    h->impl = train::evaluate(*m->impl, data->impl);
    *out = h.release();
  });
}

nnrt_status nnrt_evaluation_accuracy(const nnrt_evaluation *e, double *accuracy) {
  return guard("nnrt_evaluation_accuracy", [&] {
    check_handle(e, "e");
    require(accuracy != nullptr, "accuracy is NULL; expected a pointer to receive it");
    *accuracy = e->impl.accuracy();
  });
}

nnrt_status nnrt_evaluation_report(const nnrt_evaluation *e, char *buf, size_t cap, size_t *len) {
  return guard("nnrt_evaluation_report", [&] {
    check_handle(e, "e");
    write_string(e->impl.report(), buf, cap, len);
  });
}

void nnrt_evaluation_release(nnrt_evaluation *e) { release_handle(e, "nnrt_evaluation_release"); }

}  // extern "C"
