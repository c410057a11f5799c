// A communicator's collectives, over the plugin NNRT_TEST_COMM names ("mpi" by default, run by
// tests/distributed/mpirun.sh under `mpirun -np 2`; "gloo", run by gloo_launch.sh): all-reduce sums
// of 0, 1, an odd count and 10^6 elements in f32, f16 and bf16 (in place, blocking and in flight
// together), broadcast, all-gather, barrier, and bad arguments refused with
// NNRT_ERR_INVALID_ARGUMENT. Every rank prints "rank R ok" when all its checks pass.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backend/comm/communicator.h"
#include "core/error.h"
#include "nnrt/kernels/half.h"

using nnrt::backend::Communicator;

namespace {

int failures = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  }
}

// Element i on rank r is small and exact in every dtype: (i % 13) + r; the sum over ranks is
// size * (i % 13) + size * (size - 1) / 2.
// The status a call on the communicator failed with (NNRT_OK if it did not fail), and its message.
nnrt_status status_of(const std::function<void()> &call, std::string *message) {
  message->clear();
  try {
    call();
  } catch (const nnrt::Error &e) {
    *message = e.what();
    return e.status();
  }
  return NNRT_OK;
}

float value(size_t i, int rank) { return static_cast<float>(i % 13) + static_cast<float>(rank); }

std::vector<uint16_t> to_half(const std::vector<float> &v, nnrt_dtype t) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    h[i] = t == NNRT_DTYPE_F16 ? nnrt::kernels::f32_to_f16(v[i]) : nnrt::kernels::f32_to_bf16(v[i]);
  return h;
}

float from_half(uint16_t h, nnrt_dtype t) {
  return t == NNRT_DTYPE_F16 ? nnrt::kernels::f16_to_f32(h) : nnrt::kernels::bf16_to_f32(h);
}

void check_allreduce(Communicator &c, size_t count, nnrt_dtype t, bool in_flight) {
  const int size = c.size();
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = value(i, c.rank());
  std::vector<uint16_t> h;
  void *buf = x.data();
  if (t != NNRT_DTYPE_F32) {
    h = to_half(x, t);
    buf = h.data();
  }
  if (in_flight) {
    // Two requests at once: the second half, then the first, waited for in order.
    size_t half = count / 2, width = t == NNRT_DTYPE_F32 ? 4 : 2;
    Communicator::Request a = c.start_allreduce(static_cast<char *>(buf) + half * width, count - half, t);
    Communicator::Request b = c.start_allreduce(buf, half, t);
    c.wait(a);
    c.wait(b);
  } else {
    c.allreduce_sum(buf, count, t);
  }
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    float got = t == NNRT_DTYPE_F32 ? x[i] : from_half(h[i], t);
    float want = static_cast<float>(size) * static_cast<float>(i % 13) + static_cast<float>(size * (size - 1) / 2);
    if (got != want) ++wrong;
  }
  expect(wrong == 0, "all-reduce of " + std::to_string(count) + " elements of dtype " + std::to_string(t) +
                         (in_flight ? " (two in flight)" : "") + ": " + std::to_string(wrong) + " wrong");
}

}  // namespace

int main() {
  try {
    const char *comm = std::getenv("NNRT_TEST_COMM");
    auto c = Communicator::open(comm ? comm : "mpi", "{}", 30);
    std::printf("rank %d of %d (local rank %d), %s\n", c->rank(), c->size(), c->local_rank(), c->engine_version());
    expect(c->size() >= 2, "expected at least 2 ranks (run under mpirun.sh or gloo_launch.sh)");
    for (nnrt_dtype t : {NNRT_DTYPE_F32, NNRT_DTYPE_F16, NNRT_DTYPE_BF16}) {
      for (size_t count : {size_t(0), size_t(1), size_t(1001), size_t(1000000)}) {
        check_allreduce(*c, count, t, false);
        check_allreduce(*c, count, t, true);
      }
    }
    // Broadcast from the last rank.
    std::vector<int32_t> b(1000, c->rank());
    c->broadcast(b.data(), b.size() * sizeof(int32_t), c->size() - 1);
    bool same = true;
    for (int32_t v : b) same = same && v == c->size() - 1;
    expect(same, "broadcast from the last rank");
    // All-gather: every rank's rank * 10.
    int64_t mine = c->rank() * 10;
    std::vector<int64_t> all(static_cast<size_t>(c->size()));
    c->allgather(&mine, sizeof mine, all.data());
    for (int r = 0; r < c->size(); ++r) expect(all[static_cast<size_t>(r)] == r * 10, "all-gather slot " + std::to_string(r));
    c->barrier();
    // Bad arguments are refused with their status and a message, and the communicator stays usable.
    std::string message;
    expect(status_of([&] { c->broadcast(b.data(), 4, c->size()); }, &message) == NNRT_ERR_INVALID_ARGUMENT,
           "broadcast from a root outside the group: " + message);
    expect(message.find("root must be in") != std::string::npos, "message: " + message);
    expect(status_of([&] { c->allreduce_sum(b.data(), 4, NNRT_DTYPE_I32); }, &message) == NNRT_ERR_INVALID_ARGUMENT,
           "an i32 all-reduce: " + message);
    expect(message.find("f32, f16 or bf16") != std::string::npos, "message: " + message);
    expect(status_of([&] { c->allgather(nullptr, sizeof mine, all.data()); }, &message) == NNRT_ERR_INVALID_ARGUMENT,
           "an all-gather from NULL: " + message);
    expect(message.find("NULL buffer") != std::string::npos, "message: " + message);
    c->barrier();
    if (failures == 0) std::printf("rank %d ok\n", c->rank());
    return failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
