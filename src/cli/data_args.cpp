#include "data_args.h"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

#include "cli.h"

namespace nnrt_cli {

namespace {

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool is_dir(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The IDX file of a folder, plain or gzipped.
std::string idx_file(const std::string &dir, const std::string &stem) {
  for (const std::string &name : {stem + ".gz", stem}) {
    if (exists(dir + "/" + name)) return dir + "/" + name;
  }
  throw std::runtime_error("no " + stem + "(.gz) in " + dir);
}

std::string idx_spec(const std::string &dir, const std::string &images, const std::string &labels, long limit) {
  nlohmann::json j = {{"format", "idx"}, {"images", idx_file(dir, images)}, {"labels", idx_file(dir, labels)}};
  if (limit > 0) j["limit"] = limit;
  return j.dump();
}

std::string csv_spec(const std::string &path, long limit) {
  nlohmann::json j = {{"format", "csv"}, {"path", path}, {"header", false}};
  // A header line is detected by its first field not being a number.
  std::ifstream in(path);
  std::string first;
  if (in && std::getline(in, first)) {
    char *end = nullptr;
    std::string field = first.substr(0, first.find(','));
    std::strtod(field.c_str(), &end);
    if (field.empty() || end == field.c_str()) j["header"] = true;
  }
  if (limit > 0) j["limit"] = limit;
  return j.dump();
}

}  // namespace

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

DataSpecs resolve_data(const std::string &data, const std::string &test, long limit) {
  DataSpecs d;
  std::string dir;
  if (data == "fashion-mnist" || data == "fashion_mnist") {
    const char *env = std::getenv("NNRT_FASHION_MNIST");
    dir = env ? env : "/usr/share/datasets/fashion-mnist";
    if (!is_dir(dir)) {
      throw std::runtime_error("Fashion-MNIST is not at " + dir +
                               ": install Debian's dataset-fashion-mnist (scripts/setup does) or set NNRT_FASHION_MNIST");
    }
  } else if (is_dir(data)) {
    dir = data;
  }
  if (!dir.empty()) {
    d.train = idx_spec(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", limit);
    d.test = idx_spec(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 0);
    d.description = "IDX files in " + dir;
  } else if (ends_with(data, ".csv")) {
    if (!exists(data)) throw std::runtime_error("no such file: " + data);
    d.train = csv_spec(data, limit);
    d.description = "CSV file " + data;
  } else if (ends_with(data, ".json") || (!data.empty() && data[0] == '{')) {
    d.train = data[0] == '{' ? data : read_file(data);
    d.description = "dataset spec " + (data[0] == '{' ? std::string("(inline)") : data);
  } else {
    throw std::runtime_error("--data " + data +
                             ": expected fashion-mnist, a folder of IDX files, a .csv file or a JSON dataset spec");
  }
  if (!test.empty()) {
    if (test == "none") d.test.clear();
    else if (ends_with(test, ".csv")) d.test = csv_spec(test, 0);
    else if (is_dir(test)) d.test = idx_spec(test, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 0);
    else d.test = test[0] == '{' ? test : read_file(test);
  }
  return d;
}

}  // namespace nnrt_cli
