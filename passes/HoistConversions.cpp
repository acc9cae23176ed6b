//===- HoistConversions.cpp - A gradient's conversions moved up -----------===//

#include "passes/HoistConversions.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

int64_t mlir::tcc::hoistConversions(Block &block, Value v) {
  SmallVector<Operation *> chain;
  while (v.hasOneUse()) {
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != &block || op->getNumOperands() != 1 || op->getNumResults() != 1 ||
        op->getNumRegions() != 0 || !isPure(op))
      break;
    chain.push_back(op);
    v = op->getOperand(0);
  }
  int64_t moved = 0;
  for (Operation *op : llvm::reverse(chain)) {
    Operation *input = producerIn(block, op->getOperand(0));
    if (input ? op->getPrevNode() == input : op == &block.front())
      continue;
    if (input)
      op->moveAfter(input);
    else
      op->moveBefore(&block.front());
    ++moved;
  }
  return moved;
}
