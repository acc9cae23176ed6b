//===- TccInterfaces.h - What tcc passes ask of an op -----------*- C++ -*-===//
#ifndef TCC_IR_TCCINTERFACES_H
#define TCC_IR_TCCINTERFACES_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::tcc {

/// How an op fuses with its neighbours (FusionOpInterface, in
/// ir/TccInterfaces.td), from the most to the least fusible.
enum class FusionKind { Elementwise, Broadcast, Injective, Reduction, OutFusable, Opaque };

/// The kind's name as the report and the docs spell it.
llvm::StringRef stringifyFusionKind(FusionKind kind);

} // namespace mlir::tcc

#include "ir/TccInterfaces.h.inc"

namespace mlir::tcc {
/// The op's FusionOpInterface kind; Opaque for an op without the interface.
FusionKind fusionKindOf(Operation *op);
/// An update a multi-tensor kernel runs element by element: a Broadcast op
/// that updates state in place (SGD, AdamW, EMA, Lookahead; not LAMB, a
/// Reduction: its trust ratio needs whole-tensor norms).
bool isMultiTensorUpdate(Operation *op);
} // namespace mlir::tcc

#endif // TCC_IR_TCCINTERFACES_H
