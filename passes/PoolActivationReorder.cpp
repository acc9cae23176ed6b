//===- PoolActivationReorder.cpp - max_pool(f(x)) -> f(max_pool(x)) -------===//
//
// See Passes.td and docs/passes.md. The activation then runs on the pooled
// tensor; the rewrite keeps every value and gradient bit for bit because
// the pass asks the activation (MonotoneOpInterface::keepsMaxPoolTies).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/PassReport.h"

#include "ir/TccOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_POOLACTIVATIONREORDER
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The activation in front of `pool` that the pool may move past, or null.
Operation *movableActivation(Operation *pool) {
  Operation *act = pool->getOperand(0).getDefiningOp();
  auto monotone = dyn_cast_or_null<MonotoneOpInterface>(act);
  if (!monotone || act->getNumOperands() != 1 || act->getNumResults() != 1 ||
      !act->getResult(0).hasOneUse() || !monotone.isMonotoneNonDecreasing() ||
      !monotone.keepsMaxPoolTies())
    return nullptr;
  return act;
}

/// pool(act(x)) -> act'(pool'(x)), act' a copy of act on the pooled type.
void moveBefore(Operation *pool, Operation *act) {
  OpBuilder b(pool);
  IRMapping toInput;
  toInput.map(pool->getOperand(0), act->getOperand(0));
  Operation *newPool = b.clone(*pool, toInput);
  IRMapping toPooled;
  toPooled.map(act->getOperand(0), newPool->getResult(0));
  Operation *newAct = b.clone(*act, toPooled);
  newAct->getResult(0).setType(pool->getResult(0).getType());
  pool->getResult(0).replaceAllUsesWith(newAct->getResult(0));
  pool->erase();
  act->erase();
}

struct PoolActivationReorderPass
    : mlir::tcc::impl::PoolActivationReorderBase<PoolActivationReorderPass> {
  void runOnOperation() override {
    SmallVector<Operation *> pools;
    getOperation().walk([&](Operation *op) {
      if (isa<MaxPool2dOp, GlobalMaxPoolOp>(op))
        pools.push_back(op);
    });
    int64_t moved = 0;
    for (Operation *pool : pools)
      if (Operation *act = movableActivation(pool)) {
        moveBefore(pool, act);
        ++moved;
      }
    recordPassResult(getOperation(), "pool-activation-reorder", "moved",
                     Builder(&getContext()).getI64IntegerAttr(moved));
  }
};

} // namespace
