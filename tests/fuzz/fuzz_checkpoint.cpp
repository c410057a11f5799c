// Fuzz target: the checkpoint reader. Any input either parses or is refused with NNRT_ERR_CORRUPT
// (NNRT_ERR_VERSION for a newer format). What parses must survive a round trip: written again by
// nnrt, it parses to the same tensors and metadata.
#include "fuzz_target.h"
#include "io/checkpoint.h"

using namespace nnrt;

namespace {

void check_round_trip(const io::Checkpoint &c) {
  std::vector<unsigned char> again = io::encode_checkpoint(c);
  io::Checkpoint back = io::parse_checkpoint(again.data(), again.size(), "re-encoded");
  bool same = back.tensors.size() == c.tensors.size();
  for (size_t i = 0; same && i < c.tensors.size(); ++i) {
    const io::TensorRecord &a = c.tensors[i], &b = back.tensors[i];
    same = a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
  }
  for (const auto &[key, value] : c.metadata) {
    bool nnrt_rewrites = key == io::kFormatKey || key == io::kChecksumKey || key == io::kHeaderChecksumKey;
    same = same && (nnrt_rewrites || (back.metadata.count(key) && back.metadata.at(key) == value));
  }
  if (!same) {
    std::fprintf(stderr, "a parsed checkpoint did not survive being written and read again\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    check_round_trip(io::parse_checkpoint(data, size, "fuzz.safetensors"));
  } catch (const Error &e) {
    fuzz::expect_status(e, NNRT_ERR_CORRUPT, NNRT_ERR_VERSION);
  }
  return 0;
}
