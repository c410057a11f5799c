#include "data/text_reader.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "data/byte_reader.h"

namespace nnrt::data {

namespace {

void check_options(const TextOptions &o) {
  if (o.window < 1) fail(NNRT_ERR_INVALID_ARGUMENT, "spec.window: expected a token count >= 1, got ", o.window);
  if (o.stride < 1) fail(NNRT_ERR_INVALID_ARGUMENT, "spec.stride: expected a byte count >= 1, got ", o.stride);
  if (o.split != "all" && o.split != "train" && o.split != "test") {
    fail(NNRT_ERR_INVALID_ARGUMENT, "spec.split: expected \"all\", \"train\" or \"test\", got \"", o.split, "\"");
  }
  if (!(o.test_fraction > 0 && o.test_fraction < 1)) {
    fail(NNRT_ERR_INVALID_ARGUMENT, "spec.test_fraction: expected a fraction in (0, 1), got ", o.test_fraction);
  }
}

}  // namespace

DatasetParts parse_text(const unsigned char *bytes, size_t size, const std::string &name, const TextOptions &options) {
  check_options(options);
  std::vector<unsigned char> text;
  if (is_gzip(bytes, size)) text = ByteReader(bytes, size, name).read_rest();
  else text.assign(bytes, bytes + size);

  // The part of the text this split takes: [begin, end).
  const int64_t length = static_cast<int64_t>(text.size());
  const int64_t cut = length - static_cast<int64_t>(std::llround(static_cast<double>(length) * options.test_fraction));
  const int64_t begin = options.split == "test" ? cut : 0, end = options.split == "train" ? cut : length;
  // Each window needs the byte after it: the label of its last position.
  const int64_t need = options.window + 1;
  if (end - begin < need) {
    std::string part = options.split == "all" ? "" : cat(" (the ", options.split, " split's ", end - begin, " of them)");
    fail(NNRT_ERR_INVALID_ARGUMENT, name, ": the text holds ", length, " bytes", part, ", too few for one window of ",
         options.window, " tokens and the byte that follows it (", need, " bytes)");
  }
  int64_t windows = (end - begin - need) / options.stride + 1;
  if (options.limit > 0 && options.limit < windows) windows = options.limit;

  DatasetParts parts;
  parts.size = windows;
  parts.feature_type = FeatureType::U8;
  parts.example_shape = Shape{options.window};
  parts.scale = 1;  // token ids are the byte values
  parts.label_shape = Shape{options.window};
  parts.features.resize(static_cast<size_t>(windows * options.window));
  parts.classes.resize(static_cast<size_t>(windows * options.window));
  for (int64_t w = 0; w < windows; ++w) {
    const unsigned char *src = text.data() + begin + w * options.stride;
    std::memcpy(parts.features.data() + w * options.window, src, static_cast<size_t>(options.window));
    int64_t *labels = parts.classes.data() + w * options.window;
    for (int64_t t = 0; t < options.window; ++t) labels[t] = src[t + 1];
  }
  return parts;
}

DatasetParts read_text_file(const std::string &path, const TextOptions &options) {
  check_options(options);  // before reading: a bad spec is the likelier mistake
  std::vector<unsigned char> bytes = read_file(path);
  return parse_text(bytes.data(), bytes.size(), path, options);
}

}  // namespace nnrt::data
