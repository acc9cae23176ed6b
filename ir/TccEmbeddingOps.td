//===- TccEmbeddingOps.td - Token embedding ---------------*- tablegen -*-===//
//
// The lookup table of a token model (torch.nn.Embedding) and its backward
// op. Shapes and the gradient rule are in TccEmbedding.cpp; the cpu kernels
// in runtime/kernels/Embedding.h.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_EMBEDDING_OPS_TD
#define TCC_EMBEDDING_OPS_TD

include "ir/TccDialect.td"
include "ir/TccInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tcc_EmbeddingOp : Tcc_Op<"embedding",
    [Pure, InferTypeOpAdaptor, DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "Rows of a table picked by token ids, as torch.nn.functional.embedding";
  let description = [{
    `ids` [N, ...] holds token ids as the batch holds them: integers stored
    in f32 (exact below 2^24, which bounds the table). `weight` is
    [num_embeddings, embedding_dim] (PyTorch's layout); the result is
    [N, ..., embedding_dim] with `result[i, :] = weight[ids[i], :]`. An id
    outside [0, num_embeddings) is a data error the trainer reports before
    the first step; the kernel reads row 0 for it rather than out of bounds.

    `padding_idx` (-1: none) is torch.nn.Embedding's: that row gets no
    gradient. The ids get none either.

    ```mlir
    %e = tcc.embedding %ids, %w {padding_idx = 0 : i64}
         : (tensor<8x16xf32>, tensor<100x32xf32>) -> tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$ids, Tcc_FloatTensor:$weight, I64Attr:$padding_idx);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$ids `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Tcc_EmbeddingBackwardOp : Tcc_Op<"embedding_backward", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of embedding with respect to its table: a scatter-add by id";
  let description = [{
    `grad` [N, ..., D] is the gradient of `tcc.embedding %ids, %w`; the
    result [num_embeddings, D] holds at row v the sum of the rows of `grad`
    whose id is v, added in the order of the ids (the same bits on any
    thread count), and zeros at row `padding_idx` (-1: none) and at rows no
    id picks.

    ```mlir
    %dw = tcc.embedding_backward %dy, %ids {num_embeddings = 100 : i64, padding_idx = -1 : i64}
          : (tensor<8x16x32xf32>, tensor<8x16xf32>) -> tensor<100x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$grad, TensorOf<[F32]>:$ids, I64Attr:$num_embeddings,
                       I64Attr:$padding_idx);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $ids attr-dict `:` functional-type(operands, results)";
}

#endif // TCC_EMBEDDING_OPS_TD
