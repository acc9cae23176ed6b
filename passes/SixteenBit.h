//===- SixteenBit.h - Which values tcc stores in 16 bits ----------*- C++ -*-===//
//
// The passes that treat 16-bit tensors apart (tcc-pad-channels,
// tcc-channels-last, tcc-recompute) ask here.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_SIXTEENBIT_H
#define TCC_PASSES_SIXTEENBIT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace mlir::tcc {

/// True if `v` (a tensor) holds f16 or bf16 elements.
inline bool isSixteenBit(Value v) {
  Type element = cast<ShapedType>(v.getType()).getElementType();
  return element.isF16() || element.isBF16();
}

} // namespace mlir::tcc

#endif // TCC_PASSES_SIXTEENBIT_H
