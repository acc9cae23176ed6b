//===- CollectiveOps.cpp - The collectives of a distributed step on cuda ---===//
//
// Not built yet: the cuda target's collectives will be NCCL calls on the
// step's stream (docs/distributed.md). Until then a distributed step is
// refused with the way out.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

static LogicalResult refuse(Operation *op) {
  return op->emitOpError("needs NCCL, which the cuda target does not use yet: a step of "
                         "several ranks (train.distributed.ranks > 1) builds for --target=cpu "
                         "only so far");
}

void mlir::tcc::registerCudaCollectiveOps(CudaOpPrinters &t) {
  // A synchronised batch norm's parts exist only around collectives.
  t.add<AllReduceOp, BatchNormSumsOp, BatchNormBackwardSumsOp, BatchNormBackwardInputOp>(
      [](auto o, CudaPrinter &) { return refuse(o); });
}
