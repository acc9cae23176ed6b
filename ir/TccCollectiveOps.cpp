//===- TccCollectiveOps.cpp - Shapes and checks of the collectives -------===//

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  for (Value input : adaptor.getInputs())
    inferred.push_back(input.getType());
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one tensor");
  if (getReduction() != "sum" && getReduction() != "mean")
    return emitOpError("reduction must be \"sum\" or \"mean\", got \"")
           << getReduction() << "\"";
  return success();
}
