//===- TccOps.td - Forward and loss ops of the tcc dialect -*- tablegen -*-===//
//
// Conventions: logical layout NCHW as in PyTorch; every axis attribute is
// non-negative and counts the batch as dim 0 (the frontend normalises
// PyTorch's negative axes); spatial attributes are [height, width] pairs.
// Result types are always inferred (InferTypeOpInterface); the inference
// functions are where shape errors are reported.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_OPS_TD
#define TCC_OPS_TD

include "ir/TccDialect.td"
include "ir/TccInterfaces.td"
include "ir/TccAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"

//===----------------------------------------------------------------------===//
// Convolution and linear
//===----------------------------------------------------------------------===//

def Tcc_Conv2dOp : Tcc_Op<"conv2d", [Pure, Tcc_LowPrecisionCompute, Tcc_SixteenBitLibrary, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "2-D convolution (cross-correlation), as torch.nn.functional.conv2d";
  let description = [{
    `input` is [N, C, H, W], `weight` [O, C/groups, kH, kW] and the optional
    `bias` [O]. Padding is symmetric zero padding of `padding[i]` on both
    sides of spatial dim `i`. The result is [N, O, Ho, Wo] with
    `Ho = (H + 2*pad - dil*(kH-1) - 1) / stride + 1` (floor), as in PyTorch.

    ```mlir
    %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64,
           padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
         : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>, tensor<64xf32>)
         -> tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$weight,
                       Optional<Tcc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_LinearOp : Tcc_Op<"linear", [Pure, Tcc_LowPrecisionCompute, Tcc_SixteenBitLibrary, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Affine map of the last dim, as torch.nn.functional.linear";
  let description = [{
    `input` is [..., I], `weight` [O, I] (PyTorch's layout) and the optional
    `bias` [O]; the result is [..., O] = input * weight^T + bias.

    ```mlir
    %y = tcc.linear %x, %w : (tensor<8x256xf32>, tensor<10x256xf32>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$weight,
                       Optional<Tcc_FloatTensor>:$bias);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_MatmulOp : Tcc_Op<"matmul", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Batched product of two activations, as torch.matmul";
  let description = [{
    `lhs` is [B..., M, K] and `rhs` [B..., K, P] with equal leading dims B
    (the batch first); the result is [B..., M, P]. `transpose_a` and
    `transpose_b` take the last two dims of `lhs` or `rhs` transposed
    (`q @ k.transpose(-2, -1)`). Its gradient is two matmuls with other
    transposes.

    ```mlir
    %s = tcc.matmul %q, %k {transpose_a = false, transpose_b = true}
         : (tensor<8x17x16xf32>, tensor<8x17x16xf32>) -> tensor<8x17x17xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$lhs, Tcc_FloatTensor:$rhs, BoolAttr:$transpose_a,
                       BoolAttr:$transpose_b);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Tcc_BatchNormOp : Tcc_Op<"batch_norm",
    [Pure, AttrSizedOperandSegments, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate, Tcc_FollowsInputPrecision,
     DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>,
     DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind", "getEpilogueResult", "getWideningLoadOperand"]>]> {
  let summary = "Batch normalisation in training mode, with PyTorch's semantics";
  let description = [{
    Normalises `input` ([N, C] or [N, C, H, W]) per channel with the batch's
    statistics. With `ghost_batch = G > 0` the batch is split into N/G ghost
    batches of G samples, each normalised with its own statistics (Hoffer et
    al.); `ghost_batch = 0` means one batch of N. A ghost batch is G
    consecutive samples, or with `ghost_strided` the samples `g`, `g + N/G`,
    `g + 2 N/G`, ... (myrtle.ai's GhostBatchNorm, whose `view(-1, C *
    num_splits, H, W)` groups sample i into split i mod num_splits).

    As in PyTorch, the biased variance normalises and the unbiased variance
    (n/(n-1)) updates `running_var`:
    `new_running = (1 - momentum) * running + momentum * batch_statistic`;
    with ghost batches the batch statistic is the mean over the ghost batches.
    `weight` (scale) and `bias` (shift) are optional; a frozen scale is a
    `weight` operand that is not trained.

    Results: the normalised tensor; `saved_mean` and `saved_invstd`
    (1/sqrt(biased_var + eps)), both [N/G, C] in f32, for the backward op;
    and the updated running statistics [C]. Statistics are always f32.

    Synchronised batch norm (train.distributed.sync_batch_norm): with
    `statistics %sum, %sq` ([C] f64 each) the batch is the `ranks` ranks'
    inputs together, and the op takes its statistics from these sums over
    all of them (`tcc.batch_norm_sums` and `tcc.all_reduce` produce them):
    `mean = sum / count`, `biased_var = sq / count`, with `count` = N * H *
    W * `ranks`; the running variance's correction is count/(count-1).
    Then `ghost_batch` is 0. Nothing flows back through the sums: the
    op's gradient rule accounts for the statistics' dependence on the
    input (`tcc.batch_norm_backward_input`).

    ```mlir
    %y, %mean, %invstd, %rm, %rv = tcc.batch_norm %x weight %g bias %b
        running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
        -> (tensor<8x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Optional<Tcc_FloatTensor>:$bias,
                       Tcc_FloatTensor:$running_mean,
                       Tcc_FloatTensor:$running_var,
                       Optional<Tcc_SumsTensor>:$sum,
                       Optional<Tcc_SumsTensor>:$squared_deviations,
                       F64Attr:$momentum, F64Attr:$eps, I64Attr:$ghost_batch,
                       DefaultValuedAttr<BoolAttr, "false">:$ghost_strided,
                       DefaultValuedAttr<I64Attr, "1">:$ranks);
  let results = (outs Tcc_FloatTensor:$result, Tcc_FloatTensor:$saved_mean,
                      Tcc_FloatTensor:$saved_invstd,
                      Tcc_FloatTensor:$new_running_mean,
                      Tcc_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `running` $running_mean `,` $running_var
    (`statistics` $sum^ `,` $squared_deviations)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    LogicalResult buildSynchronisedGradients(OpBuilder &b, Value grad,
                                             SmallVectorImpl<Value> &operandGrads);
  }];
}

def Tcc_BatchNormSumsOp : Tcc_Op<"batch_norm_sums", [Pure, InferTypeOpAdaptor]> {
  let summary = "One rank's per-channel sums for a synchronised batch norm";
  let description = [{
    Per channel of `input` ([N, C] or [N, C, H, W]), in f64: the sum of the
    elements, or with `centered %sum` (that sum over every rank, [C] f64)
    the sum of the squared deviations from the mean of all `ranks` ranks'
    inputs, `sum / (N * H * W * ranks)`. A `tcc.all_reduce "sum"` of each
    gives a synchronised `tcc.batch_norm` its statistics: the two passes of
    an ordinary batch norm (mean, then deviations from it), each summed
    over the ranks.

    ```mlir
    %s = tcc.batch_norm_sums %x {ranks = 2 : i64} : (tensor<8x16x4x4xf32>) -> tensor<16xf64>
    %S = tcc.all_reduce "sum" %s : tensor<16xf64>
    %q = tcc.batch_norm_sums %x centered %S {ranks = 2 : i64}
        : (tensor<8x16x4x4xf32>, tensor<16xf64>) -> tensor<16xf64>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Optional<Tcc_SumsTensor>:$centered,
                       I64Attr:$ranks);
  let results = (outs Tcc_SumsTensor:$result);
  let assemblyFormat = [{
    $input (`centered` $centered^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_BatchNormInferenceOp : Tcc_Op<"batch_norm_inference",
    [Pure, Tcc_FollowsInputPrecision, AttrSizedOperandSegments, InferTypeOpAdaptor,
     DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind", "getEpilogueResult", "getWideningLoadOperand"]>]> {
  let summary = "Batch normalisation with running statistics (evaluation)";
  let description = [{
    `(input - running_mean) / sqrt(running_var + eps) * weight + bias`, per
    channel; `weight` and `bias` are optional. This is what `batch_norm`
    becomes in the evaluation step.

    ```mlir
    %y = tcc.batch_norm_inference %x running %m, %v {eps = 1.0e-05 : f64}
        : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Optional<Tcc_FloatTensor>:$bias,
                       Tcc_FloatTensor:$running_mean,
                       Tcc_FloatTensor:$running_var, F64Attr:$eps);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `running` $running_mean `,` $running_var
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_BatchNormApplyOp : Tcc_Op<"batch_norm_apply",
    [Pure, AttrSizedOperandSegments, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "A training batch_norm's result, recomputed from its saved statistics";
  let description = [{
    `(input - saved_mean) * saved_invstd * weight + bias`, per (ghost) batch
    and channel, with the `saved_mean` and `saved_invstd` [N/G, C] a
    `tcc.batch_norm` of the same input produced: the same value as that
    op's `result`, bit for bit (both round `scale = invstd * weight` and
    `shift = bias - mean * scale` once, from the saved f32 statistics). The
    recompute pass (tcc-recompute) writes it where it drops the normalised
    tensor from memory and computes it again where the backward reads it.
    `weight` and `bias` are optional, as on `tcc.batch_norm`.

    ```mlir
    %y = tcc.batch_norm_apply %x weight %g bias %b saved %mean, %invstd {ghost_batch = 0 : i64}
        : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
        -> tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Optional<Tcc_FloatTensor>:$bias,
                       Tcc_FloatTensor:$saved_mean,
                       Tcc_FloatTensor:$saved_invstd, I64Attr:$ghost_batch,
                       DefaultValuedAttr<BoolAttr, "false">:$ghost_strided);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? `saved` $saved_mean `,` $saved_invstd
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_LayerNormOp : Tcc_Op<"layer_norm",
    [Pure, AttrSizedOperandSegments, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>,
     DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind", "getEpilogueResult", "getPrologueOperand"]>]> {
  let summary = "Layer normalisation over the trailing dims, as torch.nn.LayerNorm";
  let description = [{
    Normalises over the last `normalized_dims` dims of `input` with the biased
    variance; the optional `weight` and `bias` have the shape of those dims.
    `saved_mean` and `saved_invstd` (f32, shape of the leading dims) are kept
    for the backward op.

    Its kernel works a row at a time (one block per row on the cuda target)
    and takes elementwise neighbours on both sides (`FusionOpInterface`):
    it computes each element of `input` from the elementwise ops that
    produce it (a residual add, the widening of a 16-bit value) as it reads
    it, storing those of their values that others read, and hands each
    normalised element to the elementwise ops after it (a narrowing cast, an
    activation) before storing it: one `norm_epilogue` group (`tcc-fusion`).

    ```mlir
    %y, %mean, %invstd = tcc.layer_norm %x weight %g bias %b
        {eps = 1.0e-05 : f64, normalized_dims = 1 : i64}
        : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> (tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input,
                       Optional<Tcc_FloatTensor>:$weight,
                       Optional<Tcc_FloatTensor>:$bias,
                       I64Attr:$normalized_dims, F64Attr:$eps);
  let results = (outs Tcc_FloatTensor:$result, Tcc_FloatTensor:$saved_mean,
                      Tcc_FloatTensor:$saved_invstd);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Activations: unary, elementwise, result type == operand type
//===----------------------------------------------------------------------===//

class Tcc_ActivationOp<string mnemonic, string formula, list<Trait> traits = []>
    : Tcc_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType, Tcc_FollowsInputPrecision,
                                 InferTypeOpInterface, Tcc_FusionOpInterface, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Elementwise " # formula;
  let description = "Applies `" # formula # "` to every element; the result "
    # "has the operand's type.\n\n```mlir\n%y = tcc." # mnemonic
    # " %x : tensor<8x16xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$input);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tcc_ReluOp : Tcc_ActivationOp<"relu", "max(x, 0)",
    [DeclareOpInterfaceMethods<Tcc_MonotoneOpInterface, ["keepsMaxPoolTies"]>]>;

def Tcc_LeakyReluOp : Tcc_ActivationOp<"leaky_relu",
    "x if x >= 0 else negative_slope * x",
    [DeclareOpInterfaceMethods<Tcc_MonotoneOpInterface, ["isMonotoneNonDecreasing"]>]> {
  let arguments = (ins Tcc_FloatTensor:$input, F64Attr:$negative_slope);
  let hasVerifier = 1;
}

def Tcc_EluOp : Tcc_ActivationOp<"elu", "x if x > 0 else alpha * (exp(x) - 1)",
    [DeclareOpInterfaceMethods<Tcc_MonotoneOpInterface, ["isMonotoneNonDecreasing"]>]> {
  let arguments = (ins Tcc_FloatTensor:$input, F64Attr:$alpha);
  let hasVerifier = 1;
}

def Tcc_CeluOp : Tcc_ActivationOp<"celu",
    "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
    [Tcc_MonotoneOpInterface]> {
  let arguments = (ins Tcc_FloatTensor:$input, F64Attr:$alpha);
  let hasVerifier = 1;
}

def Tcc_GeluOp : Tcc_ActivationOp<"gelu",
    "x * Phi(x) (approximate = \"none\") or its tanh approximation (\"tanh\")"> {
  let arguments = (ins Tcc_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

def Tcc_SiluOp : Tcc_ActivationOp<"silu", "x * sigmoid(x)">;
def Tcc_SigmoidOp : Tcc_ActivationOp<"sigmoid", "1 / (1 + exp(-x))",
                                     [Tcc_MonotoneOpInterface]>;
def Tcc_TanhOp : Tcc_ActivationOp<"tanh", "tanh(x)", [Tcc_MonotoneOpInterface]>;

def Tcc_ScaleOp : Tcc_ActivationOp<"scale", "factor * x",
    [DeclareOpInterfaceMethods<Tcc_MonotoneOpInterface, ["isMonotoneNonDecreasing"]>]> {
  let arguments = (ins Tcc_FloatTensor:$input, F64Attr:$factor);
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Tcc_MaxPool2dOp : Tcc_Op<"max_pool2d", [Pure, Tcc_SixteenBitExact, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "2-D max pooling, as torch.nn.functional.max_pool2d";
  let description = [{
    Pools [N, C, H, W] over `kernel` windows moved by `stride`; padding counts
    as -inf and is at most half the kernel. Output size as PyTorch's floor
    mode: `(H + 2*pad - kH) / stride + 1`.

    ```mlir
    %y = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>,
                            stride = array<i64: 2, 2>}
         : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_AvgPool2dOp : Tcc_Op<"avg_pool2d", [Pure, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "2-D average pooling, as torch.nn.functional.avg_pool2d";
  let description = [{
    Like `max_pool2d`, averaging; padding counts as zeros, and the divisor
    includes padded positions when `count_include_pad` is true (PyTorch's
    default).

    ```mlir
    %y = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>,
                            padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
         : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       BoolAttr:$count_include_pad);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

class Tcc_GlobalPoolOp<string mnemonic, string reduction>
    : Tcc_Op<mnemonic, [Pure, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Global " # reduction # " pooling: [N, C, H, W] -> [N, C]";
  let description = "Takes the " # reduction # " over all spatial positions of "
    # "each channel. The result is flat ([N, C]), ready for `linear`.\n\n"
    # "```mlir\n%y = tcc." # mnemonic
    # " %x : (tensor<8x64x7x7xf32>) -> tensor<8x64xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$input);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_GlobalAvgPoolOp : Tcc_GlobalPoolOp<"global_avg_pool", "average">;
def Tcc_GlobalMaxPoolOp : Tcc_GlobalPoolOp<"global_max_pool", "maximum">;

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

class Tcc_BinaryOp<string mnemonic, string formula>
    : Tcc_Op<mnemonic, [Pure, Commutative, Elementwise, InferTypeOpAdaptor, Tcc_FusionOpInterface, Tcc_FollowsInputPrecision,
                        DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Elementwise " # formula # " of two tensors of one type";
  let description = "Both operands have the same shape and element type (no "
    # "broadcasting); so has the result.\n\n```mlir\n%z = tcc." # mnemonic
    # " %x, %y : tensor<8x16xf32>, tensor<8x16xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$lhs, Tcc_FloatTensor:$rhs);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Tcc_AddOp : Tcc_BinaryOp<"add", "sum x + y">;
def Tcc_MulOp : Tcc_BinaryOp<"mul", "product x * y">;

def Tcc_ChannelMulOp : Tcc_Op<"channel_mul", [Pure, InferTypeOpAdaptor, Tcc_FollowsInputPrecision,
                                              DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "A tensor times a per-(sample, channel) gate, broadcast over the rest";
  let description = [{
    `result[n, c, ...] = input[n, c, ...] * gate[n, c]` for an input of rank
    3 or more and a gate [N, C] of its element type: squeeze-and-excitation's
    channel gates (model.json's `mul` of a [N, C, H, W] tensor and a [N, C]
    one; PyTorch's `x * gate[:, :, None, None]`).

    ```mlir
    %y = tcc.channel_mul %x, %gate : (tensor<8x16x4x4xf32>, tensor<8x16xf32>) -> tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$gate);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $gate attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Tcc_ConcatOp : Tcc_Op<"concat", [Pure, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Concatenation along one axis, as torch.cat";
  let description = [{
    All inputs have the same rank and element type and agree on every dim
    but `axis`.

    ```mlir
    %y = tcc.concat %a, %b {axis = 1 : i64}
         : (tensor<8x16x4x4xf32>, tensor<8x8x4x4xf32>) -> tensor<8x24x4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Tcc_SliceOp : Tcc_Op<"slice", [Pure, Tcc_SixteenBitExact, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "A contiguous range along one axis, as x.narrow(axis, offset, size)";
  let description = [{
    Elements `offset` to `offset + size - 1` of `input` along `axis`: the
    model's `slice` (`x[:, a:b]`) and, followed by a reshape that drops the
    axis, its `select` (`x[:, i]`); also the adjoint of concat and of
    pad_channels. Its gradient is a `tcc.slice_backward`.

    ```mlir
    %b = tcc.slice %x {axis = 1 : i64, offset = 16 : i64, size = 8 : i64}
         : (tensor<8x24x4x4xf32>) -> tensor<8x8x4x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, I64Attr:$axis, I64Attr:$offset,
                       I64Attr:$size);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_ExpandOp : Tcc_Op<"expand", [Pure, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Repeat a dim of size 1 `size` times, as torch.Tensor.expand";
  let description = [{
    `input` has size 1 along `axis`; the result has `size` there, each copy
    the input. The model's `parameter` node expands its [1, ...] tensor over
    the batch (axis 0, as `cls.expand(N, -1, -1)`); the gradient of
    `tcc.reduce_sum` expands the incoming gradient back. Its gradient is a
    `tcc.reduce_sum` over `axis` and a reshape that restores the 1.

    ```mlir
    %y = tcc.expand %x {axis = 0 : i64, size = 8 : i64}
         : (tensor<1x1x16xf32>) -> tensor<8x1x16xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, I64Attr:$axis, I64Attr:$size);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_PadChannelsOp : Tcc_Op<"pad_channels", [Pure, Tcc_SixteenBitExact, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Zero channels appended along dim 1 up to `channels` (tcc-pad-channels)";
  let description = [{
    `input` [N, C, ...] followed by `channels - C` channels of zeros:
    [N, channels, ...]. Not a model op: tcc-pad-channels pads a 16-bit
    convolution's input and weight to 8 channels, where cuDNN's tensor-core
    engines need them (docs/passes.md). Its gradient is a `tcc.slice` of
    the first C channels.

    ```mlir
    %y = tcc.pad_channels %x {channels = 8 : i64}
         : (tensor<16x3x32x32xbf16>) -> tensor<16x8x32x32xbf16>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, I64Attr:$channels);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_FlattenOp : Tcc_Op<"flatten", [Pure, Tcc_SixteenBitExact, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "Flatten every dim after the batch: [N, ...] -> [N, prod(...)]";
  let description = [{
    As torch.flatten(x, 1). A view (ViewLikeOpInterface): the memory plan
    lets the result share its input's bytes.

    ```mlir
    %y = tcc.flatten %x : (tensor<8x16x2x2xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_ReshapeOp : Tcc_Op<"reshape", [Pure, Tcc_SixteenBitExact, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "Reinterpret the elements (row-major) with a new static shape";
  let description = [{
    `shape` is the whole result shape (batch included, no -1); it holds as
    many elements as the input. A view (ViewLikeOpInterface): the memory plan
    lets the result share its input's bytes.

    ```mlir
    %y = tcc.reshape %x {shape = array<i64: 8, 4, 16>}
         : (tensor<8x64xf32>) -> tensor<8x4x16xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_TransposeOp : Tcc_Op<"transpose", [Pure, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Permute dims, as torch.permute";
  let description = [{
    Result dim `i` is input dim `perm[i]`.

    ```mlir
    %y = tcc.transpose %x {perm = array<i64: 0, 2, 3, 1>}
         : (tensor<8x16x4x5xf32>) -> tensor<8x4x5x16xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_CastOp : Tcc_Op<"cast",
    [Pure, Elementwise, InferTypeOpAdaptor, Tcc_MonotoneOpInterface, Tcc_FusionOpInterface,
     DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Convert the element type, keeping the shape";
  let description = [{
    Rounds to nearest even between float types; float to integer truncates
    toward zero. Inserted by precision assignment (mixed precision).

    ```mlir
    %y = tcc.cast %x to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, TypeAttr:$element_type);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = [{
    $input `to` $element_type attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Regularisation and probabilities
//===----------------------------------------------------------------------===//

def Tcc_DropoutOp : Tcc_Op<"dropout", [Pure, Tcc_FollowsInputPrecision, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Inverted dropout with a counter-based random mask";
  let description = [{
    Zeroes each element with probability `p` and scales the others by
    1/(1-p), as torch.nn.functional.dropout in training. The mask is a pure
    function of (`seed`, `stream`, element index) — a counter-based generator —
    so the backward op recomputes it instead of storing it, and a step is
    reproducible from its seed. `stream` tells the dropouts of one step apart.

    ```mlir
    %y = tcc.dropout %x, %seed {p = 5.0e-01 : f64, stream = 0 : i64}
         : (tensor<8x16xf32>, tensor<i64>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_SeedTensor:$seed,
                       F64Attr:$p, I64Attr:$stream);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $seed attr-dict `:` functional-type(operands, results)";
}

class Tcc_SoftmaxLikeOp<string mnemonic, string formula>
    : Tcc_Op<mnemonic, [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = formula # " along one axis";
  let description = "Computes `" # formula # "` over `axis`, with the maximum "
    # "subtracted first for stability.\n\n```mlir\n%y = tcc." # mnemonic
    # " %x {axis = 1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tcc_SoftmaxOp : Tcc_SoftmaxLikeOp<"softmax", "exp(x) / sum(exp(x))">;
def Tcc_LogSoftmaxOp : Tcc_SoftmaxLikeOp<"log_softmax", "x - log(sum(exp(x)))">;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Tcc_CrossEntropyOp : Tcc_Op<"cross_entropy", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Softmax cross-entropy with label smoothing, as torch.nn.CrossEntropyLoss";
  let description = [{
    `logits` [N, K] and class indices `labels` [N] in [0, K). With smoothing
    `s` the target distribution is (1 - s) * one_hot + s / K. `reduction` is
    "mean" (over N) or "sum". The loss is an f32 scalar whatever the logits'
    type.

    With `valid` (an i64 scalar read when the step runs), only the first
    `valid` rows count, and "mean" averages over them: the evaluation step
    measures the test loss this way, leaving out the padding of a last
    partial batch. That form has no gradient.

    ```mlir
    %l = tcc.cross_entropy %logits, %labels {label_smoothing = 2.0e-01 : f64, reduction = "mean"}
         : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    %t = tcc.cross_entropy %logits, %labels, %valid {label_smoothing = 0.0 : f64, reduction = "sum"}
         : (tensor<8x10xf32>, tensor<8xi64>, tensor<i64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$logits, Tcc_IndexTensor:$labels,
                       Optional<0DTensorOf<[I64]>>:$valid,
                       F64Attr:$label_smoothing, StrAttr:$reduction);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$logits `,` $labels (`,` $valid^)? attr-dict `:` functional-type(operands, results)";
}

def Tcc_MseLossOp : Tcc_Op<"mse_loss", [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Mean squared error, as torch.nn.MSELoss";
  let description = [{
    Squared difference of two tensors of one shape, averaged over all
    elements ("mean") or summed ("sum"); an f32 scalar.

    With `valid` (an i64 scalar read when the step runs), only the first
    `valid` rows (indices of dim 0) count, and "mean" averages over their
    elements: the evaluation step's test loss. That form has no gradient.

    ```mlir
    %l = tcc.mse_loss %pred, %target {reduction = "mean"}
         : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$target,
                       Optional<0DTensorOf<[I64]>>:$valid,
                       StrAttr:$reduction);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$input `,` $target (`,` $valid^)? attr-dict `:` functional-type(operands, results)";
}

def Tcc_OneHotOp : Tcc_Op<"one_hot", [Pure, InferTypeOpAdaptor]> {
  let summary = "Class indices [N] to one-hot f32 rows [N, classes]";
  let description = [{
    The regression target of `mse_loss` on a classification dataset.

    ```mlir
    %t = tcc.one_hot %labels {classes = 10 : i64} : (tensor<8xi64>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Tcc_IndexTensor:$labels, I64Attr:$classes);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` functional-type(operands, results)";
}

// The backward ops share the op list (and generated files) of the forward ops.
include "ir/TccGradOps.td"
include "ir/TccAttentionOps.td"
include "ir/TccEmbeddingOps.td"
include "ir/TccTokenLossOps.td"
include "ir/TccTrainOps.td"
include "ir/TccFusionOps.td"
include "ir/TccCollectiveOps.td"

#endif // TCC_OPS_TD
