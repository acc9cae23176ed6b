//===- OneProcess.cpp - The communicator of a one-rank trainer ------------===//
//
// Linked into every trainer compiled for one rank: the collectives are the
// identity. A launcher that starts several copies of such a trainer is
// refused, since each would train alone and write the same files.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/Communicator.h"

#include <algorithm>
#include <cstdlib>

namespace tcc::rt {

namespace {

class OneProcess final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allReduceSum(float *, int64_t) override {}
  void allReduceSum(double *, int64_t) override {}
  void allReduceSum(int64_t *, int64_t) override {}
  void allGather(const float *mine, float *all, int64_t n) override {
    std::copy(mine, mine + n, all);
  }
  void reduceScatterSum(const float *all, float *mine, int64_t n) override {
    std::copy(all, all + n, mine);
  }
  [[noreturn]] void abortJob(int status) override { std::exit(status); }
  void setFaultSettings(const FaultSettings &) override {}
};

/// The number of processes a launcher (mpirun, srun, torchrun) says it
/// started, from its environment; 1 without one.
int64_t launcherWorldSize() {
  // Open MPI, MPICH/Intel MPI (PMI), Slurm's srun, torchrun.
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"})
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      long long n = std::strtoll(value, &end, 10);
      if (end != value && *end == '\0' && n >= 1)
        return n;
    }
  return 1;
}

/// This process's rank as the launcher numbers them; 0 without one.
int64_t launcherRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"})
    if (const char *value = std::getenv(name))
      return std::strtoll(value, nullptr, 10);
  return 0;
}

} // namespace

std::unique_ptr<Communicator> createCommunicator(int64_t ranks, std::string &error) {
  int64_t world = launcherWorldSize();
  if (ranks != 1) {
    error = "this trainer was compiled for " + std::to_string(ranks) +
            " ranks but linked without MPI; compile it again with tcc built with MPI "
            "(libopenmpi-dev)";
    return nullptr;
  }
  if (world != 1) {
    // Said once, by the launcher's first process; the others fail quietly.
    if (launcherRank() != 0)
      return nullptr;
    error = "this trainer was compiled for one process, but the launcher started " +
            std::to_string(world) + "; compile it with --ranks=" + std::to_string(world) +
            " (train.distributed.ranks), or start it without a launcher";
    return nullptr;
  }
  return std::make_unique<OneProcess>();
}

} // namespace tcc::rt
