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

/// Whether `chunk` is the [ceil(n / ranks)] chunk of `whole` (same element
/// type); the error says what it should be.
static LogicalResult checkChunk(Operation *op, Type whole, Type chunk, int64_t ranks,
                                StringRef what) {
  if (ranks < 1)
    return op->emitOpError("ranks must be >= 1, got ") << ranks;
  auto w = cast<ShapedType>(whole), c = cast<ShapedType>(chunk);
  int64_t expected = (w.getNumElements() + ranks - 1) / ranks;
  if (c.getRank() != 1 || c.getDimSize(0) != expected ||
      w.getElementType() != c.getElementType())
    return op->emitOpError(what) << " of " << whole << " over " << ranks << " ranks must be "
                                 << RankedTensorType::get({expected}, w.getElementType())
                                 << ", got " << chunk;
  return success();
}

LogicalResult ShardOp::verify() {
  return checkChunk(*this, getInput().getType(), getResult().getType(), getRanks(),
                    "the chunk");
}

LogicalResult AllGatherOp::verify() {
  if (getInputs().empty() || getInputs().size() != getResults().size())
    return emitOpError("needs one result per operand, and at least one");
  for (auto [in, out] : llvm::zip(getInputs(), getResults()))
    if (failed(checkChunk(*this, out.getType(), in.getType(), getRanks(), "the chunk")))
      return failure();
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  if (getInputs().empty() || getInputs().size() != getResults().size())
    return emitOpError("needs one result per operand, and at least one");
  for (auto [in, out] : llvm::zip(getInputs(), getResults()))
    if (failed(checkChunk(*this, in.getType(), out.getType(), getRanks(), "the chunk")))
      return failure();
  return success();
}
