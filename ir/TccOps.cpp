//===- TccOps.cpp - Verifiers and interface methods of tcc ops ------------===//
//
// Result types and the shape checks behind them are in TccShapeInference.cpp;
// folders in TccOpFolders.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/TccOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tcc;

/// Activation coefficients must be finite: NaN would also defeat the
/// monotonicity test that pool/activation reordering relies on.
static LogicalResult verifyFinite(Operation *op, StringRef name,
                                  const APFloat &value) {
  if (value.isFinite())
    return success();
  return op->emitOpError(name) << " must be finite";
}

// Views: the result is the input's bytes in another shape.
Value FlattenOp::getViewSource() { return getInput(); }
Value ReshapeOp::getViewSource() { return getInput(); }

LogicalResult LeakyReluOp::verify() {
  return verifyFinite(*this, "negative_slope", getNegativeSlope());
}
LogicalResult EluOp::verify() { return verifyFinite(*this, "alpha", getAlpha()); }
LogicalResult ScaleOp::verify() {
  return verifyFinite(*this, "factor", getFactor());
}

LogicalResult CeluOp::verify() {
  if (getAlpha().isZero())
    return emitOpError("alpha must be non-zero");
  return verifyFinite(*this, "alpha", getAlpha());
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

// With a negative slope (or alpha, or factor) these map larger inputs to
// smaller outputs on part of the line, so max-pool no longer commutes.
// ReLU is the identity where its gradient is non-zero: no new ties there.
bool ReluOp::keepsMaxPoolTies() { return true; }

bool LeakyReluOp::isMonotoneNonDecreasing() {
  return !getNegativeSlope().isNegative();
}
bool EluOp::isMonotoneNonDecreasing() { return !getAlpha().isNegative(); }
bool ScaleOp::isMonotoneNonDecreasing() { return !getFactor().isNegative(); }

#define GET_OP_CLASSES
#include "ir/TccOps.cpp.inc"
