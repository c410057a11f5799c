#include "backend/comm/communicator.h"

#include "backend/comm/comm_registry.h"
#include "core/error.h"

namespace nnrt::backend {

std::shared_ptr<Communicator> Communicator::open(const std::string &name, const std::string &options_json,
                                                 double timeout_s) {
  const nnrt_comm_v1 &table = CommRegistry::instance().find(name);
  std::shared_ptr<Communicator> c(new Communicator());
  c->name_ = name;
  c->table_ = &table;
  c->timeout_s_ = timeout_s;
  take_comm_error();
  nnrt_status s = table.create(options_json.c_str(), timeout_s, &c->comm_);
  if (s != NNRT_OK || !c->comm_) {
    std::string why = take_comm_error();
    c->comm_ = nullptr;
    fail(s != NNRT_OK ? s : NNRT_ERR_BACKEND, "the \"", name, "\" communicator could not start: ",
         why.empty() ? "no reason given" : why);
  }
  c->info_.struct_size = sizeof c->info_;
  if (table.info(c->comm_, &c->info_) != NNRT_OK) c->raise(NNRT_ERR_BACKEND, "info");
  return c;
}

Communicator::~Communicator() {
  if (comm_) table_->destroy(comm_);
}

void Communicator::raise(nnrt_status s, const char *what) const {
  std::string why = take_comm_error();
  if (why.empty()) why = table_->last_error(comm_);
  fail(s, "distributed training (", name_, ", rank ", info_.rank, " of ", info_.size, "): ", what, ": ",
       why.empty() ? "no reason given" : why);
}

void Communicator::allreduce_sum(void *buf, size_t count, nnrt_dtype dtype) {
  if (nnrt_status s = table_->allreduce_sum(comm_, buf, count, dtype, nullptr)) raise(s, "all-reduce");
}

Communicator::Request Communicator::start_allreduce(void *buf, size_t count, nnrt_dtype dtype) {
  nnrt_comm_request *r = nullptr;
  if (nnrt_status s = table_->allreduce_sum(comm_, buf, count, dtype, &r)) raise(s, "all-reduce");
  return r;
}

void Communicator::wait(Request r) {
  if (nnrt_status s = table_->wait(comm_, r, timeout_s_)) raise(s, "waiting for an all-reduce");
}

void Communicator::broadcast(void *buf, size_t bytes, int32_t root) {
  if (nnrt_status s = table_->broadcast(comm_, buf, bytes, root, nullptr)) raise(s, "broadcast");
}

void Communicator::allgather(const void *send, size_t bytes, void *recv) {
  if (nnrt_status s = table_->allgather(comm_, send, bytes, recv, nullptr)) raise(s, "all-gather");
}

void Communicator::barrier() {
  if (nnrt_status s = table_->barrier(comm_, nullptr)) raise(s, "barrier");
}

}  // namespace nnrt::backend
