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

def Tcc_AllReduceOp : Tcc_Op<"all_reduce", [InferTypeOpAdaptor, Tcc_SixteenBitLibrary]> {
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
    relative to the other collectives. A 16-bit operand is reduced in 16
    bits where the target's library does it with f32 arithmetic (NCCL on
    the cuda target, as DistributedDataParallel sends fp16 gradients): half
    the bytes of widening it; the cpu target widens it (tcc-widen-16bit).

    ```mlir
    %gw, %gb = tcc.all_reduce "sum" %dw, %db : tensor<10x784xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_ReducibleTensor>:$inputs, StrAttr:$reduction);
  let results = (outs Variadic<Tcc_ReducibleTensor>:$results);
  let assemblyFormat = "$reduction $inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

// Sharded state (train.distributed.shard, ZeRO): a tensor of n elements is
// split into `ranks` chunks of c = ceil(n / ranks) elements, chunk r (zero
// past the end of the tensor) kept by rank r.

def Tcc_ShardOp : Tcc_Op<"shard", [Pure, Tcc_SixteenBitMove]> {
  let summary = "This rank's chunk of a tensor";
  let description = [{
    Elements `[rank * c, rank * c + c)` of `input` flattened, with c =
    ceil(n / `ranks`) and zeros past its n elements: the chunk of the
    optimizer's update this rank computes. `rank` is the process's, read
    when the step runs (every rank runs the same program). Not a collective.

    ```mlir
    %s = tcc.shard %w {ranks = 4 : i64} : tensor<10x3xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Tcc_ReducibleTensor:$input, I64Attr:$ranks);
  let results = (outs Tcc_ReducibleTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tcc_AllGatherOp : Tcc_Op<"all_gather", [Tcc_SixteenBitMove]> {
  let summary = "The ranks' chunks, put together into whole tensors";
  let description = [{
    Result `i` is the chunks operand `i` holds on ranks 0, 1, ..., `ranks`
    - 1, one after the other, cut to the result's elements and shaped as
    it: the inverse of `tcc.shard`. After a sharded update every rank
    gathers the new parameters; with sharded parameters (FSDP) a step
    gathers each node's parameter chunks before the forward and the
    backward read them (`tcc.gather_for = "forward"` or `"backward"`,
    placed by tcc-gather-parameters). One op gathers all its operands
    together (one message). No `Pure`: a collective (as `tcc.all_reduce`).

    ```mlir
    %w, %b = tcc.all_gather %ws, %bs {ranks = 4 : i64}
        : tensor<8xf32>, tensor<1xf32> -> tensor<10x3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_ReducibleTensor>:$inputs, I64Attr:$ranks);
  let results = (outs Variadic<Tcc_ReducibleTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($results)";
  let hasVerifier = 1;
}

def Tcc_ReduceScatterOp : Tcc_Op<"reduce_scatter", [Tcc_SixteenBitLibrary]> {
  let summary = "Each tensor summed over the ranks; each rank keeps its chunk";
  let description = [{
    Result `i` is `tcc.shard` of operand `i` summed over the ranks: each
    rank receives only the chunk of the sum it updates (ZeRO-2's and
    FSDP's reduced gradients; FSDP's, marked `tcc.gradients`, are split per
    node by tcc-gather-parameters), half the traffic of an all-reduce. One
    op reduces all its operands together. No `Pure`: a collective.

    ```mlir
    %gs, %bs = tcc.reduce_scatter %gw, %gb {ranks = 4 : i64}
        : tensor<10x3xf32>, tensor<3xf32> -> tensor<8xf32>, tensor<1xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_ReducibleTensor>:$inputs, I64Attr:$ranks);
  let results = (outs Variadic<Tcc_ReducibleTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($results)";
  let hasVerifier = 1;
}

#endif // TCC_COLLECTIVE_OPS_TD
