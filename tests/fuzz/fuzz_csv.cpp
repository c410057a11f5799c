// Fuzz target: CSV parsing (plain and gzip) with a few option sets, then a batch.
#include <vector>

#include "data/csv_reader.h"
#include "data/dataset.h"
#include "fuzz_target.h"

using namespace nnrt;
using namespace nnrt::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CsvOptions plain, header_last, limited;
  header_last.header = true;
  header_last.label_column = -1;
  limited.limit = 2;
  limited.label_column = 1;
  for (const CsvOptions *options : {&plain, &header_last, &limited}) {
    try {
      auto d = Dataset::from_parts(parse_csv(data, size, "fuzz.csv", *options));
      std::vector<int64_t> rows = {d->size() - 1, 0};
      std::vector<float> x(static_cast<size_t>(2 * d->example_shape().numel()));  // f32 [2, columns - 1]
      std::vector<int64_t> y(2);
      d->gather(rows.data(), 2, NNRT_DTYPE_F32, x.data(), y.data());
    } catch (const Error &e) {
      // INVALID_ARGUMENT: a label_column outside the file's columns.
      fuzz::expect_status(e, NNRT_ERR_CORRUPT, NNRT_ERR_INVALID_ARGUMENT);
    }
  }
  return 0;
}
