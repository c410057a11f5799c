// Fuzz target: JSON text at every entry point of the public API that reads JSON -- context
// options, op attributes (creation, reduction, convolution, pooling, reshape, cast), model configs,
// trainer options and dataset specs. Each call must return a status; NNRT_ERR_INTERNAL (an
// exception nnrt did not expect, such as a library's) or a crash is a finding. The seeds in
// corpus/json hold nesting tens of thousands deep, numbers beyond a double, duplicate keys and
// sizes that overflow.
//
// Uses the C API alone, so that the libFuzzer build links the ordinary libnnrt. Inputs whose
// integers are large are given to the entry points that cannot allocate by them only (a valid
// config asking for a billion units is slow, not wrong).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "nnrt/nnrt.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

void expect_no_internal(nnrt_status s, const char *call) {
  if (s != NNRT_ERR_INTERNAL && s != NNRT_STATUS_FORCE_INT32) return;
  std::fprintf(stderr, "%s: unexpected %s: %s\n", call, nnrt_status_name(s), nnrt_last_error());
  std::abort();
}

nnrt_context *context() {
  static nnrt_context *ctx = [] {
    nnrt_context *c = nullptr;
    if (nnrt_context_create("{\"backend\": \"reference\", \"threads\": 1}", &c) != NNRT_OK) std::abort();
    return c;
  }();
  return ctx;
}

nnrt_model *small_model() {
  static nnrt_model *m = [] {
    nnrt_model *model = nullptr;
    const char *config =
        "{\"input\": [4], \"layers\": [{\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}";
    if (nnrt_model_create(context(), config, &model) != NNRT_OK) std::abort();
    return model;
  }();
  return m;
}

// No integer of more than three digits, and no exponent: nothing that asks for much memory.
bool small_numbers(const std::string &text) {
  int digits = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      if (++digits > 3) return false;
    } else {
      if (c == 'e' || c == 'E') {
        // an exponent only after a digit
        if (digits) return false;
      }
      digits = 0;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  const char *json = text.c_str();
  nnrt_context *ctx = context();
  bool small = small_numbers(text);

  nnrt_context *c = nullptr;
  if (small) {
    expect_no_internal(nnrt_context_create(json, &c), "nnrt_context_create");
    nnrt_context_release(c);
  }

  int64_t xs[4] = {1, 1, 4, 4}, ws[4] = {2, 1, 3, 3};
  nnrt_array *x = nullptr, *w = nullptr;
  if (nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, xs, &x) != NNRT_OK) std::abort();
  if (nnrt_array_create(ctx, NNRT_DTYPE_F32, 4, ws, &w) != NNRT_OK) std::abort();
  const nnrt_array *in[2] = {x, w};
  // Ops whose output size is bounded by their inputs take any attributes; creation ops only small.
  const char *bounded[] = {"sum", "mean", "argmax", "softmax", "transpose", "cast", "reshape", "maxpool2d",
                           "avgpool2d", "leaky_relu"};
  for (const char *op : bounded) {
    nnrt_array *out = nullptr;
    expect_no_internal(nnrt_op(ctx, op, in, 1, json, &out, 1), op);
    nnrt_array_release(out);
  }
  {
    nnrt_array *out = nullptr;
    expect_no_internal(nnrt_op(ctx, "conv2d", in, 2, json, &out, 1), "conv2d");
    nnrt_array_release(out);
  }
  if (small) {
    for (const char *op : {"fill", "random_uniform", "random_normal"}) {
      nnrt_array *out = nullptr;
      expect_no_internal(nnrt_op(ctx, op, nullptr, 0, json, &out, 1), op);
      nnrt_array_release(out);
    }
    nnrt_model *m = nullptr;
    expect_no_internal(nnrt_model_create(ctx, json, &m), "nnrt_model_create");
    nnrt_model_release(m);
    nnrt_dataset *d = nullptr;
    // Dataset specs name files; only the JSON is under test, so no path may name a real one.
    if (text.find('/') == std::string::npos) {
      expect_no_internal(nnrt_dataset_load(ctx, json, &d), "nnrt_dataset_load");
      nnrt_dataset_release(d);
    }
  }
  nnrt_trainer *t = nullptr;
  expect_no_internal(nnrt_trainer_create(small_model(), json, &t), "nnrt_trainer_create");
  nnrt_trainer_release(t);
  nnrt_array_release(x);
  nnrt_array_release(w);
  return 0;
}
