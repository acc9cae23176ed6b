//===- PlanMemory.cpp - Static memory plan of the step functions ----------===//
//
// Records the plan of passes/MemoryPlan.cpp on the module: the state layout
// and, on every op, where its results live.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccPlan.h"
#include "ir/TccRecipe.h"
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
    // One state layout for every step: the arguments tagged tcc.state.
    if (auto frozen = module.lookupSymbol<func::FuncOp>(kFrozenStepName))
      if (stateTypes(frozen) != stateTypes(train)) {
        frozen.emitError("tcc-plan-memory: the state arguments of @")
            << kFrozenStepName << " differ from @train_step's, whose state arena they share";
        return signalPassFailure();
      }
    SmallVector<int64_t> stateOffsets;
    int64_t stateBytes = layOutState(train, stateOffsets);
    setStateArena(module, StateArenaAttr::get(module.getContext(), stateBytes, stateOffsets));
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(planScratch(fn, PlanMode::Record)))
        return signalPassFailure();
    if (failed(checkMemoryBudget(module)))
      return signalPassFailure();
  }

  /// The types of `fn`'s tcc.state arguments, in order.
  static SmallVector<Type> stateTypes(func::FuncOp fn) {
    SmallVector<Type> types;
    for (BlockArgument arg : fn.getArguments())
      if (fn.getArgAttr(arg.getArgNumber(), kStateAttr))
        types.push_back(arg.getType());
    return types;
  }

  /// The one check of train.memory_budget, on the plan the code generators
  /// get: tcc-recompute, if it ran, has recomputed what it could.
  LogicalResult checkMemoryBudget(ModuleOp module) {
    TrainAttr train = moduleTrain(module);
    std::optional<int64_t> budget = train ? train.getMemoryBudget() : std::nullopt;
    FailureOr<MemoryPlanSizes> plan = readMemoryPlan(module);
    if (!budget || failed(plan) || plan->stepBytes() <= *budget)
      return success();
    // tcc-recompute reports under its flag less "tcc-" (passes/PassReport.h).
    StringRef recompute = createRecompute()->getArgument();
    recompute.consume_front("tcc-");
    auto report = module->getAttrOfType<DictionaryAttr>(kPassReportAttr);
    bool recomputed = report && report.get(recompute);
    return module.emitError()
           << "the memory budget " << mebibytes(*budget) << " is below the smallest step tcc plans "
           << (recomputed ? "with" : "without") << " recompute: " << mebibytes(plan->stepBytes())
           << " (state " << mebibytes(plan->stateBytes) << ", scratch "
           << mebibytes(std::max(plan->trainScratchBytes, plan->evalScratchBytes)) << ", batch "
           << mebibytes(plan->batchBytes)
           << "); raise train.memory_budget (or --memory-budget) to at least "
           << mebibytes(plan->stepBytes()) << " (" << plan->stepBytes() << " bytes)"
           << (recomputed ? "" : ", enable recompute") << " or make the batch smaller";
  }
};

} // namespace
