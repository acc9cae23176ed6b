//===- TccDialect.td - The tcc dialect ---------------------*- tablegen -*-===//

#ifndef TCC_DIALECT_TD
#define TCC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tcc_Dialect : Dialect {
  let name = "tcc";
  let cppNamespace = "::mlir::tcc";
  let summary = "Whole training steps of neural networks, ahead of time";
  let description = [{
    The `tcc` dialect describes a neural network's training step as a DAG of
    tensor ops in one block: forward ops, losses, and (added by autodiff) their
    backward ops and the optimizer. Tensors are ranked and statically shaped;
    the logical layout is NCHW as in PyTorch. Value semantics throughout:
    buffers appear only at memory planning.

    Properties that passes rely on are declared on the ops themselves, as
    traits (`Elementwise`) and interfaces (`MonotoneOpInterface`), so a new op
    is described in one place.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The memory plan's attributes are checked against the IR they are on.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Adds the recipe's and the memory plan's attributes (ir/TccAttrs.td).
    void registerAttributes();
  }];
  let useDefaultTypePrinterParser = 0;
}

class Tcc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tcc_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Traits (ir/TccTraits.h)
//===----------------------------------------------------------------------===//

// Results that replace state may overwrite the state operand (in place).
def Tcc_InPlaceStateUpdate : NativeOpTrait<"InPlaceStateUpdate"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}

// Mixed precision (tcc-precision, docs/passes.md): what an op computes in.
// An op with neither trait computes in f32 (batch statistics, softmax,
// losses, reductions, the optimizer).
// Under bf16-mixed its float operands are cast to 16 bits and so is its
// result; it accumulates in f32 (conv2d, linear and, through autodiff,
// their backward ops).
def Tcc_LowPrecisionCompute : NativeOpTrait<"LowPrecisionCompute"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}
// Its result has the precision of its data operands (those of operand 0's
// rank: not a batch norm's [C] scale): 16-bit when all of them are, f32
// (the 16-bit ones cast up) when they are mixed.
def Tcc_FollowsInputPrecision : NativeOpTrait<"FollowsInputPrecision"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}

// What computing on 16-bit tensors asks of an op's kernel: a target runs the
// kinds its kernels take on the stored 16-bit values, and every other op on
// f32 copies (tcc-widen-16bit; TargetBackend::sixteenBitKinds).
// "update": computes in double from the stored values and rounds where it
// stores (the optimizer, EMA and Lookahead updates of 16-bit state).
def Tcc_SixteenBitUpdate : NativeOpTrait<"SixteenBitUpdate"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}
// "library": a contraction that DNN and BLAS libraries run on 16-bit
// tensors with f32 accumulation (convolutions, linear layers, their
// backward ops).
def Tcc_SixteenBitLibrary : NativeOpTrait<"SixteenBitLibrary"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}
// "exact": its 16-bit result is the rounding of the exact one: it copies or
// selects stored bits (views, channel padding, slices, max pooling) or sums
// in a wider type and rounds once where it stores (max pooling's backward, a
// bias gradient's sum).
def Tcc_SixteenBitExact : NativeOpTrait<"SixteenBitExact"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}
// Moves stored bits between ranks or into a rank's chunk (tcc.shard,
// tcc.all_gather), which every target does in any element type: kept in 16
// bits on every target, whatever kinds it names.
def Tcc_SixteenBitMove : NativeOpTrait<"SixteenBitMove"> {
  let cppNamespace = "::mlir::tcc::OpTrait";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Static shapes with no zero-sized dim (an empty batch, channel or class dim
// is always a model error, and kernels need not handle it) and sizes that
// keep every shape computation far from int64 overflow.
def Tcc_SupportedShapePred : CPred<[{::mlir::tcc::isSupportedShape(
    ::llvm::cast<::mlir::ShapedType>($_self).getShape())}]>;

class Tcc_TensorOf<list<Type> types>
    : Type<And<[StaticShapeTensorOf<types>.predicate, Tcc_SupportedShapePred]>,
           "statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of " # AnyTypeOf<types>.summary,
           "::mlir::TensorType">;

def Tcc_Tensor : Tcc_TensorOf<[F32, F16, BF16, I64, UI8]>;
def Tcc_FloatTensor : Tcc_TensorOf<[F32, F16, BF16]>;
def Tcc_IndexTensor : Tcc_TensorOf<[I64]>;
/// Per-channel sums a synchronised batch norm reduces over the ranks, kept
/// in f64 as the cpu kernels accumulate them.
def Tcc_SumsTensor : Tcc_TensorOf<[F64]>;
def Tcc_ReducibleTensor : Tcc_TensorOf<[F32, F16, BF16, F64]>;
def Tcc_ScalarF32 : 0DTensorOf<[F32]>;
/// fp16 loss scaling's found-inf flag, an optional operand of the updates:
/// buildable, so their assembly formats leave out its type.
def Tcc_SkipFlag : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def Tcc_SeedTensor : 0DTensorOf<[I64]>;

#endif // TCC_DIALECT_TD
