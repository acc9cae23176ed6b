//===- ConvTuner.h - cuDNN engines measured on the running GPU --*- C++ -*-===//
//
// What `tcc tune` measures (docs/tuning.md): for one convolution problem,
// every engine configuration cuDNN offers (heuristic modes A and B and the
// fallback list), filtered as the compiler filters its own choice
// (restrictNumerics: deterministic engines only, no TF32 for f32; the
// workspace limit), each timed on the GPU this runs on. The fastest is
// what `tcc compile --tuning-db` bakes instead of the heuristics' first.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CONVTUNER_H
#define TCC_RUNTIME_CUDA_CONVTUNER_H

#include "runtime/cuda/ConvPlans.h"

#include <cudnn.h>

#include <string>
#include <vector>

namespace tcc::cuda {

struct TimedConvEngine {
  ConvEngine engine;
  int heuristicRank = 0;     ///< its place in cuDNN's list (mode A first)
  double microseconds = 0;   ///< median time of one execution
};

struct ConvTiming {
  int offered = 0;                     ///< configurations the heuristics offered
  std::vector<TimedConvEngine> timed;  ///< those that built and ran, fastest first
  std::vector<std::string> failures;   ///< "PLAN: why" for those that did not
  /// With keepReference: the fastest engine's output on the timed inputs,
  /// as f32, for comparing another source's kernels (CutlassTuner.h).
  std::vector<float> reference;
};

/// Times every admissible engine configuration of `problem` on the GPU of
/// `handle` (its stream): a warm-up execution, then the median of
/// `repeats` timings with CUDA events, each over enough executions to last
/// about a millisecond, on buffers of random values (ConvOperands,
/// TuneTiming.h); only
/// the first `maxCandidates` in cuDNN's order when it is positive; with
/// `keepReference`, the fastest one's output in timing.reference. False
/// with `error` when none could be timed.
bool timeConvEngines(const ConvProblem &problem, cudnnHandle_t handle, int64_t workspaceLimit,
                     int repeats, int maxCandidates, bool keepReference, ConvTiming &timing,
                     std::string &error);

/// cuDNN's description of CUDA device `device` (its device-property JSON,
/// the form GpuDescriptions.cpp writes the built-in GPUs in): what a
/// built-in description must match for the plans chosen without a GPU to
/// be the ones this GPU builds. False with `error`.
bool describeGpu(int device, std::string &json, std::string &error);

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CONVTUNER_H
