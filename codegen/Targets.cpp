//===- Targets.cpp - Every target tcc is built with -----------------------===//
//
// One row per target: adding a target is a folder under codegen/ with its
// TargetBackend, and a row here.
//
//===----------------------------------------------------------------------===//

#include "codegen/Targets.h"
#include "codegen/Codegen.h"

void mlir::tcc::registerAllTargets() {
  registerCpuTarget();
  registerCudaTarget();
}
