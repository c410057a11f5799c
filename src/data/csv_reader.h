// CSV files of numbers: one example per line, one column the class index, the others features.
//
// Fields are separated by commas, with optional spaces or tabs around them. Lines end in \n or
// \r\n; the last may lack its newline; blank lines are skipped; a UTF-8 byte order mark is
// ignored. Numbers are read with std::from_chars, so the C locale's decimal separator (a program
// may have called setlocale) never matters. gzip-compressed files are read too.
#pragma once

#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace nnrt::data {

struct CsvOptions {
  int64_t label_column = 0;  // negative counts from the end: -1 is the last column
  bool header = false;       // skip the first line
  int64_t limit = 0;         // keep the first `limit` examples; <= 0: all
  double scale = 1;          // multiplies every feature when a batch is made
};

// Parses CSV text (or gzip data holding it). Features become f32 [columns - 1]. Throws
// NNRT_ERR_CORRUPT with "name:line:column" and what was found (a field that is not a number, NaN or
// infinity, a line with another number of fields, a label that is not an integer >= 0, no
// examples), and NNRT_ERR_INVALID_ARGUMENT for a label_column outside the columns.
DatasetParts parse_csv(const unsigned char *bytes, size_t size, const std::string &name, const CsvOptions &options);

// Reads and parses a CSV file. Throws NNRT_ERR_IO, NNRT_ERR_CORRUPT or NNRT_ERR_INVALID_ARGUMENT.
DatasetParts read_csv_file(const std::string &path, const CsvOptions &options);

}  // namespace nnrt::data
