//===- OneProcess.cpp - The communicator of a one-rank trainer ------------===//
//
// Linked into every trainer compiled for one rank: the collectives are the
// identity. A launcher that starts several copies of such a trainer is
// refused, since each would train alone and write the same files.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/Communicator.h"
#include "runtime/comm/Launcher.h"

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

} // namespace

std::unique_ptr<Communicator> createCommunicator(int64_t ranks, std::string &error) {
  if (ranks != 1) {
    error = "this trainer was compiled for " + std::to_string(ranks) +
            " ranks but linked without MPI; compile it again with tcc built with MPI "
            "(libopenmpi-dev)";
    return nullptr;
  }
  LaunchedWorld world;
  if (!launchedWorld(world, error))
    return nullptr;
  if (world.size != 1) {
    // Said once, by the launcher's first process; the others fail quietly.
    if (world.rank == 0)
      error = wrongWorldError(1, world);
    return nullptr;
  }
  return std::make_unique<OneProcess>();
}

} // namespace tcc::rt
