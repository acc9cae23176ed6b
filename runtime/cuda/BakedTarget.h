//===- BakedTarget.h - What the compiler fixed for the GPU ------*- C++ -*-===//
//
// The table a generated cuda step holds (codegen/cuda/CudaTarget.cpp): the GPU
// it was compiled for, the cuDNN engine (or CUTLASS kernel) of every
// convolution problem and, where a tuning file measured them, the cuBLASLt
// algorithm of every matmul problem. The trainer rebuilds each before its
// first step (ConvRunner, runtime/cuda/device/Matmul.cuh) and stops with one
// error line when it cannot. Plain C++: the generated .cu file and the host
// emulation include it alike.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_BAKEDTARGET_H
#define TCC_RUNTIME_CUDA_BAKEDTARGET_H

#include <cstdint>
#include <functional>

namespace tcc::cuda {

/// One convolution of the step as the compiler baked it.
struct BakedConv {
  const char *problem;    ///< ConvProblem::key()
  const char *plan;       ///< cuDNN's name of the engine configuration: "eng62_k2=0_k13=1"
  int64_t workspaceBytes; ///< what the plan asked for when it was chosen: what the
                          ///< memory plan gives each op of this problem
  const char *nodes;      ///< the model nodes that pose it, quoted: "'conv1', 'conv2'"
};

/// One matmul of the step whose algorithm a tuning file measured.
struct BakedMatmul {
  const char *problem;    ///< MatmulProblem::key()
  const char *algo;       ///< MatmulAlgo::name()
  int64_t workspaceBytes; ///< what it needed on the tuned GPU
  const char *nodes;      ///< the model nodes that pose it, quoted
};

/// A CUTLASS convolution the generated step instantiated in place of a
/// cuDNN engine (runtime/cuda/device/CutlassConv.cuh, bindForRunner): bound
/// to its operands and workspace once, it returns what enqueues it on a
/// stream (a cudaStream_t), or an empty function when CUTLASS refuses it.
using CutlassBind = std::function<bool(void *stream)> (*)(const char *problem, const void *x,
                                                          const void *weight, const void *y,
                                                          void *workspace, void *stream);

/// What the compiler fixed for the GPU: its architecture, the cuDNN the
/// plans were chosen with, the plans, and the measured matmul algorithms
/// (none without a tuning file: then cuBLASLt's heuristic chooses at the
/// first step).
struct BakedTarget {
  const char *gpu;       ///< --gpu: "h100"
  int sm;                ///< the compute capability the trainer was built for: 90
  int64_t cudnnVersion;  ///< cudnnGetVersion() where the plans were chosen: 91900
  bool allowFallback;    ///< --allow-fallback: use the heuristics' choice where a baked one fails
  const BakedConv *convs;
  int count;
  int64_t cublasLtVersion; ///< cublasLtGetVersion() where the matmuls were tuned: 130100
  const BakedMatmul *matmuls;
  int matmulCount;
  /// Per convolution, its CUTLASS kernel where a tuning file measured one
  /// faster than cuDNN's engines (the row's plan then names the kernel),
  /// else null; null for all when there is none.
  const CutlassBind *cutlass = nullptr;
};

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_BAKEDTARGET_H
