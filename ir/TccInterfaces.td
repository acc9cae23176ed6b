//===- TccInterfaces.td - What tcc passes ask of an op -----*- tablegen -*-===//

#ifndef TCC_INTERFACES_TD
#define TCC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tcc_MonotoneOpInterface : OpInterface<"MonotoneOpInterface"> {
  let cppNamespace = "::mlir::tcc";
  let description = [{
    A unary elementwise op `f` that may be monotone non-decreasing, so that
    `max_pool(f(x)) == f(max_pool(x))` exactly (ties included). The
    pool/activation reordering pass moves a max-pool in front of such an op.
    Whether `f` is monotone can depend on its attributes (a leaky ReLU with a
    negative slope is not), hence a method rather than a trait.
  }];
  let methods = [
    InterfaceMethod<[{
        True when the op, with its current attributes, is monotone
        non-decreasing in its (single) tensor operand.
      }],
      "bool", "isMonotoneNonDecreasing", (ins), [{}],
      /*defaultImplementation=*/[{ return true; }]>,
    InterfaceMethod<[{
        True when `max_pool(f(x))` and `f(max_pool(x))` agree bit for bit in
        value and gradient: `f` is monotone non-decreasing, and wherever it
        maps two floats to one output its gradient is zero (ReLU: only at
        0). A strictly increasing `f` that rounds neighbouring inputs to one
        output where its slope is not zero would send the gradient of such a
        near-tie to another element of the pooling window.
      }],
      "bool", "keepsMaxPoolTies", (ins), [{}],
      /*defaultImplementation=*/[{ return false; }]>,
  ];
}

def Tcc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::tcc";
  let description = [{
    An op that knows its vector-Jacobian product: given the gradients of the
    loss with respect to its results, it builds (at the builder's insertion
    point) the ops computing the gradients with respect to its operands.
    Reverse-mode AD (`tcc-build-train-step`) is a reverse walk calling this;
    the rule of each op lives with the op (ir/TccGradients*.cpp).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the operand gradients. `resultGrads` has one entry per result,
        null where no gradient reaches that result (all-null never happens).
        `operandGrads` is resized to one entry per operand; an entry is left
        null for an operand that has no gradient (labels, running statistics,
        seeds). Fails only on an op the rule cannot handle, after emitting an
        error.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

def Tcc_FusionOpInterface : OpInterface<"FusionOpInterface"> {
  let cppNamespace = "::mlir::tcc";
  let description = [{
    How an op combines with its neighbours into one kernel (TVM's
    OpPatternKind): `tcc-fusion` groups ops by these kinds, and a code
    generator emits each group as one loop nest. An op without the interface
    is Opaque: it is never fused.

    - Elementwise: result element i depends on operand element i only
      (activations, add, activation gradients).
    - Broadcast: elementwise, with some operands broadcast (scalars, a
      per-channel vector): the optimizer and EMA updates. A Broadcast op
      that also updates state in place (the `InPlaceStateUpdate` trait)
      joins the step's `multi_tensor_update` groups.
    - Injective: each result element is one operand element (views,
      transposes, flips).
    - Reduction: reduces over some axes; elementwise producers and consumers
      can join it (batch-norm statistics, losses).
    - OutFusable: a compute-bound anchor (conv, matmul) whose elementwise
      consumers can run in its epilogue, where the target can do that: the
      target's pattern table says which (target/FusionPattern.h).

    Beyond its kind, an op whose own kernel applies its elementwise
    neighbours says which of its values they touch (the methods below), and
    `tcc-fusion` groups them with it: a batch norm's kernel applies the
    consumers of its normalised result (`norm_epilogue`), its backward
    computes the producers of its upstream gradient as it reads it
    (`norm_backward_prologue`); a layer norm's kernel does both in its
    forward (the residual add before it, the cast after it), and its
    backward as a batch norm's.
  }];
  let methods = [
    InterfaceMethod<[{
        The op's fusion kind. By default Elementwise for an op with the
        `Elementwise` trait and Opaque otherwise.
      }],
      "::mlir::tcc::FusionKind", "getFusionKind", (ins), [{}],
      /*defaultImplementation=*/[{
        return $_op->template hasTrait<::mlir::OpTrait::Elementwise>()
                   ? ::mlir::tcc::FusionKind::Elementwise
                   : ::mlir::tcc::FusionKind::Opaque;
      }]>,
    InterfaceMethod<[{
        The result whose elementwise consumers the op's kernel applies to
        each element before storing it; `tcc-fusion` groups them with the
        op (`norm_epilogue`), and the value itself never reaches memory.
        Null (the default) where its kernel takes none.
      }],
      "::mlir::Value", "getEpilogueResult", (ins), [{}],
      /*defaultImplementation=*/[{ return {}; }]>,
    InterfaceMethod<[{
        The operand the op's kernel computes as it reads each element, from
        the elementwise ops that produce it; `tcc-fusion` groups with the op
        those only it reads (`norm_backward_prologue`). On an op that also
        declares an epilogue result (a layer norm), its kernel stores the
        values others read as well: its producers join its `norm_epilogue`
        wherever the group can still sit at its last op, and it yields them.
        Null (the default) where its kernel computes none.
      }],
      "::mlir::OpOperand *", "getPrologueOperand", (ins), [{}],
      /*defaultImplementation=*/[{ return nullptr; }]>,
    InterfaceMethod<[{
        The operand the op's kernel can load from 16-bit storage, widening
        each element to f32 as it loads it: in the op's epilogue or prologue
        group, the `tcc.cast` that widens it joins. Null (the default) where
        it cannot.
      }],
      "::mlir::OpOperand *", "getWideningLoadOperand", (ins), [{}],
      /*defaultImplementation=*/[{ return nullptr; }]>,
    InterfaceMethod<[{
        The f32 result the op's kernel can store narrowed to 16 bits, with a
        cast's rounding: in the op's prologue group, the `tcc.cast` that
        alone reads it and narrows it joins. Null (the default) where it
        cannot.
      }],
      "::mlir::Value", "getNarrowingStoreResult", (ins), [{}],
      /*defaultImplementation=*/[{ return {}; }]>,
  ];
}

#endif // TCC_INTERFACES_TD
