// A communicator (nnrt_comm.h) opened for distributed training: the group of ranks a trainer
// belongs to. Wraps a plugin's table; every failure is thrown as nnrt::Error with the plugin's
// message. Used by one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "nnrt/nnrt_comm.h"

namespace nnrt::backend {

class Communicator {
 public:
  // Loads the plugin `name` and joins the group. Throws NNRT_ERR_BACKEND when the plugin is missing
  // or the engine cannot start.
  static std::shared_ptr<Communicator> open(const std::string &name, const std::string &options_json, double timeout_s);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  const std::string &name() const { return name_; }
  const char *engine_version() const { return table_->version ? table_->version : ""; }
  bool host_memory() const { return (table_->flags & NNRT_COMM_HOST_MEMORY) != 0; }
  int32_t rank() const { return info_.rank; }
  int32_t size() const { return info_.size; }
  int32_t local_rank() const { return info_.local_rank; }
  double timeout() const { return timeout_s_; }

  // In flight: started by start_allreduce, finished by wait (exactly once).
  using Request = nnrt_comm_request *;

  void allreduce_sum(void *buf, size_t count, nnrt_dtype dtype);
  Request start_allreduce(void *buf, size_t count, nnrt_dtype dtype);
  void wait(Request r);
  void broadcast(void *buf, size_t bytes, int32_t root);
  void allgather(const void *send, size_t bytes, void *recv);
  void barrier();

 private:
  Communicator() = default;
  [[noreturn]] void raise(nnrt_status s, const char *what) const;

  std::string name_;
  const nnrt_comm_v1 *table_ = nullptr;
  nnrt_comm *comm_ = nullptr;
  nnrt_comm_info info_{};
  double timeout_s_ = 60;
};

}  // namespace nnrt::backend
