//===- Autodiff.h - Reverse-mode AD over one block --------------*- C++ -*-===//
#ifndef TCC_PASSES_AUTODIFF_H
#define TCC_PASSES_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::tcc {

/// Builds, at `builder`'s insertion point (after every op it reads), the
/// gradients of the scalar `loss` with respect to each of `wrt`, by walking
/// the ops between them in reverse and calling each op's
/// DifferentiableOpInterface rule. A `wrt` value the loss does not depend on
/// gets a null gradient. Fails, with an error on the op, when an op on the
/// way is not differentiable.
FailureOr<SmallVector<Value>> buildGradients(OpBuilder &builder, Value loss,
                                             ArrayRef<Value> wrt);

} // namespace mlir::tcc

#endif // TCC_PASSES_AUTODIFF_H
