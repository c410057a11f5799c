// Dataset::load: the JSON spec of nnrt_dataset_load, read strictly, and the reader it names.
#include "core/error.h"
#include "core/json_options.h"
#include "data/csv_reader.h"
#include "data/dataset.h"
#include "data/idx_reader.h"
#include "data/text_reader.h"

namespace nnrt::data {

namespace {

std::shared_ptr<Dataset> load_idx(JsonReader &spec) {
  std::string images = spec.require_string("images");
  std::string labels = spec.require_string("labels");
  double scale = spec.get_number("scale", 1.0 / 255.0);
  int64_t limit = spec.get_int("limit", 0, 1);
  spec.finish();  // before touching a file: a misspelt key is the likelier mistake
  IdxArray image_array = read_idx_file(images, limit);
  IdxArray label_array = read_idx_file(labels, limit);
  return Dataset::from_parts(idx_dataset_parts(std::move(image_array), std::move(label_array), images, labels, scale));
}

std::shared_ptr<Dataset> load_csv(JsonReader &spec) {
  std::string path = spec.require_string("path");
  CsvOptions options;
  options.label_column = spec.get_int("label_column", 0);
  options.header = spec.get_bool("header", false);
  options.limit = spec.get_int("limit", 0, 1);
  options.scale = spec.get_number("scale", 1.0);
  spec.finish();
  return Dataset::from_parts(read_csv_file(path, options));
}

std::shared_ptr<Dataset> load_text(JsonReader &spec) {
  std::string path = spec.require_string("path");
  TextOptions options;
  options.window = spec.require_int("window", 1);
  options.stride = spec.get_int("stride", options.window, 1);
  options.split = spec.get_string("split", "all");
  options.test_fraction = spec.get_number("test_fraction", 0.1);
  options.limit = spec.get_int("limit", 0, 1);
  spec.finish();
  return Dataset::from_parts(read_text_file(path, options));
}

}  // namespace

std::shared_ptr<Dataset> Dataset::load(const char *spec_json) {
  if (!spec_json)
    fail(NNRT_ERR_INVALID_ARGUMENT, "spec_json is NULL; expected a JSON object such as {\"format\": \"idx\", ...}");
  Json doc = parse_json_object(spec_json, "spec_json");
  JsonReader spec(doc, "spec");
  std::string format = spec.require_string("format");
  if (format == "idx") return load_idx(spec);
  if (format == "csv") return load_csv(spec);
  if (format == "text") return load_text(spec);
  fail(NNRT_ERR_INVALID_ARGUMENT, "spec.format: expected \"idx\", \"csv\" or \"text\", got ", json_excerpt(format));
}

}  // namespace nnrt::data
