// The backends of the conformance suite: finding the ones to test, the host services they get,
// and running one op on an opened device through the plugin ABI only (nnrt_backend.h).
#pragma once

#include <string>
#include <vector>

#include "nnrt/nnrt_backend.h"
#include "tensors.h"

namespace nnrt::conformance {

struct Case;

// A backend to test and where it came from. table is NULL when it could not be loaded (error
// says why).
struct BackendSource {
  std::string label;  // the plugin path
  nnrt_backend_entry_fn entry = nullptr;
  const nnrt_backend_v1 *table = nullptr;
  std::string error;
};

// How the suite finds the backends to test: the plugin files named on the command line, or else
// in NNRT_CONFORMANCE_BACKENDS (':'-separated). This is the one function to change when the
// suite moves to the host's plugin discovery.
std::vector<BackendSource> find_backends_under_test(const std::vector<std::string> &plugin_paths);

// The reference backend, the oracle.
BackendSource reference_backend();

// The host services given to every backend: those of tests/support/test_host.h, with log
// messages kept (and printed only when verbose) instead of written to stderr.
const nnrt_host_api *conformance_host();
void set_log_verbose(bool verbose);

// Checks a plugin's table and entry point against the ABI: the fields it must set, the refusal
// of a host of another ABI major with a message naming both versions. Returns the problems.
std::vector<std::string> check_abi(const BackendSource &b);

// One opened device of a backend.
class Device {
 public:
  Device(const nnrt_backend_v1 *table, int threads, bool deterministic = false);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const nnrt_backend_v1 &table() const { return *table_; }
  bool opened() const { return instance_ != nullptr; }
  const std::string &open_error() const { return open_error_; }
  std::string description() const;  // name, version, device name
  bool host_memory() const { return (table_->flags & NNRT_BACKEND_HOST_MEMORY) != 0; }

  bool supports(const nnrt_op_desc &d) const;
  // op_create's verdict on a descriptor supports() refused: "" if it (wrongly) accepted it,
  // else its error message.
  std::string create_refusal(const nnrt_op_desc &d) const;

  // Runs a case: inputs as given, outputs pre-filled (read-write outputs hold their data). With
  // c.alias_input >= 0, output 0 is used as that input's buffer too (it must hold the input's
  // data). `copies` > 1 runs that many op_run calls at once from as many threads, on one op, each
  // on its own copy of the tensors; outputs then receive copy 0's results and the others go to
  // extra_outputs. Returns "" or what failed.
  //
  // Every run gets a workspace of its own, filled with a poison pattern before anything runs (NaN
  // bytes when the case's seed is odd, a large finite value when it is even), so that a result
  // computed from workspace memory the op never wrote shows. With `warmup_inputs`, the op first
  // runs once on those inputs (same shapes, other data) in copy 0's workspace and then, without
  // clearing it, on the case's inputs: what a previous run left behind must not leak into the next.
  std::string run(const Case &c, const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                  int copies = 1, std::vector<std::vector<HostTensor>> *extra_outputs = nullptr,
                  const std::vector<HostTensor> *warmup_inputs = nullptr) const;

 private:
  class Workspace;
  std::string run_once(const Case &c, nnrt_backend_op *op, const Workspace &ws, const std::vector<HostTensor> &inputs,
                       std::vector<HostTensor> &outputs) const;
  const nnrt_backend_v1 *table_;
  nnrt_backend_instance *instance_ = nullptr;
  nnrt_host_pool *pool_ = nullptr;
  nnrt_stream *stream_ = nullptr;
  std::string open_error_;
};

}  // namespace nnrt::conformance
