//===- CudaMatmulAlgos.h - The cuBLASLt algorithms a tuning file bakes -*- C++ -*-===//
//
// cuBLASLt describes no GPU it does not run on, so without a GPU the
// compiler cannot choose a matmul's algorithm: the trainer asks cuBLASLt's
// heuristic at its first step. A tuning file (`tcc tune`, docs/tuning.md)
// measured them on the GPU; its algorithms are baked into the trainer's
// table (BakedTarget, runtime/cuda/BakedTarget.h), which rebuilds them
// before its first step. The problems are collected once the step is
// fused: tcc-fusion decides which forward matmuls take a ReLU epilogue.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CUDA_CUDAMATMULALGOS_H
#define TCC_CODEGEN_CUDA_CUDAMATMULALGOS_H

#include "codegen/cuda/StepProblems.h"
#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/TuningFile.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tcc {

/// A matmul problem of the step and the algorithm a tuning file measured
/// for it (none: cuBLASLt's heuristic chooses at the trainer's first step).
struct BakedStepMatmul {
  StepMatmul matmul;
  std::optional<::tcc::cuda::TunedChoice> tuned;
};

/// The matmul problems of the planned `module`, each with `tuning`'s
/// algorithm where it has one (checked against `gpu` by the caller). False
/// with `error` naming the matmul's nodes when the file's algorithm is not
/// cuBLASLt's form or needs more workspace than the trainer gives a matmul
/// on `gpu`.
bool bakeMatmulAlgos(ModuleOp module, const ::tcc::cuda::GpuDescription &gpu,
                     const ::tcc::cuda::TuningFile *tuning,
                     std::vector<BakedStepMatmul> &baked, std::string &error);

/// Adds every matmul problem of the step to the module's `tcc.cuda_target`
/// attribute (attachCudaTarget): what `tcc tune` times besides the
/// convolutions, each with the tuning file's algorithm where it has one
/// (and `cublasLtVersion`, the file's), which the cuda target bakes into
/// the trainer's table.
void attachMatmuls(ModuleOp module, const std::vector<BakedStepMatmul> &baked,
                   const ::tcc::cuda::GpuDescription &gpu, int64_t cublasLtVersion);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDA_CUDAMATMULALGOS_H
