// Fuzz target: model configs. Model::create on the reference backend, from any JSON text, must
// build a model or throw nnrt::Error with a documented status -- never crash, never throw
// anything else (a stray library exception would reach the C API as NNRT_ERR_INTERNAL).
//
// Inputs that ask for big models are skipped: they are valid, only slow, and a fuzzer would
// spend its time allocating. Keep the corpus to small configs.
#include <new>
#include <string>

#include "backend/context.h"
#include "core/json_options.h"
#include "fuzz_target.h"
#include "model/model.h"

using namespace nnrt;

namespace {

const std::shared_ptr<Context> &reference_context() {
  static std::shared_ptr<Context> ctx = [] {
    ContextOptions o;
    o.backend = "reference";
    o.threads = 1;
    return Context::create(o);
  }();
  return ctx;
}

// True when every integer is small (seeds aside) and the input holds at most 4096 elements.
bool small(const Json &j, const std::string &key = "") {
  if (j.is_number_integer()) return key == "seed" || (j.get<int64_t>() >= -1024 && j.get<int64_t>() <= 1024);
  if (j.is_number_float()) return j.get<double>() >= -1024 && j.get<double>() <= 1024;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!small(*it, it.key())) return false;
    if (j.contains("input") && j["input"].is_array()) {
      double elements = 1;
      for (const Json &d : j["input"])
        if (d.is_number()) elements *= d.get<double>();
      if (elements > 4096) return false;
    }
  }
  if (j.is_array()) {
    if (j.size() > 64) return false;
    for (const Json &e : j)
      if (!small(e, key)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    Json config = parse_json_object(text.c_str(), "config");
    if (!small(config)) return 0;
    model::Model::create(reference_context(), config);
  } catch (const Error &e) {
    fuzz::expect_status(e, NNRT_ERR_INVALID_ARGUMENT, NNRT_ERR_SHAPE, NNRT_ERR_DTYPE, NNRT_ERR_UNSUPPORTED,
                        NNRT_ERR_OUT_OF_MEMORY);
  } catch (const std::bad_alloc &) {
  }
  return 0;
}
