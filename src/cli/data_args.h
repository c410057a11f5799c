// How the nnrt command finds data: "fashion-mnist" (Debian's dataset-fashion-mnist), a folder of
// IDX files, a CSV file, "text:FILE" (a text's bytes as tokens, in windows as long as the model's
// input), or a JSON dataset spec (nnrt_dataset_load's) given inline or in a file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnrt/nnrt.hpp"

namespace nnrt_cli {

struct DataSpecs {
  std::string train;  // JSON specs for nnrt_dataset_load
  std::string test;   // "" when there is no test set
  std::string description;
  int64_t tokens_per_example = 0;  // text: the window (progress then shows tokens/s and perplexity)
};

// Resolves --data (and an optional --test for CSV and text files) into dataset specs. `limit` > 0
// keeps the first examples of the training set. `model_input` is the model's per-example input
// shape (nnrt_model_summary's "input"): a text's windows are as long as it, which must be [T]
// token ids. Throws std::runtime_error saying what was looked for.
DataSpecs resolve_data(const std::string &data, const std::string &test, long limit,
                       const std::vector<int64_t> &model_input);


// Reads a whole file; throws std::runtime_error naming it.
std::string read_file(const std::string &path);

}  // namespace nnrt_cli
