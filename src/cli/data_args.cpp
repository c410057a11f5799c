#include "data_args.h"

#include <algorithm>
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

bool starts_with(const std::string &s, const std::string &head) { return s.compare(0, head.size(), head) == 0; }

// "text:FILE": the window is the model's input length. The file's last tenth is held out as the
// test set, whose windows do not overlap; the training windows start every half window, so that
// each token is predicted once with a short context and once with a long one per epoch.
int64_t text_window(const std::string &arg, const std::vector<int64_t> &model_input) {
  if (model_input.size() != 1 || model_input[0] < 1) {
    std::string shape;
    for (int64_t d : model_input) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    throw std::runtime_error(arg + ": a text makes windows of T token ids for a model whose input is [T], but the model's input is [" +
                             shape + "]");
  }
  return model_input[0];
}

std::string text_spec(const std::string &path, int64_t window, const char *split, int64_t stride, long limit) {
  nlohmann::json j = {{"format", "text"}, {"path", path}, {"window", window}, {"stride", stride}, {"split", split}};
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

DataSpecs resolve_data(const std::string &data, const std::string &test, long limit,
                       const std::vector<int64_t> &model_input) {
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
  } else if (starts_with(data, "text:")) {
    std::string path = data.substr(5);
    if (!exists(path)) throw std::runtime_error("--data " + data + ": no such file: " + path);
    int64_t window = text_window("--data " + data, model_input);
    d.train = text_spec(path, window, "train", std::max<int64_t>(1, window / 2), limit);
    d.test = text_spec(path, window, "test", window, 0);
    d.tokens_per_example = window;
    d.description = "text " + path + " as bytes, windows of " + std::to_string(window) + " tokens (last 10% held out)";
  } else if (ends_with(data, ".csv")) {
    if (!exists(data)) throw std::runtime_error("no such file: " + data);
    d.train = csv_spec(data, limit);
    d.description = "CSV file " + data;
  } else if (ends_with(data, ".json") || (!data.empty() && data[0] == '{')) {
    d.train = data[0] == '{' ? data : read_file(data);
    d.description = "dataset spec " + (data[0] == '{' ? std::string("(inline)") : data);
  } else {
    throw std::runtime_error("--data " + data +
                             ": expected fashion-mnist, a folder of IDX files, a .csv file, text:FILE or a JSON dataset spec");
  }
  if (!test.empty()) {
    if (test == "none") {
      d.test.clear();
    } else if (starts_with(test, "text:")) {
      int64_t window = text_window("--test " + test, model_input);
      d.test = text_spec(test.substr(5), window, "all", window, 0);
    } else if (ends_with(test, ".csv")) {
      d.test = csv_spec(test, 0);
    } else if (is_dir(test)) {
      d.test = idx_spec(test, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 0);
    } else {
      d.test = test[0] == '{' ? test : read_file(test);
    }
  }
  return d;
}

}  // namespace nnrt_cli
