//===- FrozenStep.cpp - @train_step_frozen: no gradients past train_epochs ===//
//
// See Passes.td and docs/training.md ("Parameters that train for their
// first epochs"). Built from @forward and @loss like @train_step, with the
// parameters that have `train_epochs` left out of AD: the backward work only
// their gradients needed is never built, and their updates are absent.
//
//===----------------------------------------------------------------------===//

#include "passes/PassReport.h"
#include "passes/Passes.h"
#include "passes/StepBuilder.h"

#include "ir/TccAttrNames.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_FROZENSTEP
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

struct FrozenStepPass : mlir::tcc::impl::FrozenStepBase<FrozenStepPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module.lookupSymbol("forward")) {
      module.emitError("tcc-frozen-step builds from @forward and @loss; run it "
                       "before tcc-build-train-step");
      return signalPassFailure();
    }
    if (module.lookupSymbol(kFrozenStepName)) {
      module.emitError("already has @") << kFrozenStepName;
      return signalPassFailure();
    }
    FailureOr<StepPlan> plan = planSteps(module);
    if (failed(plan))
      return signalPassFailure();
    Builder b(&getContext());
    // One step without all of them, from the last one's epochs on: the
    // parameters whose epochs end earlier still stop through
    // tcc.frozen_after in @train_step, so the meaning is unchanged.
    int64_t fromEpoch = 0, training = 0;
    SmallVector<Attribute> frozen;
    for (StateEntry &entry : plan->state)
      if (entry.trainable && entry.trainEpochs > 0) {
        fromEpoch = std::max(fromEpoch, entry.trainEpochs);
        frozen.push_back(b.getStringAttr(entry.name));
        entry.frozen = true;
      } else if (entry.trainable) {
        ++training;
      }
    // A step that trains nothing would have no gradient for fp16 loss
    // scaling to check, so the scale's state would stop where @train_step
    // keeps updating it: not built.
    if (training == 0)
      frozen.clear();
    recordPassResult(module, "frozen-step", "frozen", b.getArrayAttr(frozen));
    if (frozen.empty())
      return;
    if (failed(buildTrainStep(module, *plan, kFrozenStepName)))
      return signalPassFailure();
    auto fn = module.lookupSymbol<func::FuncOp>(kFrozenStepName);
    fn->setAttr(kFrozenFromEpochAttr, b.getI64IntegerAttr(fromEpoch));
    fn->setAttr(kFrozenParamsAttr, b.getArrayAttr(frozen));
    recordPassResult(module, "frozen-step", "from_epoch", b.getI64IntegerAttr(fromEpoch));
  }
};

} // namespace
