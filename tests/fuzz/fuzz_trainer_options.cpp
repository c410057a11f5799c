// Fuzz target: trainer options. TrainerOptions::parse, from any text, returns options or throws
// nnrt::Error with NNRT_ERR_INVALID_ARGUMENT or NNRT_ERR_UNSUPPORTED -- nothing else.
#include <string>

#include "backend/context.h"
#include "fuzz_target.h"
#include "train/trainer.h"

using namespace nnrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static std::shared_ptr<Context> ctx = [] {
    ContextOptions o;
    o.backend = "reference";
    o.threads = 1;
    return Context::create(o);
  }();
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    train::TrainerOptions options = train::TrainerOptions::parse(text.c_str(), *ctx);
    if (options.has_schedule) options.schedule.rate(options.optimizer.learning_rate, 3);
  } catch (const Error &e) {
    fuzz::expect_status(e, NNRT_ERR_INVALID_ARGUMENT, NNRT_ERR_UNSUPPORTED);
  }
  return 0;
}
