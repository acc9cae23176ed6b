//===- TccGradOps.td - Backward ops of the tcc dialect -----*- tablegen -*-===//
//
// What reverse-mode AD emits (each forward op's DifferentiableOpInterface
// rule). They are ordinary dialect ops so that passes see and fuse them.
// `grad` is always the gradient of the loss with respect to the forward
// op's result. Forward ops that are their own adjoints (add, mul, scale,
// reshape, transpose, cast, dropout) are reused instead of duplicated here.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_GRAD_OPS_TD
#define TCC_GRAD_OPS_TD

include "ir/TccDialect.td"
include "ir/TccInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Tcc_GradOp<string mnemonic, list<Trait> traits = []>
    : Tcc_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor]>;

//===----------------------------------------------------------------------===//
// Convolution and linear
//===----------------------------------------------------------------------===//

def Tcc_Conv2dBackwardDataOp : Tcc_GradOp<"conv2d_backward_data", [Tcc_SixteenBitLibrary, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "Gradient of conv2d with respect to its input";
  let description = [{
    The transposed convolution of `grad` [N, O, Ho, Wo] with `weight`; the
    result has shape `input_shape` (which stride alone cannot determine).

    ```mlir
    %dx = tcc.conv2d_backward_data %dy, %w {dilation = array<i64: 1, 1>, groups = 1 : i64,
            input_shape = array<i64: 8, 3, 32, 32>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
          : (tensor<8x64x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$weight,
                       DenseI64ArrayAttr:$input_shape, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Tcc_Conv2dBackwardFilterOp : Tcc_GradOp<"conv2d_backward_filter", [Tcc_SixteenBitLibrary, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "Gradient of conv2d with respect to its weight";
  let description = [{
    Correlates `input` [N, C, H, W] with `grad` [N, O, Ho, Wo]; the result is
    [O, C/groups, kernel[0], kernel[1]], summed over the batch.

    ```mlir
    %dw = tcc.conv2d_backward_filter %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64,
            kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
          : (tensor<8x64x32x32xf32>, tensor<8x3x32x32xf32>) -> tensor<64x3x3x3xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` functional-type(operands, results)";
}

def Tcc_LinearBackwardDataOp : Tcc_GradOp<"linear_backward_data", [Tcc_SixteenBitLibrary, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "Gradient of linear with respect to its input: grad * weight";
  let description = [{
    `grad` [..., O] times `weight` [O, I] gives [..., I].

    ```mlir
    %dx = tcc.linear_backward_data %dy, %w : (tensor<8x10xf32>, tensor<10x256xf32>) -> tensor<8x256xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$weight);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Tcc_LinearBackwardWeightOp : Tcc_GradOp<"linear_backward_weight", [Tcc_SixteenBitLibrary, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "Gradient of linear with respect to its weight: grad^T * input";
  let description = [{
    `grad` [..., O] and `input` [..., I], summed over the leading dims, give
    [O, I].

    ```mlir
    %dw = tcc.linear_backward_weight %dy, %x : (tensor<8x10xf32>, tensor<8x256xf32>) -> tensor<10x256xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` functional-type(operands, results)";
}

def Tcc_ReduceSumOp : Tcc_GradOp<"reduce_sum", [Tcc_SixteenBitExact, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Sum over some dims, which are removed";
  let description = [{
    Sums `input` over `axes` (strictly increasing); the result keeps the
    other dims in order. Bias gradients are reduce_sums of the output
    gradient; the model's `mean` is one, then a `tcc.scale`. Its gradient
    reshapes the incoming one with 1s at `axes` and expands each
    (`tcc.expand`).

    ```mlir
    %db = tcc.reduce_sum %dy {axes = array<i64: 0, 2, 3>} : (tensor<8x64x4x4xf32>) -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Tcc_BatchNormBackwardOp : Tcc_GradOp<"batch_norm_backward",
    [DeclareOpInterfaceMethods<Tcc_FusionOpInterface,
       ["getFusionKind", "getPrologueOperand", "getWideningLoadOperand", "getNarrowingStoreResult"]>]> {
  let summary = "Gradients of training-mode batch_norm";
  let description = [{
    From the output gradient, the input, the optional scale and the saved
    per-(ghost-)batch statistics of `tcc.batch_norm`, computes the gradients
    of the input, the scale and the shift (the batch statistics depend on
    the input). The scale and shift gradients ([C], f32) are produced even
    when the forward op had none; nothing uses them then.

    ```mlir
    %dx, %dw, %db = tcc.batch_norm_backward %dy, %x weight %w saved %mean, %invstd {ghost_batch = 0 : i64}
        : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
        -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Tcc_FloatTensor:$saved_mean, Tcc_FloatTensor:$saved_invstd,
                       I64Attr:$ghost_batch,
                       DefaultValuedAttr<BoolAttr, "false">:$ghost_strided);
  let results = (outs Tcc_FloatTensor:$grad_input, Tcc_FloatTensor:$grad_weight,
                      Tcc_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $grad `,` $input (`weight` $weight^)? `saved` $saved_mean `,` $saved_invstd
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_BatchNormBackwardSumsOp : Tcc_GradOp<"batch_norm_backward_sums"> {
  let summary = "One rank's part of a synchronised batch norm's backward";
  let description = [{
    Per channel, over this rank's samples: `sums` [2, C] f64 holds the sum
    of `grad` and the sum of `grad * (input - saved_mean)`, which a
    `tcc.all_reduce "sum"` adds up for `tcc.batch_norm_backward_input`;
    `grad_weight` and `grad_bias` ([C] f32) are this rank's gradients of
    the scale and shift (`sum grad * xhat`, `sum grad`), summed over the
    ranks with the other parameters' gradients, as DistributedDataParallel
    does with SyncBatchNorm's.

    ```mlir
    %s, %dw, %db = tcc.batch_norm_backward_sums %dy, %x saved %mean, %invstd
        : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
        -> (tensor<2x16xf64>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input,
                       Tcc_FloatTensor:$saved_mean, Tcc_FloatTensor:$saved_invstd);
  let results = (outs Tcc_SumsTensor:$sums, Tcc_FloatTensor:$grad_weight,
                      Tcc_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $grad `,` $input `saved` $saved_mean `,` $saved_invstd
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_BatchNormBackwardInputOp : Tcc_GradOp<"batch_norm_backward_input"> {
  let summary = "A synchronised batch norm's input gradient";
  let description = [{
    `tcc.batch_norm_backward`'s `grad_input` with the statistics of all
    `ranks` ranks' samples: `sums` [2, C] f64 are the sums of `grad` and
    `grad * (input - saved_mean)` over every rank (`tcc.all_reduce` of
    each rank's `tcc.batch_norm_backward_sums`), and the means in the
    formula divide by N * H * W * `ranks`.

    ```mlir
    %dx = tcc.batch_norm_backward_input %dy, %x weight %w saved %mean, %invstd sums %S
        {ranks = 2 : i64}
        : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<1x16xf32>,
           tensor<1x16xf32>, tensor<2x16xf64>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Tcc_FloatTensor:$saved_mean, Tcc_FloatTensor:$saved_invstd,
                       Tcc_SumsTensor:$sums, I64Attr:$ranks);
  let results = (outs Tcc_FloatTensor:$grad_input);
  let assemblyFormat = [{
    $grad `,` $input (`weight` $weight^)? `saved` $saved_mean `,` $saved_invstd `sums` $sums
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_LayerNormBackwardOp : Tcc_GradOp<"layer_norm_backward",
    [DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind", "getPrologueOperand"]>]> {
  let summary = "Gradients of layer_norm";
  let description = [{
    Like `batch_norm_backward`, over the trailing `normalized_dims` dims; the
    scale and shift gradients have their shape. Its kernels compute each
    element of `grad` from the elementwise ops that produce it, where they
    read it (a `norm_backward_prologue` group, `tcc-fusion`).

    ```mlir
    %dx, %dw, %db = tcc.layer_norm_backward %dy, %x saved %mean, %invstd {normalized_dims = 1 : i64}
        : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Tcc_FloatTensor:$saved_mean, Tcc_FloatTensor:$saved_invstd,
                       I64Attr:$normalized_dims);
  let results = (outs Tcc_FloatTensor:$grad_input, Tcc_FloatTensor:$grad_weight,
                      Tcc_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $grad `,` $input (`weight` $weight^)? `saved` $saved_mean `,` $saved_invstd
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Activations: grad and the forward op's input or result, same type
//===----------------------------------------------------------------------===//

class Tcc_ActivationGradOp<string mnemonic, string forward, string uses>
    : Tcc_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType,
                        InferTypeOpInterface, Tcc_FusionOpInterface]> {
  let summary = "Gradient of " # forward # ", from the forward " # uses;
  let description = "`grad * " # forward # "'` elementwise, computed from the "
    # "forward op's " # uses # " (the second operand).\n\n```mlir\n%dx = tcc."
    # mnemonic # " %dy, %v : tensor<8x16xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$value);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $value attr-dict `:` type($result)";
}

def Tcc_ReluBackwardOp : Tcc_ActivationGradOp<"relu_backward", "relu", "result">;
def Tcc_LeakyReluBackwardOp
    : Tcc_ActivationGradOp<"leaky_relu_backward", "leaky_relu", "input"> {
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$value,
                       F64Attr:$negative_slope);
}
def Tcc_EluBackwardOp : Tcc_ActivationGradOp<"elu_backward", "elu", "input"> {
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$value,
                       F64Attr:$alpha);
}
def Tcc_CeluBackwardOp : Tcc_ActivationGradOp<"celu_backward", "celu", "input"> {
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$value,
                       F64Attr:$alpha);
}
def Tcc_GeluBackwardOp : Tcc_ActivationGradOp<"gelu_backward", "gelu", "input"> {
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$value,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
}
def Tcc_SiluBackwardOp : Tcc_ActivationGradOp<"silu_backward", "silu", "input">;
def Tcc_SigmoidBackwardOp
    : Tcc_ActivationGradOp<"sigmoid_backward", "sigmoid", "result">;
def Tcc_TanhBackwardOp : Tcc_ActivationGradOp<"tanh_backward", "tanh", "result">;

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Tcc_MaxPool2dBackwardOp : Tcc_GradOp<"max_pool2d_backward", [Tcc_SixteenBitExact]> {
  let summary = "Gradient of max_pool2d";
  let description = [{
    Routes each window's gradient to the window's first maximal element of
    `input` (row-major order, as PyTorch's CPU kernel); overlapping windows
    add up. The maxima are recomputed from the input, not stored.

    ```mlir
    %dx = tcc.max_pool2d_backward %dy, %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>,
            stride = array<i64: 2, 2>} : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` functional-type(operands, results)";
}

def Tcc_AvgPool2dBackwardOp : Tcc_GradOp<"avg_pool2d_backward"> {
  let summary = "Gradient of avg_pool2d";
  let description = [{
    Spreads each window's gradient evenly over the window, with avg_pool2d's
    divisor; the result has shape `input_shape`.

    ```mlir
    %dx = tcc.avg_pool2d_backward %dy {count_include_pad = true, input_shape = array<i64: 8, 16, 32, 32>,
            kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
          : (tensor<8x16x16x16xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, DenseI64ArrayAttr:$input_shape,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, BoolAttr:$count_include_pad);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
}

def Tcc_ChannelMulBackwardGateOp : Tcc_GradOp<"channel_mul_backward_gate"> {
  let summary = "Gradient of channel_mul with respect to its gate: [N, C, ...] -> [N, C]";
  let description = [{
    `result[n, c] = sum over the other dims of grad[n, c, ...] * input[n, c, ...]`,
    accumulated in double. (The gradient with respect to the input is a
    `tcc.channel_mul` of `grad` and the gate.)

    ```mlir
    %dgate = tcc.channel_mul_backward_gate %dy, %x
             : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` functional-type(operands, results)";
}

def Tcc_GlobalAvgPoolBackwardOp : Tcc_GradOp<"global_avg_pool_backward"> {
  let summary = "Gradient of global_avg_pool: [N, C] -> [N, C, H, W]";
  let description = [{
    Broadcasts `grad / (H * W)` over the spatial dims of `input_shape`.

    ```mlir
    %dx = tcc.global_avg_pool_backward %dy {input_shape = array<i64: 8, 64, 7, 7>}
          : (tensor<8x64xf32>) -> tensor<8x64x7x7xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, DenseI64ArrayAttr:$input_shape);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
}

def Tcc_GlobalMaxPoolBackwardOp : Tcc_GradOp<"global_max_pool_backward"> {
  let summary = "Gradient of global_max_pool: to each channel's first maximum";
  let description = [{
    ```mlir
    %dx = tcc.global_max_pool_backward %dy, %x : (tensor<8x64xf32>, tensor<8x64x7x7xf32>) -> tensor<8x64x7x7xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$input);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Shape, probabilities, losses
//===----------------------------------------------------------------------===//

def Tcc_SliceBackwardOp : Tcc_GradOp<"slice_backward", [Tcc_SixteenBitExact]> {
  let summary = "Gradient of slice: the range placed back, zeros elsewhere";
  let description = [{
    `grad` is the gradient of `tcc.slice {axis, offset, size}`; the result has
    the sliced input's shape (`extent` along `axis`), `grad` at
    `offset ... offset + size - 1` and zeros elsewhere.

    ```mlir
    %dx = tcc.slice_backward %dy {axis = 1 : i64, offset = 2 : i64, extent = 5 : i64}
          : (tensor<8x3x16xf32>) -> tensor<8x5x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, I64Attr:$axis, I64Attr:$offset,
                       I64Attr:$extent);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
}

class Tcc_SoftmaxLikeGradOp<string mnemonic, string forward>
    : Tcc_GradOp<mnemonic> {
  let summary = "Gradient of " # forward # " from its result";
  let description = "```mlir\n%dx = tcc." # mnemonic # " %dy, %y {axis = 1 : i64}"
    # " : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$result_value,
                       I64Attr:$axis);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $result_value attr-dict `:` functional-type(operands, results)";
}

def Tcc_SoftmaxBackwardOp : Tcc_SoftmaxLikeGradOp<"softmax_backward", "softmax">;
def Tcc_LogSoftmaxBackwardOp
    : Tcc_SoftmaxLikeGradOp<"log_softmax_backward", "log_softmax">;

def Tcc_CrossEntropyBackwardOp : Tcc_GradOp<"cross_entropy_backward"> {
  let summary = "Gradient of cross_entropy with respect to the logits";
  let description = [{
    `grad` is the (scalar) gradient of the final loss with respect to the
    cross-entropy; the result is `grad * (softmax(logits) - target) / d`
    with the smoothed target and `d` = N for "mean", 1 for "sum".

    ```mlir
    %dl = tcc.cross_entropy_backward %g, %logits, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
          : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Tcc_ScalarF32:$grad, Tcc_FloatTensor:$logits,
                       Tcc_IndexTensor:$labels, F64Attr:$label_smoothing,
                       StrAttr:$reduction);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $logits `,` $labels attr-dict `:` functional-type(operands, results)";
}

def Tcc_MseLossBackwardOp : Tcc_GradOp<"mse_loss_backward"> {
  let summary = "Gradient of mse_loss with respect to its input";
  let description = [{
    `grad * 2 * (input - target) / d`, `d` the element count for "mean" and
    1 for "sum". The target's gradient is its negation.

    ```mlir
    %dx = tcc.mse_loss_backward %g, %x, %t {reduction = "mean"}
          : (tensor<f32>, tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Tcc_ScalarF32:$grad, Tcc_FloatTensor:$input,
                       Tcc_FloatTensor:$target, StrAttr:$reduction);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input `,` $target attr-dict `:` functional-type(operands, results)";
}

#endif // TCC_GRAD_OPS_TD
