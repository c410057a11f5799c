#include "liveness.h"

#include <cstdio>

namespace nnrt::comm_mpi {

int Liveness::attach(MPI_Comm comm, int rank, int size) {
  rank_ = rank;
  size_ = size;
  int code = MPI_Comm_dup(comm, &probe_);
  if (code != MPI_SUCCESS) return code;
  MPI_Comm_set_errhandler(probe_, MPI_ERRORS_RETURN);
  return MPI_Irecv(&ping_in_, 1, MPI_INT64_T, MPI_ANY_SOURCE, kPingTag, probe_, &ping_receive_);
}

void Liveness::detach() {
  if (probe_ == MPI_COMM_NULL) return;
  stop_listening();
  for (Answer &a : answers_) MPI_Wait(&a.request, MPI_STATUS_IGNORE);
  answers_.clear();
  MPI_Comm_free(&probe_);
}

void Liveness::stop_listening() {
  if (ping_receive_ == MPI_REQUEST_NULL) return;
  MPI_Cancel(&ping_receive_);
  MPI_Wait(&ping_receive_, MPI_STATUS_IGNORE);  // a cancelled receive completes locally
}

void Liveness::poll() {
  if (probe_ == MPI_COMM_NULL) return;
  answer_pings();
  if (diagnosis_.running) advance_diagnosis();
}

void Liveness::answer_pings() {
  // Answers that went out; a prober that died may never take its answer: those stay listed.
  for (auto it = answers_.begin(); it != answers_.end();) {
    int done = 0;
    if (MPI_Test(&it->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
      it = answers_.erase(it);
    } else {
      ++it;
    }
  }
  while (ping_receive_ != MPI_REQUEST_NULL) {
    int arrived = 0;
    MPI_Status status;
    if (MPI_Test(&ping_receive_, &arrived, &status) != MPI_SUCCESS || !arrived) return;
    Answer &a = answers_.emplace_back();
    a.message = {ping_in_, started_};
    MPI_Isend(a.message.data(), 2, MPI_INT64_T, status.MPI_SOURCE, kPongTag, probe_, &a.request);
    MPI_Irecv(&ping_in_, 1, MPI_INT64_T, MPI_ANY_SOURCE, kPingTag, probe_, &ping_receive_);
  }
}

void Liveness::begin_diagnosis(int64_t waiting_in, double window_s) {
  Diagnosis &d = diagnosis_;
  d = Diagnosis();
  d.running = true;
  d.id = ping_out_ = ++next_id_;
  d.waiting_in = waiting_in;
  d.window_s = window_s;
  d.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                       std::chrono::duration<double>(window_s));
  d.pings.assign(size_, MPI_REQUEST_NULL);
  d.pongs.assign(size_, MPI_REQUEST_NULL);
  d.replies.assign(size_, {0, 0});
  d.answered.assign(size_, false);
  if (probe_ == MPI_COMM_NULL) {
    finish_diagnosis();
    return;
  }
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    // A failed send or receive leaves the rank unanswered, which is what it is.
    MPI_Irecv(d.replies[r].data(), 2, MPI_INT64_T, r, kPongTag, probe_, &d.pongs[r]);
    MPI_Isend(&ping_out_, 1, MPI_INT64_T, r, kPingTag, probe_, &d.pings[r]);
  }
}

void Liveness::advance_diagnosis() {
  Diagnosis &d = diagnosis_;
  bool waiting = false;
  for (int r = 0; r < size_; ++r) {
    if (d.pongs[r] == MPI_REQUEST_NULL) continue;
    int arrived = 0;
    if (MPI_Test(&d.pongs[r], &arrived, MPI_STATUS_IGNORE) != MPI_SUCCESS) continue;
    if (!arrived) {
      waiting = true;
    } else if (d.replies[r][0] == d.id) {
      d.answered[r] = true;
    } else {  // the answer to an earlier probe: listen again
      MPI_Irecv(d.replies[r].data(), 2, MPI_INT64_T, r, kPongTag, probe_, &d.pongs[r]);
      waiting = true;
    }
  }
  if (!waiting || std::chrono::steady_clock::now() >= d.deadline) finish_diagnosis();
}

void Liveness::finish_diagnosis() {
  Diagnosis &d = diagnosis_;
  for (int r = 0; r < size_; ++r) {
    if (d.pongs[r] != MPI_REQUEST_NULL) {
      MPI_Cancel(&d.pongs[r]);
      MPI_Wait(&d.pongs[r], MPI_STATUS_IGNORE);  // a cancelled receive completes locally
    }
    // A ping to a dead rank may never complete; MPI finishes (or drops) it in the background.
    if (d.pings[r] != MPI_REQUEST_NULL) MPI_Request_free(&d.pings[r]);
  }
  std::string report;
  char window[32];
  std::snprintf(window, sizeof window, "%.2g", d.window_s);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    std::string blame;
    if (!d.answered[r]) {
      blame = "rank " + std::to_string(r) + " did not answer a liveness probe within " + window +
              " s (it died, or its process is stuck)";
    } else if (d.replies[r][1] < d.waiting_in) {
      blame = "rank " + std::to_string(r) + " is alive but has started only " + std::to_string(d.replies[r][1]) +
              " collectives, and this rank waits in collective " + std::to_string(d.waiting_in) +
              " (it hangs or is slow in its own computation, or runs fewer steps)";
    }
    if (!blame.empty()) report += (report.empty() ? "" : "; ") + blame;
  }
  d.report = report;
  d.running = false;
}

}  // namespace nnrt::comm_mpi
