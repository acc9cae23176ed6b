//===- Launcher.cpp - The world a launcher started ------------------------===//

#include "runtime/comm/Launcher.h"

#include <cstdlib>

namespace tcc::rt {

namespace {

/// The variables one launcher sets: rank, size, local rank.
struct LauncherVariables {
  const char *name, *rank, *size, *localRank;
};
// torchrun first: under srun or mpirun it is the one that started us.
constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"mpirun", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

/// The non-negative integer in variable `name`; -1 when unset.
bool readCount(const char *name, long &value, std::string &error) {
  value = -1;
  const char *text = std::getenv(name);
  if (!text)
    return true;
  char *end = nullptr;
  value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > (1 << 20)) {
    error = "the launcher's " + std::string(name) + "='" + text +
            "' is not a rank or a process count";
    return false;
  }
  return true;
}

} // namespace

bool launchedWorld(LaunchedWorld &world, std::string &error) {
  world = LaunchedWorld();
  for (const LauncherVariables &l : kLaunchers) {
    long rank, size, local;
    if (!readCount(l.rank, rank, error) || !readCount(l.size, size, error) ||
        !readCount(l.localRank, local, error))
      return false;
    if (size < 0)
      continue;
    if (size == 0 || rank < 0 || rank >= size) {
      error = std::string("the launcher's ") + l.size + "=" + std::to_string(size) + " and " +
              l.rank + "=" + (rank < 0 ? std::string("(unset)") : std::to_string(rank)) +
              " do not make a rank of that world";
      return false;
    }
    world.rank = static_cast<int>(rank);
    world.size = static_cast<int>(size);
    // Without a local rank, one process per node is the safe guess.
    world.localRank = local < 0 ? 0 : static_cast<int>(local);
    world.launcher = l.name;
    return true;
  }
  return true;
}

std::string wrongWorldError(int ranks, const LaunchedWorld &world) {
  std::string start = "`torchrun --nproc-per-node=" + std::to_string(ranks) +
                      " ./train ...` or `mpirun -np " + std::to_string(ranks) + " ./train ...`";
  if (ranks == 1)
    return "this trainer was compiled for one process, but " + world.launcher + " started " +
           std::to_string(world.size) + "; compile it with --ranks=" +
           std::to_string(world.size) + " (train.distributed.ranks), or start it without a "
           "launcher";
  return "this trainer was compiled for " + std::to_string(ranks) +
         " ranks (train.distributed.ranks, tcc compile --ranks), but " +
         (world.launcher.empty() ? std::string("it was started as one process")
                                 : world.launcher + " started " + std::to_string(world.size)) +
         "; start it with " + start + ", or compile it with --ranks=" +
         std::to_string(world.size);
}

} // namespace tcc::rt
