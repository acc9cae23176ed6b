//===- TccTraits.h - Op traits of the tcc dialect ---------------*- C++ -*-===//
#ifndef TCC_IR_TCCTRAITS_H
#define TCC_IR_TCCTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::tcc::OpTrait {

/// The op's results that replace training state (updated parameters,
/// optimizer slots, running statistics, the step counter) may be written
/// over the state operand they replace: each element is computed from the
/// same element of that operand (and values computed before), so memory
/// planning updates the state in place. Declared in ODS as
/// `Tcc_InPlaceStateUpdate`.
template <typename ConcreteType>
class InPlaceStateUpdate
    : public mlir::OpTrait::TraitBase<ConcreteType, InPlaceStateUpdate> {};

/// Under mixed precision the op computes in 16 bits with f32 accumulation
/// (Tcc_LowPrecisionCompute in ODS).
template <typename ConcreteType>
class LowPrecisionCompute
    : public mlir::OpTrait::TraitBase<ConcreteType, LowPrecisionCompute> {};

/// Under mixed precision the op's result has its data operands' precision
/// (Tcc_FollowsInputPrecision in ODS).
template <typename ConcreteType>
class FollowsInputPrecision
    : public mlir::OpTrait::TraitBase<ConcreteType, FollowsInputPrecision> {};

/// The kinds of 16-bit kernel an op needs (Tcc_SixteenBitUpdate,
/// Tcc_SixteenBitLibrary, Tcc_SixteenBitExact in ODS: what each means is
/// written there); a target names the kinds it runs on 16-bit tensors.
template <typename ConcreteType>
class SixteenBitUpdate : public mlir::OpTrait::TraitBase<ConcreteType, SixteenBitUpdate> {};
template <typename ConcreteType>
class SixteenBitLibrary : public mlir::OpTrait::TraitBase<ConcreteType, SixteenBitLibrary> {};
template <typename ConcreteType>
class SixteenBitExact : public mlir::OpTrait::TraitBase<ConcreteType, SixteenBitExact> {};
/// Kept in 16 bits on every target (Tcc_SixteenBitMove).
template <typename ConcreteType>
class SixteenBitMove : public mlir::OpTrait::TraitBase<ConcreteType, SixteenBitMove> {};

} // namespace mlir::tcc::OpTrait

#endif // TCC_IR_TCCTRAITS_H
