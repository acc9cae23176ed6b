//===- CutlassTuner.h - CUTLASS's convolutions timed beside cuDNN -*- C++ -*-===//
//
// The second source of convolution kernels that `tcc tune` measures (issue
// 36, docs/tuning.md "CUTLASS"): CUTLASS 3's implicit-GEMM convolutions for
// sm_90a (runtime/cuda/device/CutlassConv.cuh), a fixed set of tile and
// cluster shapes per direction and 16-bit type, compiled into
// tcc-tune-cutlass (runtime/cuda/tune/CutlassCandidates.cu registers them).
// Each is timed as cuDNN's engines are, the weight's move to and from KRSC
// included, and its output compared with cuDNN's on the same inputs: a
// kernel whose sums are not cuDNN's within the rounding is a failure, not a
// timing. Plain C++ on the CUDA runtime.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CUTLASSTUNER_H
#define TCC_RUNTIME_CUDA_CUTLASSTUNER_H

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/CutlassKernel.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tcc::cuda {

/// One compiled CUTLASS kernel, behind plain function pointers.
struct CutlassCandidate {
  CutlassKernel kernel; ///< its direction, type and tile
  /// "cutlass_sm90_f16_fprop_128x64x64_c1" (CutlassKernel.h).
  std::string name() const { return kernel.name(); }
  /// Why it cannot compute a problem ("" when it can); needs no GPU.
  std::string (*unsupported)(const ConvProblem &);
  /// The workspace bind() needs (the KRSC weight, then CUTLASS's own).
  int64_t (*workspaceBytes)(const ConvProblem &);
  /// The convolution bound to ConvRunner's operands (x, the KCRS weight,
  /// y; the direction says which is written) and its workspace, once; what
  /// it returns enqueues it on a stream (false when a launch fails). Empty
  /// when CUTLASS refuses the problem.
  std::function<bool(cudaStream_t)> (*bind)(const ConvProblem &, const void *x,
                                            const void *weight, const void *y,
                                            void *workspace, cudaStream_t stream);
};

/// Called by each compiled set of candidates as the program starts.
bool registerCutlassCandidates(const std::vector<CutlassCandidate> &candidates);

/// Every candidate this program was built with: none in tcc-tune, the set
/// of runtime/cuda/tune/CutlassCandidates.cu in tcc-tune-cutlass.
const std::vector<CutlassCandidate> &cutlassCandidates();

/// The names of the candidates that would run for `problem`: those of its
/// direction and type that CUTLASS can implement.
std::vector<std::string> cutlassCandidatesFor(const ConvProblem &problem);

struct TimedCutlassKernel {
  std::string name;
  double microseconds = 0;   ///< median time of one execution, the transposition included
  int64_t workspaceBytes = 0;
  /// max |output - cuDNN's| / max |cuDNN's|, over every element.
  double difference = 0;
};

struct CutlassTiming {
  int candidates = 0;                   ///< of the problem's direction and type
  std::vector<TimedCutlassKernel> timed; ///< fastest first
  std::vector<std::string> failures;     ///< "NAME: why"
};

/// The largest relative difference from cuDNN's output a CUTLASS kernel may
/// have: both sum in f32 and round once, so 4 units in the last place of
/// the largest output (2^-8 for fp16, 2^-5 for bf16); a wrong kernel is off
/// by the output's own size.
double cutlassDifferenceBound(ConvDataType dtype);

/// Times every candidate of `problem`'s direction and type on `stream`, on
/// the inputs timeConvEngines draws (runtime/cuda/ConvTuner.h: the same
/// seeds), as cuDNN's engines are timed, and compares each one's output
/// with `reference` (cuDNN's on those inputs, ConvTiming::reference). A
/// candidate that cannot implement the problem, does not run, or is off by
/// more than cutlassDifferenceBound is a failure. False with `error` only
/// when the buffers cannot be allocated.
bool timeCutlassConvs(const ConvProblem &problem, cudaStream_t stream, int repeats,
                      const std::vector<float> &reference, CutlassTiming &timing,
                      std::string &error);

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CUTLASSTUNER_H
