//===- PlanMemory.cpp - Static memory plan of the step functions ----------===//
//
// Records the plan of passes/MemoryPlan.cpp on the module: the state layout
// and, on every op, where its results live.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "ir/TccPlan.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

struct PlanMemoryPass : mlir::tcc::impl::PlanMemoryBase<PlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train) {
      module.emitError("tcc-plan-memory needs @train_step; run "
                       "tcc-build-train-step first");
      return signalPassFailure();
    }
    // One state layout for both steps: the arguments tagged tcc.state.
    SmallVector<int64_t> stateOffsets;
    int64_t stateBytes = layOutState(train, stateOffsets);
    setStateArena(module, StateArenaAttr::get(module.getContext(), stateBytes, stateOffsets));
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(planScratch(fn, PlanMode::Record)))
        return signalPassFailure();
  }
};

} // namespace
