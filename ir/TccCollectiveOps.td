//===- TccCollectiveOps.td - Communication between ranks -*- tablegen -*-===//
//
// The collectives of a distributed step (train.distributed,
// docs/distributed.md): every rank runs the same step on its slice of the
// global batch, and these ops combine what the ranks computed. They are ops
// of the step, not calls of the trainer, so that the passes see them: on
// the cpu target they call MPI, on the cuda target NCCL (on the step's
// stream, inside its CUDA graph). Every rank runs the same program, so
// every rank reaches the collectives in the same order.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COLLECTIVE_OPS_TD
#define TCC_COLLECTIVE_OPS_TD

include "ir/TccDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Tcc_AllReduceOp : Tcc_Op<"all_reduce", [InferTypeOpAdaptor]> {
  let summary = "Each operand summed (or averaged) over the ranks";
  let description = [{
    Result `i` is operand `i` added up elementwise over every rank of the
    job (`sum`), or that sum divided by the number of ranks (`mean`), in the
    operand's element type; every rank receives the same values. One op
    reduces all its operands together (one message, a bucket): the
    gradients after the backward, with the loss pre-scaled by 1 / ranks so
    the sum is the global batch's mean gradient; the batch norms' running
    statistics after the step, averaged, so every rank keeps the same ones;
    a synchronised batch norm's f64 per-channel sums, forward and backward.

    No `Pure`: a collective has an effect on the other ranks, so it is
    neither removed nor merged with another, and it keeps its order
    relative to the other collectives.

    ```mlir
    %gw, %gb = tcc.all_reduce "sum" %dw, %db : tensor<10x784xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_ReducibleTensor>:$inputs, StrAttr:$reduction);
  let results = (outs Variadic<Tcc_ReducibleTensor>:$results);
  let assemblyFormat = "$reduction $inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

#endif // TCC_COLLECTIVE_OPS_TD
