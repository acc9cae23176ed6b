//===- Communicator.h - The processes of a distributed run -------*- C++ -*-===//
//
// A trainer compiled with train.distributed.ranks = N (tcc compile
// --ranks=N) runs as N processes, each training its slice of the global
// batch (docs/distributed.md). The step's collectives (tcc.all_reduce) and
// the trainer (the epoch totals, who writes the files) reach the other
// ranks through this interface. Two implementations, one linked into each
// trainer by `tcc compile`: one process (OneProcess.cpp, every trainer of
// one rank) and MPI (Mpi.cpp, the trainers of several ranks, on the cpu
// target; NCCL for the cuda target's steps is bootstrapped through it).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMM_COMMUNICATOR_H
#define TCC_RUNTIME_COMM_COMMUNICATOR_H

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tcc::rt {

/// --comm-timeout's default, in seconds: far above any wait of a healthy
/// run (one rank's checkpoint write or its share of an uneven start; see
/// docs/distributed.md#faults), short enough to free a stuck job's nodes.
inline constexpr double kDefaultCommTimeoutSeconds = 300;

/// What a rank does when the others do not come to a collective
/// (docs/distributed.md#faults).
struct FaultSettings {
  /// Seconds a rank waits in one collective before it names the ranks that
  /// did not reach it and ends the job.
  double timeoutSeconds = kDefaultCommTimeoutSeconds;
  /// The checkpoint such an error says is kept (--save); empty: none.
  std::string checkpoint;
};

/// One all-gather in the memory the model's steps use: every rank's `bytes`
/// at `mine`, in rank order, into `all` (size() * bytes).
struct StepMemoryGather {
  const void *mine = nullptr;
  void *all = nullptr;
  int64_t bytes = 0;
};

class Communicator {
public:
  virtual ~Communicator() = default;

  /// This process's rank in [0, size()), and the number of ranks.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Each element summed over the ranks, in place; every rank receives the
  /// same sums.
  virtual void allReduceSum(float *data, int64_t n) = 0;
  virtual void allReduceSum(double *data, int64_t n) = 0;
  virtual void allReduceSum(int64_t *data, int64_t n) = 0;
  /// Sharded state (ZeRO): every rank's `n` values `mine` one after the
  /// other, in rank order, into `all` (n * size() values) on every rank;
  /// and the inverse of a sum: `all` (size() blocks of n) summed over the
  /// ranks, this rank receiving block rank() of the sum in `mine`.
  virtual void allGather(const float *mine, float *all, int64_t n) = 0;
  virtual void reduceScatterSum(const float *all, float *mine, int64_t n) = 0;
  /// `gathers` one after the other, in order (a later one may overwrite what
  /// an earlier one wrote), in the memory the model's steps use; returns
  /// once done. NCCL's gathers device memory; the host communicators' is
  /// host memory (the cpu target's, or the cuda target's under host
  /// emulation), which this default gathers.
  virtual void allGatherInStepMemory(const std::vector<StepMemoryGather> &gathers);
  /// Ends every rank of the job with `status`: a rank that stops alone
  /// would leave the others waiting in a collective.
  [[noreturn]] virtual void abortJob(int status) = 0;
  /// Returns once done() is true: the device work this rank queued, its
  /// collectives included, has finished. NCCL's communicator ends the job
  /// with one error line when that takes longer than the timeout or its
  /// communication broke; host communicators (whose collectives the host
  /// runs) only wait.
  virtual void awaitDevice(const std::function<bool()> &done) {
    while (!done())
      std::this_thread::yield();
  }
  /// The timeout and the checkpoint named by a collective that times out
  /// (set once the trainer has read its command line; until then the
  /// defaults). One process has no collective to time out.
  virtual void setFaultSettings(const FaultSettings &settings) = 0;
};

/// allGather of `bytes` bytes a rank of any element type (16-bit chunks): a
/// gather copies bits, so they travel as floats, each rank's block padded
/// to whole floats; `all` receives the ranks' blocks of `bytes` each.
inline void allGatherBytes(Communicator &comm, const void *mine, void *all, int64_t bytes) {
  const int64_t words = (bytes + 3) / 4;
  static thread_local std::vector<float> in, out;
  in.assign(size_t(words), 0.0f);
  out.resize(size_t(words * comm.size()));
  std::memcpy(in.data(), mine, size_t(bytes));
  comm.allGather(in.data(), out.data(), words);
  for (int64_t r = 0; r < comm.size(); ++r)
    std::memcpy(static_cast<char *>(all) + r * bytes, out.data() + r * words, size_t(bytes));
}

inline void Communicator::allGatherInStepMemory(const std::vector<StepMemoryGather> &gathers) {
  for (const StepMemoryGather &g : gathers)
    allGatherBytes(*this, g.mine, g.all, g.bytes);
}

/// The communicator of a trainer compiled for `ranks` processes, as the
/// linked implementation and the launcher's environment allow; null with
/// `error` one line (what is wrong, how to start it) when the world the
/// launcher started is not `ranks` processes (empty on the ranks that
/// leave saying it to the first).
std::unique_ptr<Communicator> createCommunicator(int64_t ranks, std::string &error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMM_COMMUNICATOR_H
