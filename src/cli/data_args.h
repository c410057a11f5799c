// How the nnrt command finds data: "fashion-mnist" (Debian's dataset-fashion-mnist), a folder of
// IDX files, a CSV file, or a JSON dataset spec (nnrt_dataset_load's) given inline or in a file.
#pragma once

#include <string>

#include "nnrt/nnrt.hpp"

namespace nnrt_cli {

struct DataSpecs {
  std::string train;  // JSON specs for nnrt_dataset_load
  std::string test;   // "" when there is no test set
  std::string description;
};

// Resolves --data (and an optional --test for CSV files) into dataset specs. `limit` > 0 keeps the
// first examples of the training set. Throws std::runtime_error saying what was looked for.
DataSpecs resolve_data(const std::string &data, const std::string &test, long limit);


// Reads a whole file; throws std::runtime_error naming it.
std::string read_file(const std::string &path);

}  // namespace nnrt_cli
