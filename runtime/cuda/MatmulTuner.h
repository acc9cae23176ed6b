//===- MatmulTuner.h - cuBLASLt algorithms measured on the GPU --*- C++ -*-===//
//
// What `tcc tune` measures for a matmul (docs/tuning.md): the algorithms
// cuBLASLt's heuristic offers for the problem on the GPU this runs on,
// within the workspace the trainer gives a matmul and for operands aligned
// as the memory plan aligns them, each rebuilt from its written-down
// configuration (as the trainer will rebuild it) and timed. The fastest is
// what `tcc compile --tuning-db` bakes.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_MATMULTUNER_H
#define TCC_RUNTIME_CUDA_MATMULTUNER_H

#include "runtime/cuda/MatmulProblem.h"

#include <string>
#include <vector>

namespace tcc::cuda {

struct TimedMatmulAlgo {
  MatmulAlgo algo;
  int64_t workspaceBytes = 0;
  int heuristicRank = 0;    ///< its place in the heuristic's list (0: its first)
  double microseconds = 0;  ///< median time of one execution
};

struct MatmulTiming {
  int offered = 0;                     ///< algorithms the heuristic offered
  std::vector<TimedMatmulAlgo> timed;  ///< those that rebuilt and ran, fastest first
  std::vector<std::string> failures;   ///< "ALGO: why" for those that did not
};

/// Times the algorithms of `problem` on the current GPU, each within
/// `workspaceLimit` bytes, as timeConvEngines does a convolution's (a
/// warm-up, then the median of `repeats` CUDA-event timings over about a
/// millisecond each, on random values); the heuristic's first
/// `maxCandidates` (all it offers, up to 64, when not positive). False with
/// `error` when none ran.
bool timeMatmulAlgos(const MatmulProblem &problem, int64_t workspaceLimit, int repeats,
                     int maxCandidates, MatmulTiming &timing, std::string &error);

/// cublasLtGetVersion() of the loaded cuBLASLt: 130100 for 13.1.0.
int64_t cublasLtVersion();

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_MATMULTUNER_H
