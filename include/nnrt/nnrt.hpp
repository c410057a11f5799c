// nnrt.hpp - a header-only C++ wrapper over the C API in nnrt.h, in the manner of oneDNN's dnnl.hpp.
//
// Every nnrt object is a move-only RAII handle that releases its C handle when destroyed; a failed
// call throws nnrt::error carrying the nnrt_status and nnrt_last_error()'s message. Nothing here
// adds behaviour: each method is one nnrt_* call, documented in nnrt.h (same errors, same
// ownership), so that header stays the manual. C++17; links to libnnrt like any C program.
//
//   nnrt::context ctx(R"({"backend": "reference"})");
//   nnrt::model m(ctx, config_json);
//   nnrt::array y = m.predict(x);              // throws nnrt::error, e.g. with NNRT_ERR_SHAPE
//
// get() gives the C handle, for calls this wrapper does not cover; the object keeps owning it.
#ifndef NNRT_HPP
#define NNRT_HPP

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnrt/nnrt.h"

namespace nnrt {

// A failed nnrt call: its status and the message that says what was expected and what was given.
class error : public std::exception {
 public:
  error(nnrt_status status, std::string message) : status_(status), message_(std::move(message)) {}
  nnrt_status status() const noexcept { return status_; }
  const char *what() const noexcept override { return message_.c_str(); }

 private:
  nnrt_status status_;
  std::string message_;
};

// Throws nnrt::error with the calling thread's last message unless `status` is NNRT_OK.
inline void check(nnrt_status status) {
  if (status != NNRT_OK) throw error(status, nnrt_last_error());
}

inline uint32_t abi_version() { return nnrt_abi_version(); }
inline const char *version_string() { return nnrt_version_string(); }
inline const char *status_name(nnrt_status status) { return nnrt_status_name(status); }
inline size_t dtype_size(nnrt_dtype dtype) { return nnrt_dtype_size(dtype); }
// Process-wide, as nnrt_set_log_callback; `fn` and `user` must outlive their use.
inline void set_log_callback(nnrt_log_fn fn, void *user, int min_level) { nnrt_set_log_callback(fn, user, min_level); }

namespace detail {

// The release function of each C handle type.
inline void release(nnrt_context *p) { nnrt_context_release(p); }
inline void release(nnrt_array *p) { nnrt_array_release(p); }
inline void release(nnrt_dataset *p) { nnrt_dataset_release(p); }
inline void release(nnrt_model *p) { nnrt_model_release(p); }
inline void release(nnrt_trainer *p) { nnrt_trainer_release(p); }
inline void release(nnrt_evaluation *p) { nnrt_evaluation_release(p); }
inline void release(nnrt_run_options *p) { nnrt_run_options_release(p); }

// Owns one C handle: move-only, released on destruction. Empty after a move.
template <class T>
class handle {
 public:
  handle() = default;
  explicit handle(T *owned) noexcept : p_(owned) {}
  handle(handle &&other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  handle &operator=(handle &&other) noexcept {
    if (this != &other) reset(std::exchange(other.p_, nullptr));
    return *this;
  }
  handle(const handle &) = delete;
  handle &operator=(const handle &) = delete;
  ~handle() { reset(); }

  // The C handle, still owned by this object (NULL when empty).
  T *get() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  // Gives up ownership: the caller releases the returned handle.
  T *release() noexcept { return std::exchange(p_, nullptr); }
  void reset(T *owned = nullptr) noexcept {
    if (p_) detail::release(p_);
    p_ = owned;
  }

 private:
  T *p_ = nullptr;
};

// Reads a string through the header's (buf, cap, len) convention. The text can grow between the
// size query and the copy (a context's cache statistics), so it asks again until it fits.
template <class Write>
std::string read_string(Write &&write) {
  size_t len = 0;
  check(write(nullptr, 0, &len));
  std::string text;
  for (;;) {
    text.resize(len + 1);
    size_t needed = 0;
    check(write(&text[0], text.size(), &needed));
    if (needed <= len) {
      text.resize(needed);
      return text;
    }
    len = needed;
  }
}

inline const char *c_str_or_null(const std::string &s) { return s.empty() ? nullptr : s.c_str(); }

}  // namespace detail

class array;
class dataset;
class evaluation;

// Cancellation, a timeout and an abort callback for the calls that take them (nnrt_run_options_*).
// cancel() and reset() may be called from any thread while calls run with these options.
class run_options : public detail::handle<nnrt_run_options> {
 public:
  run_options() {
    nnrt_run_options *out = nullptr;
    check(nnrt_run_options_create(&out));
    reset(out);
  }
  void cancel() const { check(nnrt_run_options_cancel(get())); }
  void reset_cancel() const { check(nnrt_run_options_reset(get())); }
  // At most `seconds` per call (0: no limit).
  void set_timeout(double seconds) const { check(nnrt_run_options_set_timeout(get(), seconds)); }
  void set_abort_callback(nnrt_abort_fn fn, void *user) const {
    check(nnrt_run_options_set_abort_callback(get(), fn, user));
  }
};

// A backend, device, thread pool and memory cache (nnrt_context_create).
class context : public detail::handle<nnrt_context> {
 public:
  // Takes ownership of a C context.
  explicit context(nnrt_context *owned) noexcept : handle(owned) {}
  // `options_json`: nnrt_context_create's options ("" for the defaults).
  explicit context(const std::string &options_json = "") {
    nnrt_context *out = nullptr;
    check(nnrt_context_create(detail::c_str_or_null(options_json), &out));
    reset(out);
  }
  // nnrt_context_describe's JSON.
  std::string describe() const {
    return detail::read_string([this](char *b, size_t c, size_t *l) { return nnrt_context_describe(get(), b, c, l); });
  }
};

// A typed n-dimensional array on a context's device.
class array : public detail::handle<nnrt_array> {
 public:
  array() = default;
  // Takes ownership of a C array.
  explicit array(nnrt_array *owned) noexcept : handle(owned) {}
  // A zero-filled array (nnrt_array_create).
  array(const context &ctx, nnrt_dtype dtype, const std::vector<int64_t> &shape) {
    nnrt_array *out = nullptr;
    check(nnrt_array_create(ctx.get(), dtype, static_cast<int32_t>(shape.size()), shape.data(), &out));
    reset(out);
  }
  // An array holding a copy of `nbytes` bytes of host data (nnrt_array_from_host).
  static array from_host(const context &ctx, nnrt_dtype dtype, const std::vector<int64_t> &shape, const void *data,
                         size_t nbytes) {
    nnrt_array *out = nullptr;
    check(nnrt_array_from_host(ctx.get(), dtype, static_cast<int32_t>(shape.size()), shape.data(), data, nbytes, &out));
    return array(out);
  }

  // An array over the caller's own host memory, used in place (nnrt_array_wrap_host): `strides` in
  // elements ({} for row-major); `release(data, user)` runs once nnrt no longer uses the memory.
  static array wrap_host(const context &ctx, nnrt_dtype dtype, const std::vector<int64_t> &shape, void *data,
                         size_t nbytes, const std::vector<int64_t> &strides = {}, nnrt_release_fn release = nullptr,
                         void *user = nullptr) {
    if (!strides.empty() && strides.size() != shape.size()) {
      throw error(NNRT_ERR_INVALID_ARGUMENT, "wrap_host: " + std::to_string(strides.size()) + " strides for " +
                                                 std::to_string(shape.size()) + " dims");
    }
    nnrt_array *out = nullptr;
    check(nnrt_array_wrap_host(ctx.get(), dtype, static_cast<int32_t>(shape.size()), shape.data(),
                               strides.empty() ? nullptr : strides.data(), data, nbytes, release, user, &out));
    return array(out);
  }

  nnrt_dtype dtype() const {
    nnrt_dtype d;
    check(nnrt_array_info(get(), &d, nullptr, nullptr));
    return d;
  }
  std::vector<int64_t> shape() const {
    int64_t dims[NNRT_MAX_DIMS];
    int32_t ndim = 0;
    check(nnrt_array_info(get(), nullptr, &ndim, dims));
    return std::vector<int64_t>(dims, dims + ndim);
  }
  size_t nbytes() const {
    size_t n = 0;
    check(nnrt_array_nbytes(get(), &n));
    return n;
  }
  // Copies the elements into `nbytes` bytes of host memory (nnrt_array_to_host).
  void to_host(void *data, size_t nbytes) const { check(nnrt_array_to_host(get(), data, nbytes)); }
  // The elements as a vector of T, which must have the dtype's size (float for F32, int64_t for
  // I64, int8_t for I8, uint16_t for F16 and BF16 bits); throws NNRT_ERR_DTYPE when it has not.
  template <class T>
  std::vector<T> to_vector() const {
    nnrt_dtype d = dtype();
    if (sizeof(T) != nnrt_dtype_size(d)) {
      throw error(NNRT_ERR_DTYPE, "to_vector: the array's elements are " + std::to_string(nnrt_dtype_size(d)) +
                                      " bytes each, the vector's " + std::to_string(sizeof(T)));
    }
    std::vector<T> v(nbytes() / sizeof(T));
    to_host(v.data(), v.size() * sizeof(T));
    return v;
  }
};

// Runs an op by name (nnrt_op); `attrs_json` "" for none. Returns its `n_outputs` new arrays.
inline std::vector<array> op(const context &ctx, const std::string &name, const std::vector<const array *> &inputs,
                             const std::string &attrs_json = "", int32_t n_outputs = 1) {
  std::vector<const nnrt_array *> in;
  for (const array *a : inputs) in.push_back(a ? a->get() : nullptr);
  std::vector<nnrt_array *> out(static_cast<size_t>(n_outputs > 0 ? n_outputs : 0), nullptr);
  check(nnrt_op(ctx.get(), name.c_str(), in.data(), static_cast<int32_t>(in.size()), detail::c_str_or_null(attrs_json),
                out.data(), n_outputs));
  std::vector<array> result;
  for (nnrt_array *a : out) result.emplace_back(a);
  return result;
}

// Examples and labels ready for batching.
class dataset : public detail::handle<nnrt_dataset> {
 public:
  dataset() = default;
  // Takes ownership of a C dataset.
  explicit dataset(nnrt_dataset *owned) noexcept : handle(owned) {}
  // nnrt_dataset_load: files described by a JSON spec.
  static dataset load(const context &ctx, const std::string &spec_json) {
    nnrt_dataset *out = nullptr;
    check(nnrt_dataset_load(ctx.get(), spec_json.c_str(), &out));
    return dataset(out);
  }
  // nnrt_dataset_from_arrays: a copy of features [N, ...] and labels [N] or [N, ...].
  static dataset from_arrays(const context &ctx, const array &features, const array &labels) {
    nnrt_dataset *out = nullptr;
    check(nnrt_dataset_from_arrays(ctx.get(), features.get(), labels.get(), &out));
    return dataset(out);
  }
  int64_t size() const {
    int64_t n = 0;
    check(nnrt_dataset_size(get(), &n));
    return n;
  }
  // Examples [start, start + count) as new arrays on ctx's device (nnrt_dataset_examples).
  std::pair<array, array> examples(const context &ctx, int64_t start, int64_t count) const {
    nnrt_array *features = nullptr, *labels = nullptr;
    check(nnrt_dataset_examples(ctx.get(), get(), start, count, &features, &labels));
    return {array(features), array(labels)};
  }
};

// A model's metrics on a dataset (nnrt_model_evaluate).
class evaluation : public detail::handle<nnrt_evaluation> {
 public:
  // Takes ownership of a C evaluation.
  explicit evaluation(nnrt_evaluation *owned) noexcept : handle(owned) {}
  double accuracy() const {
    double a = 0;
    check(nnrt_evaluation_accuracy(get(), &a));
    return a;
  }
  // nnrt_evaluation_report's JSON.
  std::string report() const {
    return detail::read_string([this](char *b, size_t c, size_t *l) { return nnrt_evaluation_report(get(), b, c, l); });
  }
};

// A network built from a JSON config, with its parameters.
class model : public detail::handle<nnrt_model> {
 public:
  // Takes ownership of a C model.
  explicit model(nnrt_model *owned) noexcept : handle(owned) {}
  // nnrt_model_create.
  model(const context &ctx, const std::string &config_json) {
    nnrt_model *out = nullptr;
    check(nnrt_model_create(ctx.get(), config_json.c_str(), &out));
    reset(out);
  }
  // nnrt_model_load_ex: a model or trainer checkpoint; `run` (may be NULL) can stop the load.
  static model load(const context &ctx, const std::string &path, const run_options *run = nullptr) {
    nnrt_model *out = nullptr;
    check(nnrt_model_load_ex(ctx.get(), path.c_str(), run ? run->get() : nullptr, &out));
    return model(out);
  }
  // nnrt_model_import_onnx_ex; options: "" for the defaults, or the JSON object nnrt.h describes.
  static model import_onnx(const context &ctx, const std::string &path, const std::string &options = "",
                           const run_options *run = nullptr) {
    nnrt_model *out = nullptr;
    check(nnrt_model_import_onnx_ex(ctx.get(), path.c_str(), options.empty() ? nullptr : options.c_str(),
                                    run ? run->get() : nullptr, &out));
    return model(out);
  }
  // nnrt_model_share: another model whose parameters are this one's memory (copied on write).
  model share() const {
    nnrt_model *out = nullptr;
    check(nnrt_model_share(get(), &out));
    return model(out);
  }
  // nnrt_model_quantize: an int8 copy of this model for inference, calibrated on the examples of
  // `calibration` (labels unused); `options_json` "" for the defaults, or "batches", "batch_size",
  // "weight_bits" (7 or 8) and "exclude" (layer names) as nnrt.h describes. The copy predicts,
  // saves and shares, but cannot be trained nor exported to ONNX (NNRT_ERR_UNSUPPORTED).
  model quantize(const dataset &calibration, const std::string &options_json = "") const {
    nnrt_model *out = nullptr;
    check(nnrt_model_quantize(get(), calibration.get(), detail::c_str_or_null(options_json), &out));
    return model(out);
  }
  void save(const std::string &path) const { check(nnrt_model_save(get(), path.c_str())); }
  void export_onnx(const std::string &path) const { check(nnrt_model_export_onnx(get(), path.c_str())); }
  // nnrt_model_predict_ex; `run` (may be NULL) can stop it.
  array predict(const array &input, const run_options *run = nullptr) const {
    nnrt_array *out = nullptr;
    check(nnrt_model_predict_ex(get(), input.get(), run ? run->get() : nullptr, &out));
    return array(out);
  }
  // nnrt_model_predict_into: the prediction written into `output` (F32, output_shape(batch)).
  void predict_into(const array &input, array &output, const run_options *run = nullptr) const {
    check(nnrt_model_predict_into(get(), input.get(), output.get(), run ? run->get() : nullptr));
  }
  // nnrt_model_output_shape: the prediction's shape for `batch` examples.
  std::vector<int64_t> output_shape(int64_t batch) const {
    int64_t dims[NNRT_MAX_DIMS];
    int32_t ndim = 0;
    check(nnrt_model_output_shape(get(), batch, &ndim, dims));
    return std::vector<int64_t>(dims, dims + ndim);
  }
  // nnrt_model_predict_many: every output of a model of one or several inputs, one batch per input
  // in the order inputs() gives; `run` (may be NULL) can stop it.
  std::vector<array> predict_many(const std::vector<const array *> &inputs, const run_options *run = nullptr) const {
    std::vector<const nnrt_array *> raw;
    for (const array *a : inputs) raw.push_back(a ? a->get() : nullptr);
    int32_t count = 0;
    check(nnrt_model_output_count(get(), &count));
    std::vector<nnrt_array *> out(static_cast<size_t>(count), nullptr);
    check(nnrt_model_predict_many(get(), raw.data(), static_cast<int32_t>(raw.size()), run ? run->get() : nullptr,
                                  out.data(), count));
    std::vector<array> result;
    for (nnrt_array *o : out) result.emplace_back(o);
    return result;
  }
  // One input of the model: its name and the shape of one example.
  struct input_info {
    std::string name;
    std::vector<int64_t> shape;
  };
  // nnrt_model_input_count and nnrt_model_input: the inputs predict_many takes, in order.
  std::vector<input_info> inputs() const {
    int32_t count = 0;
    check(nnrt_model_input_count(get(), &count));
    std::vector<input_info> result;
    for (int32_t k = 0; k < count; ++k) {
      int64_t dims[NNRT_MAX_DIMS];
      int32_t ndim = 0;
      std::string name = detail::read_string(
          [&](char *b, size_t c, size_t *l) { return nnrt_model_input(get(), k, b, c, l, &ndim, dims); });
      result.push_back({name, std::vector<int64_t>(dims, dims + ndim)});
    }
    return result;
  }
  // Return true to stop generating after this token.
  using token_fn = std::function<bool(int64_t)>;
  // nnrt_model_generate: up to `max_tokens` tokens continuing `prompt`; `options` "" for the
  // defaults. `on_token`, when given, sees each token as it is chosen; an exception it throws stops
  // generation and leaves this call by that exception (it never crosses the C library).
  std::vector<int64_t> generate(const std::vector<int64_t> &prompt, size_t max_tokens, const std::string &options = "",
                                const token_fn &on_token = token_fn()) const {
    struct state_t {
      const token_fn *fn;
      std::exception_ptr thrown;
    } state{&on_token, nullptr};
    auto call = [](int64_t token, void *user) -> int {
      auto *s = static_cast<state_t *>(user);
      try {
        return (*s->fn)(token) ? 1 : 0;
      } catch (...) {
        s->thrown = std::current_exception();
        return 1;
      }
    };
    std::vector<int64_t> out(max_tokens);
    size_t n = 0;
    nnrt_status status = nnrt_model_generate(get(), prompt.data(), prompt.size(), detail::c_str_or_null(options),
                                             out.data(), max_tokens, &n, on_token ? +call : nullptr, &state);
    if (state.thrown) std::rethrow_exception(state.thrown);
    check(status);
    out.resize(n);
    return out;
  }
  // nnrt_model_summary's JSON.
  std::string summary() const {
    return detail::read_string([this](char *b, size_t c, size_t *l) { return nnrt_model_summary(get(), b, c, l); });
  }
  int64_t param_count() const {
    int64_t n = 0;
    check(nnrt_model_param_count(get(), &n));
    return n;
  }
  // nnrt_model_get_param: a copy as F32 (a quantized weight's integers too).
  array get_param(const std::string &name) const {
    nnrt_array *out = nullptr;
    check(nnrt_model_get_param(get(), name.c_str(), &out));
    return array(out);
  }
  // nnrt_model_set_param: a float value, or I8 for a quantized layer's (I8) weight.
  void set_param(const std::string &name, const array &value) { check(nnrt_model_set_param(get(), name.c_str(), value.get())); }
  // nnrt_model_evaluate_ex; `run` (may be NULL) can stop it.
  evaluation evaluate(const dataset &data, const run_options *run = nullptr) const {
    nnrt_evaluation *out = nullptr;
    check(nnrt_model_evaluate_ex(get(), data.get(), run ? run->get() : nullptr, &out));
    return evaluation(out);
  }
};

// An optimizer, its state and the training loop for one model.
class trainer : public detail::handle<nnrt_trainer> {
 public:
  // Return true to stop training (fit then ends by plan, stop reason "callback").
  using progress_fn = std::function<bool(const nnrt_progress &)>;

  // nnrt_trainer_create; `options_json` "" for the defaults.
  trainer(const model &m, const std::string &options_json = "") : progress_(new progress_state) {
    nnrt_trainer *out = nullptr;
    check(nnrt_trainer_create(m.get(), detail::c_str_or_null(options_json), &out));
    reset(out);
  }

  // Calls `fn` after every minibatch and epoch of fit, on fit's thread (nnrt_trainer_set_progress);
  // an empty function removes it. An exception `fn` throws stops training and leaves fit by that
  // exception (it never crosses the C library).
  void set_progress(progress_fn fn) {
    progress_->fn = std::move(fn);
    check(nnrt_trainer_set_progress(get(), progress_->fn ? &trainer::on_progress : nullptr, progress_.get()));
  }

  // nnrt_trainer_step: one optimisation step; returns the minibatch's loss.
  double step(const array &x, const array &y) {
    double loss = 0;
    check(nnrt_trainer_step(get(), x.get(), y.get(), &loss));
    return loss;
  }
  // nnrt_trainer_fit; `validation` may be NULL. A cancel throws nnrt::error (NNRT_ERR_CANCELLED).
  void fit(const dataset &train, const dataset *validation, int32_t epochs) {
    progress_->thrown = nullptr;
    nnrt_status status = nnrt_trainer_fit(get(), train.get(), validation ? validation->get() : nullptr, epochs);
    if (progress_->thrown) std::rethrow_exception(std::exchange(progress_->thrown, nullptr));
    check(status);
  }
  // nnrt_trainer_result's JSON.
  std::string result() const {
    return detail::read_string([this](char *b, size_t c, size_t *l) { return nnrt_trainer_result(get(), b, c, l); });
  }
  void save(const std::string &path) const { check(nnrt_trainer_save(get(), path.c_str())); }
  void restore(const std::string &path) { check(nnrt_trainer_restore(get(), path.c_str())); }
  // nnrt_trainer_rank: {rank, world size}; {0, 1} without distributed training.
  std::pair<int32_t, int32_t> rank() const {
    int32_t r = 0, w = 1;
    check(nnrt_trainer_rank(get(), &r, &w));
    return {r, w};
  }
  // Safe from any thread while fit runs (nnrt_trainer_cancel).
  void cancel() { check(nnrt_trainer_cancel(get())); }

 private:
  // Lives on the heap so that its address, given to the C library, survives moves of the trainer.
  struct progress_state {
    progress_fn fn;
    std::exception_ptr thrown;
  };

  static int on_progress(const nnrt_progress *p, void *user) {
    auto *state = static_cast<progress_state *>(user);
    try {
      return state->fn(*p) ? 1 : 0;
    } catch (...) {
      state->thrown = std::current_exception();
      return 1;
    }
  }

  std::unique_ptr<progress_state> progress_;
};

}  // namespace nnrt

#endif  // NNRT_HPP
