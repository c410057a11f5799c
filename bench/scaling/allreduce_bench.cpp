// All-reduce bus bandwidth for bench/scaling/run, under mpirun: nnrt's MPI communicator plugin
// (through the same host-side wrapper the trainer uses) beside Open MPI's own MPI_Allreduce, in the
// same processes, f32 sums of 1 KiB to 64 MiB, timed alternately (medians of 5 trials). Bus bandwidth = bytes * 2 (size - 1) / size / time,
// as nccl-tests define it. Rank 0 prints one line per size.
// The C API only: Open MPI's deprecated C++ bindings warn under -Wextra.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "backend/comm/communicator.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  // The program initialises MPI itself (serialized calls: nnrt's engine thread and this one never
  // call MPI at the same time here), so that both paths share one MPI.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    auto comm = nnrt::backend::Communicator::open("mpi", "{}", 60);
    if (rank == 0) {
      std::printf("%d ranks, %s; f32 all-reduce, bus bandwidth in GB/s\n", size, comm->engine_version());
      std::printf("%10s %12s %12s %10s %10s %8s\n", "bytes", "nnrt us", "MPI us", "nnrt GB/s", "MPI GB/s", "overhead");
    }
    for (size_t bytes = 1024; bytes <= (size_t(64) << 20); bytes *= 4) {
      size_t count = bytes / sizeof(float);
      std::vector<float> buf(count, 1.0f);
      int reps = bytes <= (size_t(1) << 20) ? 100 : 5;
      // Warm up both paths, then time them alternately, 5 trials each; medians.
      comm->allreduce_sum(buf.data(), count, NNRT_DTYPE_F32);
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      std::vector<double> nnrt_trials, mpi_trials;
      for (int trial = 0; trial < 5; ++trial) {
        MPI_Barrier(MPI_COMM_WORLD);
        auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i) comm->allreduce_sum(buf.data(), count, NNRT_DTYPE_F32);
        nnrt_trials.push_back(seconds_since(t) / reps);
        MPI_Barrier(MPI_COMM_WORLD);
        t = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i) {
          MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        mpi_trials.push_back(seconds_since(t) / reps);
      }
      double nnrt_s = median(nnrt_trials), mpi_s = median(mpi_trials);
      double factor = 2.0 * (size - 1) / size;
      if (rank == 0) {
        std::printf("%10zu %12.1f %12.1f %10.3f %10.3f %7.1f%%\n", bytes, nnrt_s * 1e6, mpi_s * 1e6,
                    bytes * factor / nnrt_s / 1e9, bytes * factor / mpi_s / 1e9, (nnrt_s / mpi_s - 1) * 100);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
