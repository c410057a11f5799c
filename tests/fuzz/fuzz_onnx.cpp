// Fuzz target: the ONNX importer. The libFuzzer build compiles the converter into the fuzzer (so
// that its coverage guides the search; NNRT_FUZZ_CONVERTER_LINKED); the replay build loads the
// plugin, libnnrt-onnx.so, found through NNRT_BACKEND_PATH. Any bytes either import as a model (which then predicts one
// example) or are refused with NNRT_ERR_CORRUPT, NNRT_ERR_UNSUPPORTED or NNRT_ERR_SHAPE -- never a
// crash, a hang, or an allocation of a size the file merely declares.
#include <new>

#include "fuzz_context.h"
#include "fuzz_target.h"
#include "io/onnx_converter_plugin.h"
#include "model/onnx_model.h"

using namespace nnrt;

#ifdef NNRT_FUZZ_CONVERTER_LINKED
extern "C" const nnrt_onnx_converter *nnrt_onnx_converter_entry(uint32_t abi);
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Outside the try: without the converter every input would be "unsupported", and the run would
  // test nothing.
#ifdef NNRT_FUZZ_CONVERTER_LINKED
  static const nnrt_onnx_converter &converter = *nnrt_onnx_converter_entry(NNRT_ONNX_CONVERTER_ABI);
#else
  static const nnrt_onnx_converter &converter = io::onnx_converter();
#endif
  try {
    auto m = model::import_onnx_memory_with(converter, fuzz::reference_context(), data, size, Json::object());
    m->predict(ops::zeros(m->ctx(), NNRT_DTYPE_F32, model::with_batch(1, m->input_shapes()[0])));
  } catch (const Error &e) {
    fuzz::expect_status(e, NNRT_ERR_CORRUPT, NNRT_ERR_UNSUPPORTED, NNRT_ERR_SHAPE, NNRT_ERR_INVALID_ARGUMENT,
                        NNRT_ERR_OUT_OF_MEMORY);
  } catch (const std::bad_alloc &) {
  }
  return 0;
}
