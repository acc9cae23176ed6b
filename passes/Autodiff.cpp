//===- Autodiff.cpp - Reverse-mode AD over one block ----------------------===//

#include "passes/Autodiff.h"

#include "ir/TccOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tcc;

FailureOr<SmallVector<Value>> mlir::tcc::buildGradients(OpBuilder &builder,
                                                        Value loss,
                                                        ArrayRef<Value> wrt) {
  // Active ops: those that depend on some `wrt` value (forward sweep over
  // the straight-line block) and that the loss depends on (backward sweep).
  Block *block = loss.getParentBlock();
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  llvm::SetVector<Operation *> active;
  for (Operation &op : *block) {
    if (llvm::any_of(op.getOperands(), [&](Value v) { return varied.contains(v); }))
      for (Value r : op.getResults())
        varied.insert(r);
    if (&op == loss.getDefiningOp())
      break;
  }
  llvm::DenseSet<Value> useful{loss};
  SmallVector<Operation *> reverse;
  for (Operation *op = loss.getDefiningOp(); op; op = op->getPrevNode()) {
    bool feedsLoss = llvm::any_of(op->getResults(),
                                  [&](Value r) { return useful.contains(r); });
    // By its operands: an op that makes a `wrt` value from others (the
    // gather of sharded parameters) passes no gradient on.
    bool varies = llvm::any_of(op->getOperands(),
                               [&](Value v) { return varied.contains(v); });
    if (!feedsLoss || !varies)
      continue;
    reverse.push_back(op);
    for (Value v : op->getOperands())
      useful.insert(v);
  }

  Location loc = loss.getLoc();
  llvm::DenseMap<Value, Value> grads;
  grads[loss] = builder.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(cast<ShapedType>(loss.getType()), 1.0f));
  for (Operation *op : reverse) {
    SmallVector<Value> resultGrads;
    for (Value r : op->getResults())
      resultGrads.push_back(grads.lookup(r));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    auto rule = dyn_cast<DifferentiableOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no gradient rule, but the loss depends on "
                             "a trained parameter through it"),
             failure();
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradients(builder, resultGrads, operandGrads)))
      return failure();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !varied.contains(operand))
        continue;
      Value &slot = grads[operand];
      // A value used several times (a residual branch) sums its gradients.
      slot = slot ? builder.create<AddOp>(loc, slot, grad).getResult() : grad;
    }
  }
  SmallVector<Value> result;
  for (Value v : wrt)
    result.push_back(grads.lookup(v));
  return result;
}
