// Fuzz target: the ONNX importer. Any bytes either import as a model (which then predicts one
// example) or are refused with NNRT_ERR_CORRUPT, NNRT_ERR_UNSUPPORTED or NNRT_ERR_SHAPE -- never a
// crash, a hang, or an allocation of a size the file merely declares.
#include <new>

#include "fuzz_context.h"
#include "fuzz_target.h"
#include "model/onnx_import.h"

using namespace nnrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    auto m = io::onnx_format::import_memory(fuzz::reference_context(), data, size, io::onnx_format::ImportOptions{});
    m->predict(ops::zeros(m->ctx(), NNRT_DTYPE_F32, model::with_batch(1, m->input_shapes()[0])));
  } catch (const Error &e) {
    fuzz::expect_status(e, NNRT_ERR_CORRUPT, NNRT_ERR_UNSUPPORTED, NNRT_ERR_SHAPE, NNRT_ERR_INVALID_ARGUMENT,
                        NNRT_ERR_OUT_OF_MEMORY);
  } catch (const std::bad_alloc &) {
  }
  return 0;
}
