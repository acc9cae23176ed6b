//===- Mpi.cpp - The communicator of a trainer of several ranks (MPI) -----===//
//
// Linked by `tcc compile` into a trainer compiled for several ranks (the
// cpu target): started by mpirun or srun, MPI_Init finds the world. MPI's
// default error handler ends the whole job when a rank fails, and the
// launcher ends it when a rank dies; a rank that hangs is found by the
// collectives' timeout (MpiWait.h), so no rank waits forever for another.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/Communicator.h"
#include "runtime/comm/MpiWait.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace tcc::rt {

namespace {

class Mpi final : public Communicator {
public:
  explicit Mpi(bool initialized)
      : initialized(initialized), rankId(worldRank()), ranks(worldSize()),
        waiter(duplicateWorld(), rankId, ranks) {}
  ~Mpi() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
      MPI_Finalize();
  }

  int rank() const override { return rankId; }
  int size() const override { return ranks; }
  void allReduceSum(float *data, int64_t n) override { sum(data, n, MPI_FLOAT); }
  void allReduceSum(double *data, int64_t n) override { sum(data, n, MPI_DOUBLE); }
  void allReduceSum(int64_t *data, int64_t n) override { sum(data, n, MPI_INT64_T); }
  void allGather(const float *mine, float *all, int64_t n) override {
    MPI_Request request;
    MPI_Iallgather(mine, count(n), MPI_FLOAT, all, count(n), MPI_FLOAT, MPI_COMM_WORLD,
                   &request);
    waiter.wait(request, ++collectives, n * ranks);
  }
  void reduceScatterSum(const float *all, float *mine, int64_t n) override {
    MPI_Request request;
    MPI_Ireduce_scatter_block(all, mine, count(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                              &request);
    waiter.wait(request, ++collectives, n * ranks);
  }
  [[noreturn]] void abortJob(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status); // MPI_Abort does not return; the compiler does not know
  }
  void setFaultSettings(const FaultSettings &settings) override {
    waiter.setFaultSettings(settings);
  }

private:
  static int worldRank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
  }
  static int worldSize() {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
  }
  /// The world again, for the questions of a collective that times out.
  static MPI_Comm duplicateWorld() {
    MPI_Comm copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    return copy;
  }

  /// A count MPI takes (an int): a chunk that large would be a state of
  /// 2^31 values per rank, far beyond what a step holds.
  int count(int64_t n) {
    if (n > INT_MAX) {
      std::fprintf(stderr, "error: rank %d: a chunk of %lld values is more than MPI sends "
                           "at once\n", rankId, static_cast<long long>(n));
      abortJob(1);
    }
    return static_cast<int>(n);
  }

  /// MPI counts are ints: a longer buffer goes in pieces. Non-blocking, so
  /// that the wait has a deadline (a blocking MPI_Allreduce waits forever
  /// for a rank that hangs).
  template <class T> void sum(T *data, int64_t n, MPI_Datatype type) {
    for (int64_t done = 0; done < n;) {
      int count = static_cast<int>(std::min<int64_t>(n - done, INT_MAX));
      MPI_Request request;
      MPI_Iallreduce(MPI_IN_PLACE, data + done, count, type, MPI_SUM, MPI_COMM_WORLD, &request);
      waiter.wait(request, ++collectives, n);
      done += count;
    }
  }

  bool initialized;
  int rankId, ranks;
  mpi::CollectiveWait waiter;
  /// The collectives started so far, the same count on every rank.
  int64_t collectives = 0;
};

} // namespace

std::unique_ptr<Communicator> createCommunicator(int64_t ranks, std::string &error) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already)
    MPI_Init(nullptr, nullptr);
  auto comm = std::make_unique<Mpi>(!already);
  if (comm->size() != ranks) {
    error = "this trainer was compiled for " + std::to_string(ranks) +
            " ranks (train.distributed.ranks, tcc compile --ranks), but " +
            (comm->size() == 1 ? std::string("it was started as one process")
                               : "the launcher started " + std::to_string(comm->size())) +
            "; start it with `mpirun -np " + std::to_string(ranks) + " " +
            "./train ...` (or srun -n " + std::to_string(ranks) + "), or compile it with --ranks=" +
            std::to_string(comm->size());
    return nullptr;
  }
  return comm;
}

} // namespace tcc::rt
