//===- Launcher.h - The world a launcher started, from its environment -*- C++ -*-===//
//
// A trainer of several ranks is started by a launcher that tells each
// process its place in environment variables: torchrun (RANK, WORLD_SIZE,
// LOCAL_RANK), Open MPI's mpirun (OMPI_COMM_WORLD_*), MPICH/Intel MPI's
// (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID) and Slurm's srun (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID). The NCCL communicator needs no MPI library:
// it reads these (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMM_LAUNCHER_H
#define TCC_RUNTIME_COMM_LAUNCHER_H

#include <string>

namespace tcc::rt {

struct LaunchedWorld {
  int rank = 0, size = 1;
  int localRank = 0;    ///< the rank among this node's: which GPU it takes
  std::string launcher; ///< "torchrun", "mpirun", "srun"; empty: none
};

/// The world the environment describes (one process when none does), or
/// false with `error` one line when its variables disagree or do not parse.
bool launchedWorld(LaunchedWorld &world, std::string &error);

/// The error line of a trainer compiled for `ranks` ranks started in a
/// world of another size: how to start it, or what to recompile with.
std::string wrongWorldError(int ranks, const LaunchedWorld &world);

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMM_LAUNCHER_H
