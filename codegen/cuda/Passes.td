//===- Passes.td - The cuda target's passes ----------------*- tablegen -*-===//
//
// A target's passes live with the target (codegen/cuda); CudaBackend adds
// them to the compile pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CUDA_PASSES
#define TCC_CODEGEN_CUDA_PASSES

include "mlir/Pass/PassBase.td"

def CudaSelectAlgorithms : Pass<"tcc-cuda-select-algorithms", "::mlir::ModuleOp"> {
  let summary = "Fix each convolution's cuDNN engine and each matmul's tuned cuBLASLt algorithm";
  let description = [{
    The cuda target's algorithm selection, the last pass of its step
    pipeline (after tcc-fusion, which decides the convolution and matmul
    epilogues; before tcc-recompute and tcc-plan-memory, which count the
    workspaces it sets). For every distinct convolution problem of
    @train_step and @eval_step it keeps the engine a `tcc tune` file
    (`tuning-db`) measured for `gpu`, or else cuDNN's heuristic choice for
    the described GPU (cuDNN >= 9.8 builds plans without one); for every
    matmul problem, the file's cuBLASLt algorithm where it has one (cuBLASLt
    describes no absent GPU: the others are chosen at the trainer's first
    step). The choices go on the module as `tcc.cuda_target` (the rows of
    `tcc compile --emit=conv-plans`, docs/cuda.md), which the cuda code
    generator bakes into the trainer; the workspace each op needs goes on
    it as `tcc.workspace` (`#tcc.workspace<bytes = N>`, which
    tcc-plan-memory gives an offset).

    A tuning file of another GPU or cuDNN is an error, or with
    `ignore-tuning-mismatch` a warning and the heuristics' choice; problems
    the file lacks are chosen by the heuristics with a warning. A
    convolution no engine runs is an error naming its model nodes.
  }];
  let options = [
    Option<"gpu", "gpu", "std::string", /*default=*/"\"h100\"",
           "the GPU the step is planned for: h100, h200, a100, sm_80, sm_90, sm_90a">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"\"\"",
           "a tuning file written by tcc tune on that GPU (docs/tuning.md)">,
    Option<"ignoreTuningMismatch", "ignore-tuning-mismatch", "bool", /*default=*/"false",
           "a tuning file of another GPU or cuDNN is ignored with a warning">,
    Option<"allowFallback", "allow-fallback", "bool", /*default=*/"false",
           "the trainer may use cuDNN's heuristic choice, with a warning, for a "
           "baked engine that cannot run on its GPU">,
  ];
}

def CudaOverlapBuckets : Pass<"tcc-cuda-overlap-buckets", "::mlir::ModuleOp"> {
  let summary = "Run the gradient buckets on a second stream of the step's CUDA graph";
  let description = [{
    Marks each bucket of tcc-bucket-collectives (a `tcc.all_reduce`, or
    ZeRO-2's `tcc.reduce_scatter`, with `tcc.bucket`, in a step function's
    body) `tcc.side_stream`: the cuda
    code generator issues its NCCL call on a side stream, forked from the
    step's stream by an event right where the bucket is (after its last
    gradient) and joined by an event before the first op that reads one of
    its results (`sideStreamJoin`, ir/TccPlan.h), so the collective overlaps
    the rest of the backward and the step stays one graph; the buckets use
    a communicator of their own. tcc-plan-memory keeps the bucket's inputs
    (and a reduce-scatter's workspace, its padded message) live until the
    join. It runs before tcc-plan-memory.

    It does not mark a synchronised batch norm's all-reduces (the next op
    reads them), the running statistics' mean, a micro-batch loop's
    collectives, the one all-reduce (or reduce-scatter) of a step compiled
    without bucket-collectives, FSDP's per-node reduce-scatters, or a
    bucket nothing reads. One rank has none.

    Example (a bucket and its reader):

        %g = tcc.all_reduce "sum" %dw {tcc.bucket = 0 : i64, tcc.gradients,
                                        tcc.side_stream} : tensor<4x3xf32>
        ...                       // the rest of the backward, beside it
        %w1 = tcc.sgd_update %w, %g, ...   // joins the side stream first
  }];
}

def CudaConvStatistics : Pass<"tcc-cuda-conv-statistics", "::mlir::ModuleOp"> {
  let summary = "Take whole-batch norms' statistics where their fp16 convolution stores its output";
  let description = [{
    A `tcc.batch_norm` over the whole batch (no ghost batches, not yet
    synchronised) whose input is the result of a `tcc.conv2d` without a
    bias, stored fp16 and NHWC (tcc-channels-last), possibly through the
    cast that widens it to f32, gets its statistics from that result
    instead of its own two passes over it: `tcc.batch_norm_sums` of the
    conv's result and the centered sums around it, right after the conv,
    become the norm's `statistics` (one rank). tcc-fusion's
    `cudnn-conv-genstats` pattern then puts the conv and the two sums in a
    `conv_statistics` group, which cuDNN runs as one graph
    (`conv_fprop` and `genstats`, one pass of f32 sums as the convolution
    stores y; docs/cuda.md "Batch norm statistics from the convolution").

    Only where cuDNN builds that graph for the described `gpu` (asked here,
    as tcc-cuda-select-algorithms will): elsewhere the norm keeps its own
    statistics and the report counts the convolution under `no_engine`.
    bf16 (cuDNN has no engine), f32, ghost batch norms (genstats gives
    whole-batch sums only), a conv with a bias, a norm whose input is not
    the conv's result, and the evaluation step (its norms take running
    statistics) are left as they are.
  }];
  let options = [
    Option<"gpu", "gpu", "std::string", /*default=*/"\"h100\"",
           "the GPU whose cuDNN engines decide: h100, h200, a100, sm_80, sm_90, sm_90a">,
  ];
}

def CudaDgradStatistics : Pass<"tcc-cuda-dgrad-statistics", "::mlir::ModuleOp"> {
  let summary = "Take whole-batch norms' backward sums where the next convolution's backward-data writes their gradient";
  let description = [{
    The backward half of tcc-cuda-conv-statistics. In conv -> batch norm ->
    ReLU -> conv (airbench94's and ResNet-9's block), the norm's
    `tcc.batch_norm_backward` needs per channel sum(dy) and
    sum(dy * (x - mean)), where dy is `tcc.relu_backward` of the next
    convolution's `tcc.conv2d_backward_data`. Where that dgrad is fp16 and
    NHWC, the ReLU's saved result and the norm's input are fp16 NHWC
    tensors (widened to f32 by casts that keep the layout), and the norm is
    over the whole batch, the pass splits the backward into
    `tcc.batch_norm_backward_sums` (the two sums, the scale and shift
    gradients) and `tcc.batch_norm_backward_input` (dx from the sums, one
    rank): the synchronised norm's form, the sums ready to be taken where
    dy is written (cuDNN's dgrad + drelu + dbn_weight graph;
    docs/cuda.md "Batch norm backward sums from the backward-data
    convolution").

    Left as they are: bf16 and f32 steps, ghost batch norms, an activation
    other than ReLU (or none) between the norm and the convolution, NCHW
    tensors, a dgrad result or ReLU gradient that something else also
    reads, a dy that is not the fp16 one's exact f32 copy, and norms
    already synchronised over ranks.

    It asks cuDNN whether the graph has an engine for each dgrad on the
    described `gpu` and counts those without one under `no_engine` (every
    one with cuDNN 9.19, whose engines for it are compiled at run time):
    their sums run as the synchronised norm's kernels.
  }];
  let options = [
    Option<"gpu", "gpu", "std::string", /*default=*/"\"h100\"",
           "the GPU whose cuDNN engines are asked: h100, h200, a100, sm_80, sm_90, sm_90a">,
  ];
}

#endif // TCC_CODEGEN_CUDA_PASSES
