//===- ConvRunner.h - The step's convolutions on the running GPU -*- C++ -*-===//
//
// The trainer's side of "engines fixed at compile time" (docs/cuda.md): the
// generated step holds the table the compiler baked (a BakedTarget) and
// calls a ConvRunner for each convolution. prepare() rebuilds every baked
// plan on the running GPU before the first step, with no heuristics, and
// stops the trainer with one error line when it cannot (another GPU, another
// cuDNN); run() enqueues a plan on the model's stream, so it can be recorded
// in the step's CUDA graph. Plain C++ with no CUDA types: the generated .cu
// file and the host emulation (ConvRunnerEmulated.cpp) include it alike.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CONVRUNNER_H
#define TCC_RUNTIME_CUDA_CONVRUNNER_H

#include "runtime/cuda/BakedTarget.h"

#include <cstdint>
#include <memory>

namespace tcc::cuda {

class ConvRunner {
public:
  ConvRunner();
  ~ConvRunner();
  ConvRunner(const ConvRunner &) = delete;
  ConvRunner &operator=(const ConvRunner &) = delete;

  /// Checks that the running GPU is the architecture `target` was built
  /// for and builds every baked plan on it, its launches on `stream` (a
  /// cudaStream_t). Throws rt::ModelSetupError (runtime/CompiledModel.h)
  /// naming the conv, the engine and the fix when it cannot; with
  /// target.allowFallback, a plan that does not build is replaced by
  /// cuDNN's heuristic choice and a warning is written to stderr.
  void prepare(const BakedTarget &target, void *stream);

  /// Enqueues convolution `index` of the table. The pointers are the
  /// problem's x, weight and y whatever the direction: forward writes y,
  /// backward-data writes x (from y = dy), backward-filter writes the
  /// weight (from x and dy). `workspace` is the op's place in the memory
  /// plan, `workspaceBytes` long (the baked plan's workspace); a plan that
  /// needs more on this GPU runs from the buffer prepare() allocated for it.
  /// `bias`: the [k] bias of a forward convolution whose problem has an
  /// epilogue (ConvProblem.h), else null.
  void run(int index, const void *x, const void *weight, const void *y, void *workspace,
           int64_t workspaceBytes, const void *bias = nullptr);

  /// Enqueues forward convolution `index` whose problem gathers statistics
  /// (ConvEpilogue::Statistics): y as run() writes it, and per output
  /// channel the f32 sum of y and of its squares into `sum` and `squares`
  /// ([k] each). `weight` is KRSC (ConvProblem::weightChannelsLast).
  void runWithStatistics(int index, const void *x, const void *weight, const void *y,
                         float *sum, float *squares, void *workspace, int64_t workspaceBytes);

  /// The rebuilt plans (ConvRunner.cpp, or ConvRunnerEmulated.cpp).
  struct Plans;

private:
  std::unique_ptr<Plans> plans;
};

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CONVRUNNER_H
