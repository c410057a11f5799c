#include "data/csv_reader.h"

#include <cctype>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "data/byte_reader.h"

namespace nnrt::data {

namespace {

// Class indices beyond this are refused: they would only come from a wrong label_column, and a
// model or a confusion matrix that big is never what was meant.
constexpr int64_t kMaxClassIndex = INT32_MAX;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A field as found, for messages: at most 40 characters, control characters shown as '?'.
std::string excerpt(const char *b, const char *e) {
  std::string s;
  for (const char *p = b; p < e && s.size() < 40; ++p) {
    s += (static_cast<unsigned char>(*p) < 0x20 || *p == 0x7f) ? '?' : *p;
  }
  if (e - b > 40) s += "...";
  return "\"" + s + "\"";
}

// from_chars takes no leading '+'; accept one in front of a digit or a point.
const char *skip_plus(const char *b, const char *e) {
  if (b < e && *b == '+' && b + 1 < e && (std::isdigit(static_cast<unsigned char>(b[1])) || b[1] == '.')) return b + 1;
  return b;
}

// Whether decimal text that parsed as a number (sign, digits, point, exponent) is at least 1 in
// magnitude: that tells an overflow from an underflow when even f64 cannot hold the value.
bool decimal_magnitude_positive(const char *b, const char *e) {
  if (b < e && (*b == '-' || *b == '+')) ++b;
  int64_t magnitude = 0;  // the decimal exponent of the leading digit
  int64_t integer_digits = 0, zeros_after_point = 0;
  bool leading = true, in_fraction = false;
  for (; b < e && *b != 'e' && *b != 'E'; ++b) {
    if (*b == '.') {
      in_fraction = true;
    } else if (leading && *b == '0') {
      if (in_fraction) ++zeros_after_point;
    } else {
      if (!in_fraction) ++integer_digits;
      leading = false;
    }
  }
  magnitude = integer_digits > 0 ? integer_digits - 1 : -(zeros_after_point + 1);
  if (b < e) {
    ++b;  // past 'e'
    bool negative = b < e && *b == '-';
    if (b < e && (*b == '-' || *b == '+')) ++b;
    int64_t exponent = 0;
    auto r = std::from_chars(b, e, exponent);
    // An exponent this large outweighs any count of digits a file can hold, and adding it could
    // overflow: its sign decides alone.
    if (r.ec == std::errc::result_out_of_range || exponent > (int64_t{1} << 50)) return !negative;
    magnitude += negative ? -exponent : exponent;
  }
  return magnitude >= 0;
}

enum class NumberError { kNone, kEmpty, kNotANumber, kNotFinite, kOutOfRange };

NumberError parse_f32(const char *b, const char *e, float *out) {
  if (b == e) return NumberError::kEmpty;
  const char *s = skip_plus(b, e);
  float v = 0;
  auto r = std::from_chars(s, e, v, std::chars_format::general);
  if (r.ptr != e || r.ec == std::errc::invalid_argument) return NumberError::kNotANumber;
  if (r.ec == std::errc::result_out_of_range) {
    // Too small for f32 is fine (it rounds to a subnormal or zero, as any float parser would);
    // too large is not. from_chars leaves the value alone when out of range, so the f64 reading
    // decides, and for text beyond even f64, the decimal exponent.
    double d = 0;
    auto rd = std::from_chars(s, e, d, std::chars_format::general);
    if (rd.ec == std::errc::result_out_of_range) {
      if (decimal_magnitude_positive(s, e)) return NumberError::kOutOfRange;
      d = *s == '-' ? -0.0 : 0.0;
    } else if (!(std::fabs(d) <= FLT_MAX)) {
      return NumberError::kOutOfRange;
    }
    v = static_cast<float>(d);
  }
  if (!std::isfinite(v)) return NumberError::kNotFinite;
  *out = v;
  return NumberError::kNone;
}

// A class index: an integer >= 0, also written as a float with no fraction ("3.0", "3e0").
bool parse_class(const char *b, const char *e, int64_t *out) {
  const char *s = skip_plus(b, e);
  int64_t i = 0;
  auto r = std::from_chars(s, e, i);
  if (r.ec == std::errc() && r.ptr == e) {
    *out = i;
    return i >= 0 && i <= kMaxClassIndex;
  }
  double d = 0;
  auto rd = std::from_chars(s, e, d, std::chars_format::general);
  if (rd.ec != std::errc() || rd.ptr != e || !(d >= 0 && d <= kMaxClassIndex) || d != std::floor(d)) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

class CsvParser {
 public:
  CsvParser(const std::string &name, const CsvOptions &options) : name_(name), options_(options) {}

  DatasetParts parse(const char *text, const char *end) {
    if (end - text >= 3 && std::memcmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3;  // UTF-8 byte order mark
    int64_t line_no = 0;
    for (const char *p = text; p < end;) {
      const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char *line_end = nl ? nl : end;
      const char *next = nl ? nl + 1 : end;
      if (line_end > p && line_end[-1] == '\r') --line_end;
      ++line_no;
      bool skip = (line_no == 1 && options_.header) || is_blank_line(p, line_end);
      if (!skip) {
        parse_line(p, line_end, line_no);
        if (options_.limit > 0 && parts_.size == options_.limit) break;
      }
      p = next;
    }
    if (parts_.size == 0) {
      fail(NNRT_ERR_CORRUPT, name_, ": no examples: ",
           line_no == 0 ? "the file is empty" : "the file has no line of numbers (only a header or blank lines)");
    }
    return std::move(parts_);
  }

 private:
  static bool is_blank_line(const char *b, const char *e) {
    for (; b < e; ++b)
      if (!is_blank(*b)) return false;
    return true;
  }

  [[noreturn]] void field_error(int64_t line_no, const char *line, const char *b, const char *e, int64_t field,
                                const std::string &what) const {
    fail(NNRT_ERR_CORRUPT, name_, ":", line_no, ":", b - line + 1, ": field ", field + 1, " is ", excerpt(b, e), "; ",
         what);
  }

  void first_line(const char *line, const char *end, int64_t line_no) {
    int64_t count = count_fields(line, end);
    if (count < 2) {
      fail(NNRT_ERR_CORRUPT, name_, ":", line_no, ": expected at least 2 fields (a label and a feature), found ",
           count);
    }
    int64_t column = options_.label_column < 0 ? count + options_.label_column : options_.label_column;
    if (column < 0 || column >= count) {
      fail(NNRT_ERR_INVALID_ARGUMENT, "label_column ", options_.label_column, " is outside the ", count, " columns of ",
           name_, ":", line_no);
    }
    columns_ = count;
    label_column_ = column;
    first_line_no_ = line_no;
    parts_.feature_type = FeatureType::F32;
    parts_.example_shape = Shape{count - 1};
    parts_.scale = options_.scale;
  }

  static int64_t count_fields(const char *line, const char *end) {
    int64_t count = 1;
    for (const char *p = line; (p = static_cast<const char *>(std::memchr(p, ',', static_cast<size_t>(end - p))));
         ++p) {
      ++count;
    }
    return count;
  }

  void parse_line(const char *line, const char *end, int64_t line_no) {
    if (columns_ == 0) first_line(line, end, line_no);
    int64_t found = count_fields(line, end);
    if (found != columns_) {
      fail(NNRT_ERR_CORRUPT, name_, ":", line_no, ": expected ", columns_, " fields (as on line ", first_line_no_,
           "), found ", found);
    }
    size_t row = parts_.features.size();
    parts_.features.resize(row + static_cast<size_t>(columns_ - 1) * sizeof(float));
    unsigned char *out = parts_.features.data() + row;
    const char *p = line;
    for (int64_t field = 0; field < columns_; ++field) {
      const char *sep = static_cast<const char *>(std::memchr(p, ',', static_cast<size_t>(end - p)));
      const char *b = p, *e = sep ? sep : end;
      while (b < e && is_blank(*b)) ++b;
      while (e > b && is_blank(e[-1])) --e;
      if (field == label_column_) {
        int64_t label;
        if (!parse_class(b, e, &label)) {
          field_error(line_no, line, b, e, field, "expected a class index (an integer from 0 to 2147483647)");
        }
        parts_.classes.push_back(label);
      } else {
        float v = 0;
        switch (parse_f32(b, e, &v)) {
          case NumberError::kNone: break;
          case NumberError::kEmpty: field_error(line_no, line, b, e, field, "expected a number, found an empty field");
          case NumberError::kNotANumber: field_error(line_no, line, b, e, field, "expected a number");
          case NumberError::kNotFinite: field_error(line_no, line, b, e, field, "expected a finite number");
          case NumberError::kOutOfRange: field_error(line_no, line, b, e, field, "it is beyond the f32 range");
        }
        std::memcpy(out, &v, sizeof v);
        out += sizeof v;
      }
      p = sep ? sep + 1 : end;
    }
    ++parts_.size;
  }

  const std::string &name_;
  const CsvOptions &options_;
  DatasetParts parts_;
  int64_t columns_ = 0;
  int64_t label_column_ = 0;
  int64_t first_line_no_ = 0;
};

}  // namespace

DatasetParts parse_csv(const unsigned char *bytes, size_t size, const std::string &name, const CsvOptions &options) {
  std::vector<unsigned char> inflated;
  if (is_gzip(bytes, size)) {
    ByteReader in(bytes, size, name);
    inflated = in.read_rest();
    bytes = inflated.data();
    size = inflated.size();
  }
  const char *text = reinterpret_cast<const char *>(bytes);
  return CsvParser(name, options).parse(text, text + size);
}

DatasetParts read_csv_file(const std::string &path, const CsvOptions &options) {
  std::vector<unsigned char> bytes = read_file(path);
  return parse_csv(bytes.data(), bytes.size(), path, options);
}

}  // namespace nnrt::data
