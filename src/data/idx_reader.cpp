#include "data/idx_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "data/byte_reader.h"
#include "data/feature_convert.h"

namespace nnrt::data {

namespace {

constexpr int kMaxIdxDims = NNRT_MAX_DIMS;
// Data is read in pieces of this size, so that a header promising terabytes costs no more memory
// than the data that is really there (plus one piece).
constexpr uint64_t kReadPiece = uint64_t{16} << 20;
constexpr uint64_t kReserveCap = uint64_t{1} << 30;

bool type_of_code(unsigned char code, FeatureType *type) {
  switch (code) {
    case 0x08: *type = FeatureType::U8; return true;
    case 0x09: *type = FeatureType::I8; return true;
    case 0x0B: *type = FeatureType::I16; return true;
    case 0x0C: *type = FeatureType::I32; return true;
    case 0x0D: *type = FeatureType::F32; return true;
    case 0x0E: *type = FeatureType::F64; return true;
    default: return false;
  }
}

std::string hex(uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llX", digits, static_cast<unsigned long long>(v));
  return buf;
}

std::string dims_text(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

uint32_t big_endian_u32(const unsigned char *p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// IDX elements are big-endian; reverse each element's bytes on a little-endian host.
void to_native_order(unsigned char *data, size_t bytes, size_t element_size) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  (void)data, (void)bytes, (void)element_size;
#else
  if (element_size == 1) return;
  for (size_t i = 0; i + element_size <= bytes; i += element_size) std::reverse(data + i, data + i + element_size);
#endif
}

// a * b, or false when it exceeds `limit`.
bool multiply_within(uint64_t a, uint64_t b, uint64_t limit, uint64_t *out) {
  if (b != 0 && a > limit / b) return false;
  *out = a * b;
  return *out <= limit;
}

}  // namespace

IdxArray parse_idx(const unsigned char *bytes, size_t size, const std::string &name, int64_t limit) {
  ByteReader in(bytes, size, name);
  const char *decompressed = in.compressed() ? " (decompressed)" : "";

  unsigned char magic[4];
  size_t got = in.read(magic, 4);
  if (got < 4) {
    fail(NNRT_ERR_CORRUPT, name, ": truncated IDX header: expected a 4-byte magic number, found ", got, " bytes",
         decompressed);
  }
  if (magic[0] != 0 || magic[1] != 0) {
    fail(NNRT_ERR_CORRUPT, name, ": not an IDX file: the magic number is ", hex(big_endian_u32(magic), 8),
         "; expected 0x0000TTDD (two zero bytes, a type code, the number of dims), e.g. 0x00000803 for images");
  }
  IdxArray out;
  if (!type_of_code(magic[2], &out.type)) {
    fail(NNRT_ERR_CORRUPT, name, ": unknown IDX element type code ", hex(magic[2], 2), " (magic number ",
         hex(big_endian_u32(magic), 8),
         "); expected 0x08 (u8), 0x09 (i8), 0x0B (i16), 0x0C (i32), 0x0D (f32) or 0x0E (f64)");
  }
  const int ndims = magic[3];
  if (ndims < 1 || ndims > kMaxIdxDims) {
    fail(NNRT_ERR_CORRUPT, name, ": the IDX header declares ", ndims, " dims; expected 1 to ", kMaxIdxDims,
         " (dim 0 counts the examples)");
  }
  const uint64_t header_bytes = 4 + 4 * static_cast<uint64_t>(ndims);
  unsigned char raw_dims[4 * kMaxIdxDims];
  got = in.read(raw_dims, 4 * static_cast<size_t>(ndims));
  if (got < 4 * static_cast<size_t>(ndims)) {
    fail(NNRT_ERR_CORRUPT, name, ": truncated IDX header: ", ndims, " dims need ", header_bytes,
         " header bytes, found ", 4 + got, decompressed);
  }
  for (int i = 0; i < ndims; ++i) out.dims.push_back(big_endian_u32(raw_dims + 4 * i));
  for (int i = 0; i < ndims; ++i) {
    if (out.dims[i] == 0) {
      fail(NNRT_ERR_CORRUPT, name, ": dim ", i, " of ", dims_text(out.dims), " is 0; ",
           i == 0 ? "expected at least one example" : "expected examples with values");
    }
  }

  // Sizes, checked for overflow: element counts fit int64, byte counts fit size_t.
  const uint64_t element_size = feature_type_size(out.type);
  const uint64_t max_bytes = std::min<uint64_t>(INT64_MAX, SIZE_MAX) - header_bytes;
  uint64_t example_bytes = element_size;
  uint64_t data_bytes = 0;
  bool fits = true;
  for (int i = 1; i < ndims && fits; ++i) {
    fits = multiply_within(example_bytes, static_cast<uint64_t>(out.dims[i]), max_bytes, &example_bytes);
  }
  fits = fits && multiply_within(example_bytes, static_cast<uint64_t>(out.dims[0]), max_bytes, &data_bytes);
  if (!fits) {
    fail(NNRT_ERR_CORRUPT, name, ": dims ", dims_text(out.dims), " of ", feature_type_name(out.type),
         " describe more data than can be addressed");
  }
  const uint64_t total = header_bytes + data_bytes;
  auto truncated = [&](uint64_t found) {
    fail(NNRT_ERR_CORRUPT, name, ": truncated: the header's dims ", dims_text(out.dims), " of ",
         feature_type_name(out.type), " need ", total, " bytes (", header_bytes, " header + ", data_bytes,
         " data), found ", found, decompressed);
  };

  out.kept = limit > 0 ? std::min<int64_t>(out.dims[0], limit) : out.dims[0];
  const uint64_t keep_bytes = static_cast<uint64_t>(out.kept) * example_bytes;
  // Reserving what the data can really hold saves the copies of growing; beyond kReserveCap the
  // vector grows as it fills, so a header that lies about a huge gzip file cannot make us ask for
  // gigabytes up front.
  out.data.reserve(static_cast<size_t>(std::min({keep_bytes, in.max_remaining(), kReserveCap})));
  while (out.data.size() < keep_bytes) {
    size_t old = out.data.size();
    // No bigger than what may be left, so that a short file is found out before a big allocation.
    size_t piece =
        static_cast<size_t>(std::min({keep_bytes - old, kReadPiece, std::max<uint64_t>(in.max_remaining(), 1)}));
    out.data.resize(old + piece);
    size_t n = in.read(out.data.data() + old, piece);
    if (n < piece) truncated(in.position());
  }
  if (in.skip(data_bytes - keep_bytes) < data_bytes - keep_bytes) truncated(in.position());
  unsigned char extra;
  if (in.read(&extra, 1) == 1) {
    if (in.compressed()) {
      fail(NNRT_ERR_CORRUPT, name, ": more data than the header's dims ", dims_text(out.dims), " of ",
           feature_type_name(out.type), " describe: expected ", total, " bytes", decompressed, ", found more");
    }
    fail(NNRT_ERR_CORRUPT, name, ": more data than the header's dims ", dims_text(out.dims), " of ",
         feature_type_name(out.type), " describe: expected ", total, " bytes, found ", size);
  }
  to_native_order(out.data.data(), out.data.size(), element_size);
  return out;
}

IdxArray read_idx_file(const std::string &path, int64_t limit) {
  std::vector<unsigned char> bytes = read_file(path);
  return parse_idx(bytes.data(), bytes.size(), path, limit);
}

namespace {

Shape features_shape(const std::vector<int64_t> &dims) {
  Shape s;
  // [N, rows, cols] is a set of one-channel images: [1, rows, cols] each, as conv2d wants (NCHW).
  if (dims.size() == 3) s.dims[s.rank++] = 1;
  for (size_t i = 1; i < dims.size(); ++i) s.dims[s.rank++] = dims[i];
  return s;
}

void check_finite(const IdxArray &a, const std::string &name, const char *what) {
  int64_t per_example = static_cast<int64_t>(a.data.size() / feature_type_size(a.type)) / a.kept;
  int64_t bad = first_non_finite(a.type, a.data.data(), a.kept * per_example);
  if (bad >= 0) {
    fail(NNRT_ERR_CORRUPT, name, ": ", what, " of example ", bad / per_example, " (element ", bad % per_example,
         ") is ", feature_value(a.type, a.data.data(), bad), "; expected finite values");
  }
}

}  // namespace

DatasetParts idx_dataset_parts(IdxArray images, IdxArray labels, const std::string &images_name,
                               const std::string &labels_name, double scale) {
  if (images.dims[0] != labels.dims[0]) {
    fail(NNRT_ERR_CORRUPT, "the images file ", images_name, " holds ", images.dims[0], " examples but the labels file ",
         labels_name, " holds ", labels.dims[0], "; expected the same count");
  }
  if (images.kept != labels.kept) {
    fail(NNRT_ERR_INTERNAL, "IDX images and labels were read with different limits (", images.kept, " and ",
         labels.kept, ")");
  }
  DatasetParts parts;
  parts.size = images.kept;
  parts.scale = scale;
  parts.feature_type = images.type;
  parts.example_shape = features_shape(images.dims);
  check_finite(images, images_name, "the value");
  parts.features = std::move(images.data);

  const int64_t n = labels.kept;
  if (!feature_type_is_float(labels.type)) {
    if (labels.dims.size() != 1) {
      fail(NNRT_ERR_CORRUPT, labels_name, ": integer labels must be one class index per example, dims [N]; got ",
           dims_text(labels.dims), " of ", feature_type_name(labels.type));
    }
    parts.classes.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double v = feature_value(labels.type, labels.data.data(), i);
      if (v < 0) {
        fail(NNRT_ERR_CORRUPT, labels_name, ": the label of example ", i, " is ", v, "; expected a class index >= 0");
      }
      parts.classes[static_cast<size_t>(i)] = static_cast<int64_t>(v);
    }
  } else {
    check_finite(labels, labels_name, "the target");
    parts.class_labels = false;
    std::vector<int64_t> target_dims(labels.dims.begin() + 1, labels.dims.end());
    parts.target_shape = Shape::of(target_dims);
    size_t count = labels.data.size() / feature_type_size(labels.type);
    parts.targets.resize(count);
    for (size_t i = 0; i < count; ++i) {
      double v = feature_value(labels.type, labels.data.data(), static_cast<int64_t>(i));
      parts.targets[i] = static_cast<float>(v);
      if (!std::isfinite(parts.targets[i])) {
        fail(NNRT_ERR_CORRUPT, labels_name, ": target value ", i, " is ", v, ", beyond the f32 range");
      }
    }
  }
  return parts;
}

}  // namespace nnrt::data
