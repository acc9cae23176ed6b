//===- Targets.cpp - The code generators `tcc compile --target` knows -----===//
//
// One row per target. The driver reads this table for --target's choices,
// its default, its help text and which options a target takes; adding a
// target is adding a row (and its emitter), never a branch in the driver.
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

const Target kTargets[] = {
    {"cpu", "x86-64 CPUs: C++ with OpenMP, the reference and CI target",
     emitCpuSource, emitCpuOps, /*takesMarch=*/true, /*takesTuningDb=*/false,
     /*takesGpu=*/false},
    {"cuda", "NVIDIA GPUs: CUDA, cuDNN and cuBLASLt (checked on an H200; docs/cuda.md)",
     emitCudaSource, emitCudaOps, /*takesMarch=*/false,
     /*takesTuningDb=*/true, /*takesGpu=*/true},
};

} // namespace

ArrayRef<Target> mlir::tcc::registeredTargets() { return kTargets; }

const Target *mlir::tcc::lookupTarget(StringRef name) {
  for (const Target &target : kTargets)
    if (target.name == name)
      return &target;
  return nullptr;
}

const Target &mlir::tcc::defaultTarget() {
  for (const Target &target : kTargets)
    if (target.emitSource)
      return target;
  return kTargets[0];
}
