//===- Activations.h - The activation ops as the kernels name them -*- C++ -*-===//
//
// Private to codegen/. One row per activation (common/Activations.cpp)
// gives both targets' printers and the fused groups' element functors, so
// that a new activation is one row there (and its kernel and functor in
// runtime/kernels/Activation.h).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_COMMON_ACTIVATIONS_H
#define TCC_CODEGEN_COMMON_ACTIVATIONS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::tcc {

/// An activation op, forward or backward, as runtime/kernels/Activation.h
/// spells it: kernels `<kernel>_forward` / `<kernel>_backward`, functors
/// `<Kernel>` / `<Kernel>Backward` (relu: Relu, gelu_tanh: GeluTanh).
struct Activation {
  std::string kernel;          ///< relu, leaky_relu, gelu_tanh, ...
  std::optional<APFloat> attr; ///< its one attribute (a slope, an alpha), if any
  bool backward = false;       ///< takes (grad, value); its functor (value, grad)
};

/// The activation `op` is, or nullopt for other ops.
std::optional<Activation> activationOf(Operation *op);

/// Every activation op, for the targets' printer tables.
SmallVector<TypeID> activationOps();

} // namespace mlir::tcc

#endif // TCC_CODEGEN_COMMON_ACTIVATIONS_H
