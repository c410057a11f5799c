// Text as a token dataset for language models: a file's bytes are the tokens (a byte-level
// vocabulary, 0..255), an example is a window of `window` tokens, and its labels are the same
// window shifted by one: at each position, the token that follows it. Windows start every `stride`
// bytes. gzip-compressed files are read too (Debian ships much of its text as .gz).
//
// A held-out tail makes a test set that shares no byte with the training windows: "split": "train"
// takes the windows of the file's first (1 - test_fraction) bytes, "test" those of the rest.
//
// Every window is stored (its bytes, and its labels as I64), so a dataset takes
// windows * window * 9 bytes: a larger stride keeps a large file small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace nnrt::data {

struct TextOptions {
  int64_t window = 0;          // tokens per example (>= 1)
  int64_t stride = 0;          // bytes between the starts of two windows (>= 1)
  std::string split = "all";   // "all", "train" or "test"
  double test_fraction = 0.1;  // the tail held out for "test" (and kept from "train"), in (0, 1)
  int64_t limit = 0;           // keep the first `limit` windows; <= 0: all
};

// Makes the windows of text (or gzip data holding it): features u8 [window] (scale 1, so a batch
// holds the byte values), labels I64 [window]. Throws NNRT_ERR_INVALID_ARGUMENT for bad options
// and for a text (or split) too short for one window and the byte after it (the message gives
// both lengths), NNRT_ERR_CORRUPT for damaged gzip data.
DatasetParts parse_text(const unsigned char *bytes, size_t size, const std::string &name, const TextOptions &options);

// Reads and parses a text file. Throws NNRT_ERR_IO (naming the file), or as parse_text.
DatasetParts read_text_file(const std::string &path, const TextOptions &options);

}  // namespace nnrt::data
