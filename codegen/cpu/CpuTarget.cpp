//===- CpuTarget.cpp - The cpu target: C++ with OpenMP kernels ------------===//
//
// The whole source of a cpu model (the skeleton of common/SourceSkeleton.h):
// a CpuModel (runtime/cpu/CpuModel.h) whose steps gather their batch
// (runtime/cpu/Batch.h), then run the walked rows; each op is a call of the
// reference kernels (runtime/kernels/, and runtime/cpu/StepOps.h for the ops
// that read step values), printed by CpuOps.cpp and its families (ops/).
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "codegen/common/SourceSkeleton.h"
#include "codegen/cpu/CpuEmitter.h"
#include "ir/PhysicalLayout.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

class CpuTarget final : public TargetEmitter {
public:
  CpuTarget() : TargetEmitter({/*kernels=*/"", /*stream=*/"", /*stepOps=*/"cpu::"}) {}

  LogicalResult emitOp(Operation *op, StepEmitter &names) override {
    // The cpu kernels index NCHW (tcc-channels-last is the cuda target's).
    if (op->hasAttr(kChannelsLastAttr) ||
        (isa<FusionGroupOp>(op) && touchesChannelsLast(op)))
      return op->emitError("the cpu target stores every tensor NCHW, but this op is marked ")
             << kChannelsLastAttr << " (tcc-channels-last is for the cuda target only)";
    return emitCpuOp(op, names);
  }
  std::string scalarConstant(StringRef type, StringRef name, StringRef value) override {
    return (type + " " + name + "[1] = {" + value + "};").str();
  }
};

} // namespace

LogicalResult mlir::tcc::emitCpuSource(ModuleOp module, llvm::raw_ostream &os) {
  // A CpuModel: its generated steps run on the host, one OpenMP loop nest
  // or kernel call per op.
  SourceHooks hooks;
  hooks.target = "cpu";
  hooks.headers = {"runtime/cpu/Batch.h",     "runtime/cpu/CpuModel.h",
                   "runtime/cpu/KernelInstances.h", "runtime/cpu/MultiTensor.h",
                   "runtime/cpu/StepOps.h",   "cmath"};
  hooks.modelBase = "CpuModel";
  hooks.predict = true;
  CpuTarget target;
  return emitStepSource(module, hooks, target, os);
}

LogicalResult mlir::tcc::emitCpuOps(ModuleOp module, llvm::raw_ostream &os) {
  CpuTarget target;
  return emitOpsOneByOne(module, target, os);
}
