// Liveness probes between the ranks of one MPI communicator, so that a collective that times out
// names the rank responsible instead of "one of ranks 1, 2, 3".
//
// Every rank answers probes on its own duplicate of the communicator, from the plugin's engine
// thread, whatever its training thread is doing: the answer is how many collectives the rank has
// started. When a collective times out, the waiting rank probes every other rank: a rank that does
// not answer died or is stuck as a process; a rank that answers but has started fewer collectives
// than the one being waited for is behind (it hangs in its own computation, or runs fewer steps); a
// rank that has reached the collective waits too and is not blamed.
//
// Everything here runs on the engine thread (the plugin needs only MPI_THREAD_FUNNELED).
#pragma once
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

namespace nnrt::comm_mpi {

class Liveness {
 public:
  // Makes the probe communicator (a duplicate of `comm`) and starts listening. Returns an MPI code.
  int attach(MPI_Comm comm, int rank, int size);
  // Stops listening and frees the probe communicator (all ranks are alive and answered).
  void detach();
  // Stops answering probes without waiting for anything (before MPI_Finalize at exit, when the
  // communicator was left broken and its ranks may be gone).
  void stop_listening();
  bool attached() const { return probe_ != MPI_COMM_NULL; }

  // Counts a collective started on the communicator; returns its number (1, 2, ...).
  int64_t note_started() { return ++started_; }
  int64_t started() const { return started_; }

  // Answers probes that arrived and advances a running diagnosis. Call often (the engine's loop).
  void poll();

  // Probes every other rank for at most window_s seconds about collective number `waiting_in`.
  void begin_diagnosis(int64_t waiting_in, double window_s);
  bool diagnosing() const { return diagnosis_.running; }
  // After the diagnosis: which ranks are to blame and why ("" when it found none).
  const std::string &report() const { return diagnosis_.report; }

 private:
  static constexpr int kPingTag = 7001, kPongTag = 7002;
  struct Answer {  // one pong, sent to a prober
    MPI_Request request = MPI_REQUEST_NULL;
    std::array<int64_t, 2> message{};  // {probe id, collectives started}
  };
  struct Diagnosis {
    bool running = false;
    int64_t id = 0, waiting_in = 0;
    double window_s = 0;
    std::chrono::steady_clock::time_point deadline;
    std::vector<MPI_Request> pings, pongs;      // per rank; MPI_REQUEST_NULL for this rank
    std::vector<std::array<int64_t, 2>> replies;  // per rank
    std::vector<bool> answered;
    std::string report;
  };

  void answer_pings();
  void advance_diagnosis();
  void finish_diagnosis();

  MPI_Comm probe_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  int64_t started_ = 0, next_id_ = 0;
  MPI_Request ping_receive_ = MPI_REQUEST_NULL;
  int64_t ping_in_ = 0, ping_out_ = 0;
  std::list<Answer> answers_;  // a list: MPI keeps pointers into each message until its send completes
  Diagnosis diagnosis_;
};

}  // namespace nnrt::comm_mpi
