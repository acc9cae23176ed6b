//===- Launcher.h - The world a launcher started, from its environment -*- C++ -*-===//
//
// A trainer of several ranks is started by a launcher that tells each
// process its place in environment variables: torchrun (RANK, WORLD_SIZE,
// LOCAL_RANK), Open MPI's mpirun (OMPI_COMM_WORLD_*), MPICH/Intel MPI's
// (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID) and Slurm's srun (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID). The NCCL communicator needs no MPI library:
// it reads these (docs/distributed.md), and the one-process communicator
// refuses a world of several. Header-only: both link it without a library.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMM_LAUNCHER_H
#define TCC_RUNTIME_COMM_LAUNCHER_H

#include <cstdlib>
#include <string>

namespace tcc::rt {

struct LaunchedWorld {
  int rank = 0, size = 1;
  int localRank = 0;    ///< the rank among this node's: which GPU it takes
  std::string launcher; ///< "torchrun", "mpirun", "srun"; empty: none
};

namespace detail {

/// The variables one launcher sets: rank, size, local rank.
struct LauncherVariables {
  const char *name, *rank, *size, *localRank;
};
// torchrun first: under srun or mpirun it is the one that started us.
inline constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"mpirun", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

/// The non-negative integer in variable `name`; -1 when unset.
inline bool readCount(const char *name, long &value, std::string &error) {
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

} // namespace detail

/// The world the environment describes (one process when none does), or
/// false with `error` one line when its variables disagree or do not parse.
inline bool launchedWorld(LaunchedWorld &world, std::string &error) {
  world = LaunchedWorld();
  for (const detail::LauncherVariables &l : detail::kLaunchers) {
    long rank, size, local;
    if (!detail::readCount(l.rank, rank, error) || !detail::readCount(l.size, size, error) ||
        !detail::readCount(l.localRank, local, error))
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

/// The error line of a trainer compiled for `ranks` ranks started in a
/// world of another size: how to start it, or what to recompile with.
inline std::string wrongWorldError(int ranks, const LaunchedWorld &world) {
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

#endif // TCC_RUNTIME_COMM_LAUNCHER_H
