//===- TccTokenLossOps.td - Per-token cross entropy ---------*- tablegen -*-===//
//
// The loss of sequence targets (a language model's next-token prediction):
// one class per position, some positions ignored. Shapes and the gradient
// rule are in TccTokenLoss.cpp; the cpu kernels in
// runtime/kernels/TokenLoss.h.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_TOKEN_LOSS_OPS_TD
#define TCC_TOKEN_LOSS_OPS_TD

include "ir/TccDialect.td"
include "ir/TccInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tcc_TokenCrossEntropyOp : Tcc_Op<"token_cross_entropy",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Cross entropy at every position, as torch.nn.CrossEntropyLoss(ignore_index)";
  let description = [{
    `logits` [N, T, K] and class indices `labels` [N, T]: the cross entropy
    of each position whose label is not `ignore_index` (such a label must be
    in [0, K)), with label smoothing `s` as `tcc.cross_entropy`'s.
    `reduction` "mean" divides the sum by the positions counted (0 when none
    is: PyTorch's would be NaN), "sum" does not: PyTorch's
    `F.cross_entropy(logits.view(-1, K), labels.view(-1), ignore_index=...)`.
    The sum runs over the positions in order, in double. An f32 scalar.

    ```mlir
    %l = tcc.token_cross_entropy %logits, %labels {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = "mean"}
         : (tensor<8x16x65xf32>, tensor<8x16xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$logits, Tcc_IndexTensor:$labels, I64Attr:$ignore_index,
                       F64Attr:$label_smoothing, StrAttr:$reduction);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
}

def Tcc_TokenCrossEntropyBackwardOp : Tcc_Op<"token_cross_entropy_backward",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of token_cross_entropy with respect to the logits";
  let description = [{
    `grad` is the loss's (f32 scalar) gradient; the result has the logits'
    shape, zero at ignored positions, `grad * c * (softmax - target)`
    elsewhere with `c` 1 / (positions counted) for "mean", 1 for "sum".

    ```mlir
    %dl = tcc.token_cross_entropy_backward %g, %logits, %labels {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = "mean"}
          : (tensor<f32>, tensor<8x16x65xf32>, tensor<8x16xi64>) -> tensor<8x16x65xf32>
    ```
  }];
  let arguments = (ins Tcc_ScalarF32:$grad, Tcc_FloatTensor:$logits, Tcc_IndexTensor:$labels,
                       I64Attr:$ignore_index, F64Attr:$label_smoothing, StrAttr:$reduction);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $logits `,` $labels attr-dict `:` functional-type(operands, results)";
}

def Tcc_CountCorrectTokensOp : Tcc_Op<"count_correct_tokens", [Pure, InferTypeOpAdaptor]> {
  let summary = "How many positions not ignored have argmax == label";
  let description = [{
    `logits` [N, T, K], `labels` [N, T]: the per-token accuracy's numerator
    (its denominator, the positions not ignored, is the batch gather's
    count). The argmax takes the first maximal logit.

    ```mlir
    %n = tcc.count_correct_tokens %logits, %labels {ignore_index = -100 : i64}
         : (tensor<8x16x65xf32>, tensor<8x16xi64>) -> tensor<i64>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$logits, Tcc_IndexTensor:$labels, I64Attr:$ignore_index);
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
}

#endif // TCC_TOKEN_LOSS_OPS_TD
