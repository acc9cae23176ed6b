//===- TccAttentionOps.td - Scaled dot-product attention ---*- tablegen -*-===//
//
// The attention unit of a transformer and its backward op. Shapes, checks
// and the gradient rule are in TccAttention.cpp; the cpu kernels in
// runtime/kernels/Attention.h.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_ATTENTION_OPS_TD
#define TCC_ATTENTION_OPS_TD

include "ir/TccDialect.td"
include "ir/TccInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tcc_ScaledDotProductAttentionOp : Tcc_Op<"scaled_dot_product_attention",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Multi-head scaled dot-product attention, as F.scaled_dot_product_attention";
  let description = [{
    `query` is [N, Tq, H*d], `key` [N, Tk, H*d] and `value` [N, Tk, H*dv]
    with H = `heads`; head h is columns h*d .. h*d+d-1 (h*dv .. for
    `value`), as torch.nn.MultiheadAttention's `view(N, T, H, d)`. Per batch
    element and head:

        P = softmax(scale * Q K^T + mask)     (rows over the Tk keys)
        result = dropout(P) V                  ([N, Tq, H*dv], heads side by side)

    With `causal`, query i attends to keys 0..i only (PyTorch's `is_causal`:
    `tril(ones(Tq, Tk))`, aligned top-left when Tq != Tk). `scale` is
    usually 1/sqrt(d). With `dropout` p > 0 (and then a `seed`), element
    (n, h, i, j) of P is kept as `tcc.dropout` keeps element
    ((n*H + h)*Tq + i)*Tk + j of stream `stream` (runtime/common/DropoutMask.h)
    and scaled by 1/(1-p); the backward op draws the same mask.

    `logsumexp` ([N, H, Tq], f32) is log(sum_j exp(scale * q_i . k_j)) of
    each row: the backward op recomputes P from it, as FlashAttention and
    cuDNN's fused attention do, instead of storing the [N, H, Tq, Tk]
    probabilities (docs/ir.md#attention).

    ```mlir
    %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v
        {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64}
        : (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>)
        -> (tensor<8x5x8xf32>, tensor<8x2x5xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$query, Tcc_FloatTensor:$key,
                       Tcc_FloatTensor:$value, Optional<Tcc_SeedTensor>:$seed,
                       I64Attr:$heads, BoolAttr:$causal, F64Attr:$scale,
                       F64Attr:$dropout, I64Attr:$stream);
  let results = (outs Tcc_FloatTensor:$result, Tcc_FloatTensor:$logsumexp);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`seed` $seed^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_ScaledDotProductAttentionBackwardOp
    : Tcc_Op<"scaled_dot_product_attention_backward", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradients of scaled_dot_product_attention";
  let description = [{
    From `grad` (of the forward's result), the forward's operands, its
    result `result_value` and its `logsumexp`, and the forward's attributes
    (and seed): the gradients of query, key and value. P is recomputed as
    exp(scale * Q K^T - logsumexp) and the row term D_i = sum_j dP_ij P_ij
    as dO_i . O_i (FlashAttention-2's backward, which cuDNN's takes too):

        dV = dropout(P)^T dO      dP = dropout'(dO V^T)
        dS = P * (dP - D)         dQ = scale dS K      dK = scale dS^T Q

    ```mlir
    %dq, %dk, %dv = tcc.scaled_dot_product_attention_backward %do, %q, %k, %v saved %o, %lse
        {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64}
        : (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>,
           tensor<8x5x8xf32>, tensor<8x2x5xf32>)
        -> (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, Tcc_FloatTensor:$query,
                       Tcc_FloatTensor:$key, Tcc_FloatTensor:$value,
                       Tcc_FloatTensor:$result_value, Tcc_FloatTensor:$logsumexp,
                       Optional<Tcc_SeedTensor>:$seed,
                       I64Attr:$heads, BoolAttr:$causal, F64Attr:$scale,
                       F64Attr:$dropout, I64Attr:$stream);
  let results = (outs Tcc_FloatTensor:$grad_query, Tcc_FloatTensor:$grad_key,
                      Tcc_FloatTensor:$grad_value);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value `saved` $result_value `,` $logsumexp
    (`seed` $seed^)? attr-dict `:` functional-type(operands, results)
  }];
}

#endif // TCC_ATTENTION_OPS_TD
