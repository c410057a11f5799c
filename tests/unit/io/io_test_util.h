// Shared by the checkpoint unit tests: a scratch folder, sample checkpoints, and a way to run a
// parse and get its status.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "io/checkpoint.h"

namespace nnrt::io::test {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it at the end.
class ScratchFolder {
 public:
  ScratchFolder() {
    const char *tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/nnrt-io-test-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~ScratchFolder() {
    for (const std::string &name : entries()) unlink((path_ + "/" + name).c_str());
    rmdir(path_.c_str());
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR *d = opendir(path_.c_str())) {
      while (dirent *e = readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.push_back(e->d_name);
      closedir(d);
    }
    return names;
  }

 private:
  std::string path_;
};

inline TensorRecord make_record(const std::string &name, nnrt_dtype dtype, Shape shape, uint32_t seed) {
  TensorRecord t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  std::mt19937 rng(seed);
  t.bytes.resize(static_cast<size_t>(shape.numel()) * dtype_size(dtype));
  for (unsigned char &b : t.bytes) b = static_cast<unsigned char>(rng());
  if (dtype == NNRT_DTYPE_BOOL)
    for (unsigned char &b : t.bytes) b &= 1;
  return t;
}

// A small checkpoint shaped like a real one: a config, trainer state, float parameters and a few
// tensors of other dtypes.
inline Checkpoint sample_checkpoint() {
  Checkpoint c;
  c.metadata[kConfigKey] = R"({"input":[1,8,8],"seed":7,"layers":[{"type":"conv2d","filters":2,"kernel":[3,3]},)"
                           R"({"type":"flatten"},{"type":"output","units":3,"activation":"softmax","loss":"nll"}]})";
  c.metadata[kTrainerKey] = R"({"optimizer":"adam","iteration":12})";
  c.tensors.push_back(make_record("layer0.weight", NNRT_DTYPE_F32, {2, 1, 3, 3}, 1));
  c.tensors.push_back(make_record("layer0.bias", NNRT_DTYPE_F32, {2}, 2));
  c.tensors.push_back(make_record("layer2.weight", NNRT_DTYPE_F32, {3, 72}, 3));
  c.tensors.push_back(make_record("optim.steps", NNRT_DTYPE_I64, {3}, 4));
  c.tensors.push_back(make_record("half", NNRT_DTYPE_BF16, {5}, 5));
  return c;
}

// The status a parse of `bytes` ends with (NNRT_OK if it succeeds); the message goes to *message.
inline nnrt_status parse_status(const std::vector<unsigned char> &bytes, std::string *message = nullptr) {
  try {
    parse_checkpoint(bytes.data(), bytes.size(), "test");
    return NNRT_OK;
  } catch (const Error &e) {
    if (message) *message = e.what();
    return e.status();
  }
}

inline uint64_t header_length(const std::vector<unsigned char> &bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  return n;
}

}  // namespace nnrt::io::test
