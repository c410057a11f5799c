// IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed.
//
// An IDX file is a 4-byte magic number (0, 0, element type code, number of dims), the dims as
// big-endian u32, then the elements, big-endian, row-major. Type codes: 0x08 u8, 0x09 i8, 0x0B
// i16, 0x0C i32, 0x0D f32, 0x0E f64. Nothing in a file is trusted before it is checked: the magic,
// the dims (none zero, no overflow), and the data size against the header, to the byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/feature_type.h"

namespace nnrt::data {

struct IdxArray {
  FeatureType type = FeatureType::U8;
  std::vector<int64_t> dims;        // as in the file: dims[0] counts the examples
  int64_t kept = 0;                 // examples read into `data` (the first ones)
  std::vector<unsigned char> data;  // `kept` examples, native byte order
};

// Parses IDX bytes (plain or gzip) and keeps the first `limit` examples (all when limit <= 0);
// the rest are read only to check the file's size. `name` is used in messages. Throws
// NNRT_ERR_CORRUPT saying what is wrong and where.
IdxArray parse_idx(const unsigned char *bytes, size_t size, const std::string &name, int64_t limit);

// Reads and parses an IDX file. Throws NNRT_ERR_IO or NNRT_ERR_CORRUPT.
IdxArray read_idx_file(const std::string &path, int64_t limit);

// Pairs an images file and a labels file: equal counts, images [N, rows, cols] become features
// [N, 1, rows, cols] (other ranks keep their dims), integer labels [N] become class indices
// (>= 0), float labels [N, ...] become targets. Values are checked (finite floats, no negative
// class). Throws NNRT_ERR_CORRUPT naming the file.
DatasetParts idx_dataset_parts(IdxArray images, IdxArray labels, const std::string &images_name,
                               const std::string &labels_name, double scale);

}  // namespace nnrt::data
