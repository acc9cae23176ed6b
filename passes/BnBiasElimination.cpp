//===- BnBiasElimination.cpp - Drop biases a batch norm cancels -----------===//
//
// See Passes.td and docs/passes.md. bn(conv(x) + b) normalises with the
// batch's own mean, which contains b: the bias cancels, so its gradient is
// zero up to round-off and updating it only costs time and optimizer state.
// The pass removes the bias from the op; the bias stays in the state as a
// frozen zero (so checkpoints keep PyTorch's names and load with
// strict=True) and records the running mean a loaded nonzero value folds
// into (the trainer does that: runtime/trainer/Init.h).
//
//===----------------------------------------------------------------------===//

#include "passes/PassReport.h"
#include "passes/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_BNBIASELIMINATION
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The bias operand of a conv2d or a 2-D linear whose only user is a batch
/// norm normalising its channel dim with batch statistics, or null.
OpOperand *cancelledBias(Operation *op) {
  OpOperand *bias = nullptr;
  if (auto conv = dyn_cast<Conv2dOp>(op); conv && conv.getBias())
    bias = &conv->getOpOperand(2);
  // A linear's features are the batch norm's channels only for [N, F].
  if (auto linear = dyn_cast<LinearOp>(op);
      linear && linear.getBias() && cast<ShapedType>(linear.getType()).getRank() == 2)
    bias = &linear->getOpOperand(2);
  if (!bias || !op->getResult(0).hasOneUse())
    return nullptr;
  auto norm = dyn_cast<BatchNormOp>(*op->getResult(0).getUsers().begin());
  if (!norm || norm.getInput() != op->getResult(0))
    return nullptr;
  return bias;
}

struct BnBiasEliminationPass
    : mlir::tcc::impl::BnBiasEliminationBase<BnBiasEliminationPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(&getContext());
    SmallVector<Attribute> removed;
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (forward)
      forward.walk([&](Operation *op) {
        OpOperand *bias = cancelledBias(op);
        // The bias must be a parameter of @forward used nowhere else.
        auto arg = bias ? dyn_cast<BlockArgument>(bias->get()) : BlockArgument();
        if (!arg || !arg.hasOneUse())
          return;
        unsigned i = arg.getArgNumber();
        auto name = forward.getArgAttrOfType<StringAttr>(i, kParamAttr);
        auto norm = cast<BatchNormOp>(*op->getResult(0).getUsers().begin());
        auto runningMean = dyn_cast<BlockArgument>(norm.getRunningMean());
        StringAttr meanName =
            runningMean ? forward.getArgAttrOfType<StringAttr>(runningMean.getArgNumber(),
                                                               kBufferAttr)
                        : StringAttr();
        if (!name || !meanName)
          return;
        op->eraseOperand(bias->getOperandNumber());
        // A frozen zero in the state: PyTorch's names, no optimizer state.
        forward.setArgAttr(i, kTrainableAttr, b.getBoolAttr(false));
        forward.setArgAttr(i, kInitAttr,
                           b.getDictionaryAttr({b.getNamedAttr("kind", b.getStringAttr("constant")),
                                                b.getNamedAttr("value", b.getF64FloatAttr(0))}));
        forward.setArgAttr(i, kFoldedIntoAttr, meanName);
        removed.push_back(name);
      });
    recordPassResult(module, "bn-bias-elimination", "removed", b.getArrayAttr(removed));
  }
};

} // namespace
