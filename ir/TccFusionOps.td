//===- TccFusionOps.td - Ops that one kernel runs together -*- tablegen -*-===//
//
// The unit of fusion: tcc-fusion moves ops into a tcc.fusion_group, and a
// code generator emits each group as one loop nest (one kernel).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FUSION_OPS_TD
#define TCC_FUSION_OPS_TD

include "ir/TccDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tcc_FusionGroupOp : Tcc_Op<"fusion_group",
    [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "Ops that run as one kernel";
  let description = [{
    In the spirit of IREE's `flow.dispatch.region`: the body holds the ops of
    one kernel, in order, and reads values defined above it directly (no
    block arguments). The body ends with `tcc.yield` of the values that
    leave the group: its results. A value defined in the body and not
    yielded never reaches memory: the memory plan gives it none, and the
    code generator keeps it in a register of the group's loop.

    `kind` says which loop nest the group is (docs/passes.md, "tcc-fusion"):

    - `elementwise`: a chain of Elementwise ops over tensors of one size;
      one loop over the elements.
    - `norm_epilogue`: a `tcc.batch_norm`, `tcc.batch_norm_inference` or
      `tcc.batch_norm_apply` (after the `tcc.cast` that widens its 16-bit
      input, if any: the norm's kernel widens as it loads), then
      Elementwise ops on its normalised result: the norm's kernel runs them
      on each normalised element before it is stored. Elementwise ops
      before the norm compute what those read (the widening of a residual,
      say), element by element too. Or a `tcc.layer_norm` with Elementwise
      ops on both sides: its kernel computes each element of its input from
      the ops before it as it reads it (a residual add, whose sum the group
      yields where others read it) and runs the ops after it on each
      normalised element.
    - `norm_backward_prologue`: Elementwise ops computing the upstream
      gradient of a `tcc.batch_norm_backward`, which follows them: its
      kernel computes each gradient element where it reads it, and the
      gradient never reaches memory. Last, if any, the `tcc.cast` that
      alone reads the backward's `grad_input` and narrows it to 16-bit
      storage: the kernel stores dx narrowed, and the f32 dx never reaches
      memory either. Or Elementwise ops computing the upstream gradient
      of a `tcc.layer_norm_backward`, then it.
    - `matmul_epilogue`: a `tcc.linear` first, then the `tcc.relu` or the
      tanh-approximated `tcc.gelu` of its result, which the matmul library
      applies before it stores the result (cuBLASLt's RELU_BIAS and
      GELU_BIAS epilogues; a target option, cuda only). ReLU's backward
      reads its output, so the linear's own result never reaches memory;
      GELU's reads its input, which the group then yields too (GELU_AUX_BIAS
      stores it beside the output).
    - `conv_epilogue`: a `tcc.conv2d` with a bias first, then the `tcc.relu`
      of its result, which the convolution library applies to its f32 sums
      with the bias before it rounds and stores them (cuDNN's fused
      engines; a target option, cuda only). Under 16-bit storage the ReLU
      sits between the `tcc.cast` that widens the convolution's result to
      f32 and the one that narrows its own back to the convolution's type.
      Each op's result is read by the next only; the group yields the
      last. ReLU's backward reads its output, so the sums never reach
      memory.
    - `conv_statistics`: a `tcc.conv2d` without a bias first, then the
      `tcc.batch_norm_sums` of its result (one rank) and the centered
      `tcc.batch_norm_sums` around that sum: the statistics a whole-batch
      `tcc.batch_norm` takes as its `statistics`, which the convolution
      library gathers from its output as it stores it (cuDNN's `genstats`:
      one pass, f32 sums of the values and of their squares; a target
      option, cuda only, fp16). The group yields the convolution's result
      and the two sums.
    - `multi_tensor_cast`: `tcc.cast` ops between f32 and a 16-bit type of
      different tensors, none reading another's result, each keeping its
      layout: one launch converts them all (a target option, cuda only: a
      bf16-mixed step's parameter copies, its gradients widened for the
      update).
    - `multi_tensor_update`: the optimizer, EMA and Lookahead updates of
      many tensors (`sgd_update`, `adamw_update`, `ema_update`,
      `lookahead_update`), as one multi-tensor kernel: each tensor's
      updates run element by element in the group's order.

    ```mlir
    %y, %z = tcc.fusion_group "elementwise" -> (tensor<8x16xf32>, tensor<8x16xf32>) {
      %a = tcc.celu %x {alpha = 1.0 : f64} : tensor<8x16xf32>
      %b = tcc.add %a, %r : tensor<8x16xf32>, tensor<8x16xf32>
      tcc.yield %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind);
  // (f64: the per-channel sums of a conv_statistics group.)
  let results = (outs Variadic<AnyTypeOf<[Tcc_Tensor, Tcc_SumsTensor]>>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind attr-dict `->` `(` type($results) `)` $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ops of the group, without the yield.
    auto getFusedOps() { return getBody().front().without_terminator(); }
    /// The batch_norm_backward or layer_norm_backward of a
    /// norm_backward_prologue group (null in the other kinds).
    ::mlir::Operation *getNormBackward();
    /// The kinds a group can have, as `kind` spells them.
    static constexpr ::llvm::StringLiteral kElementwise = "elementwise";
    static constexpr ::llvm::StringLiteral kNormEpilogue = "norm_epilogue";
    static constexpr ::llvm::StringLiteral kNormBackwardPrologue = "norm_backward_prologue";
    static constexpr ::llvm::StringLiteral kMultiTensorUpdate = "multi_tensor_update";
    static constexpr ::llvm::StringLiteral kMatmulEpilogue = "matmul_epilogue";
    static constexpr ::llvm::StringLiteral kConvEpilogue = "conv_epilogue";
    static constexpr ::llvm::StringLiteral kConvStatistics = "conv_statistics";
    static constexpr ::llvm::StringLiteral kMultiTensorCast = "multi_tensor_cast";
  }];
}

#endif // TCC_FUSION_OPS_TD
