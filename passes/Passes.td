//===- Passes.td - tcc passes ------------------------------*- tablegen -*-===//

#ifndef TCC_PASSES_TD
#define TCC_PASSES_TD

include "mlir/Pass/PassBase.td"

def BnBiasElimination : Pass<"tcc-bn-bias-elimination", "::mlir::ModuleOp"> {
  let summary = "Remove conv/linear biases that a batch norm's batch statistics cancel";
  let description = [{
    Runs on `@forward`. Where a `tcc.conv2d`, or a `tcc.linear` with a
    [N, F] result, has a bias and its only user is a `tcc.batch_norm`
    (which normalises with the batch's statistics in training), the bias
    cancels in the mean subtraction: the op loses its bias operand, and the
    bias parameter becomes a frozen zero (no gradient, no optimizer state,
    not counted as trainable) that stays in the state so checkpoints keep
    PyTorch's names. The batch norm's running mean then tracks the
    bias-free values, so a checkpoint (zero bias, that running mean)
    evaluates the same in PyTorch. `tcc.folded_into` on the bias names the
    running mean: the trainer folds a nonzero bias loaded by `--init` or
    `--resume` into it (running_mean -= bias) with a note.

    Does not fire when the pre-norm value has another user, when the norm
    uses running statistics (`tcc.batch_norm_inference`), through any op in
    between (an activation is not affine), or on a linear with more than
    two dims (the norm's channels would not be the features).

    Report (`tcc.pass_report`): `removed`, the biases' names.
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def PoolActivationReorder : Pass<"tcc-pool-activation-reorder", "::mlir::ModuleOp"> {
  let summary = "Max-pool before the activation: max_pool(f(x)) -> f(max_pool(x))";
  let description = [{
    Runs on `@forward`, before the training step is built, so the backward
    is derived from the reordered forward. Where a `tcc.max_pool2d` or
    `tcc.global_max_pool` is the only user of an activation `f` whose
    MonotoneOpInterface says it keeps max-pool ties
    (`keepsMaxPoolTies()`), the pool moves in front of `f`: `f` then runs
    on the pooled tensor, 4x smaller behind a 2x2 pool, forward and
    backward.

    The rewrite is exact, ties and gradients included (docs/passes.md):
    `f` is monotone non-decreasing, so the pooled maximum is the same value;
    and `f` maps two inputs to one output only where its gradient is zero,
    so a tie that `f` creates cannot route a non-zero gradient to another
    element of the window. ReLU qualifies. Monotone activations that round
    neighbouring inputs to one output where their slope is not zero (a
    leaky ReLU's negative side, ELU, CELU, sigmoid, tanh) do not, and GELU,
    SiLU (not monotone) and average pooling never do. Nor does it fire when
    the activation has another user (it would run twice).

    Report (`tcc.pass_report`): `moved`, the number of pools moved.
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def Precision : Pass<"tcc-precision", "::mlir::ModuleOp"> {
  let summary = "Mixed and pure 16-bit precision: which ops of the forward compute in 16 bits, which parameters are stored in 16 bits";
  let description = [{
    Reads `train.precision` from the module's `tcc.train`. Under
    `bf16-mixed` (and `fp16-mixed`, with f16 wherever bf16 is written
    below) it rewrites `@forward` op by op, from the policy each op
    declares in ODS (`ir/TccDialect.td`):

    - `Tcc_LowPrecisionCompute` (conv2d, linear): float operands cast to
      bf16, result bf16, f32 accumulation in the kernel;
    - `Tcc_FollowsInputPrecision` (activations, add, mul, scale, pools,
      flatten, reshape, transpose, concat, dropout, batch_norm's normalised
      tensor): the result has the precision of the data operands (operand
      0 and the float operands of its rank): bf16 if all are, else f32 with
      the bf16 ones cast up;
    - every other op (batch statistics, layer norm, softmax, losses,
      reductions) computes in f32: bf16 operands are cast up.

    Each value is cast at most once per type, right after its definition
    (parameters where the forward starts): the parameters stay f32 in the
    state (master weights) and their gradients come back f32 through the
    casts' gradients, which autodiff derives. The forward's results are
    cast back to f32, so the loss is f32. `fp32` leaves the forward
    unchanged. fp16-mixed's dynamic loss scaling is built by
    `tcc-build-train-step` from `train.loss_scale`.

    Under the pure modes `bf16` and `fp16` (`model.half()` with the batch
    norms in f32) the same policy runs, then every parameter (an argument
    with `tcc.param`) that the forward reads only through its cast to 16
    bits is stored in 16 bits itself: the cast is removed and the argument
    becomes 16-bit, so its gradient, optimizer state, Lookahead and EMA
    copies and checkpoint tensor are 16-bit too.

    Report (`tcc.pass_report`): `precision` (what the step runs: fp32,
    bf16-mixed, fp16-mixed, bf16 or fp16), `casts` (inserted), `ops_by_dtype` (the forward's ops by
    the element type they produce), `sixteen_bit_params` (the pure modes:
    the parameters stored in 16 bits).
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def PadChannels : Pass<"tcc-pad-channels", "::mlir::ModuleOp"> {
  let summary = "Pad a 16-bit convolution's few input channels with zeros (to 8)";
  let description = [{
    cuDNN's tensor-core engines for 16-bit NHWC convolutions read 8 channels
    of a pixel at once; for a convolution of an RGB image (3 channels) its
    heuristics and `tcc tune` found only engines without tensor cores (the
    whitening convolutions of airbench94 and ResNet-9 ran at about 5
    TFLOP/s on an H200). On `@forward`, after tcc-precision (the compile
    pipeline runs it for the cuda target only), each 16-bit `tcc.conv2d`
    with fewer input channels than `channels` and one group reads its input
    and weight through `tcc.pad_channels`, which appends zero channels: the
    same sums plus exact zero products, so the same values. The backward,
    built afterwards, slices the first channels of the padded gradients.
    Convolutions with at least `channels` input channels (27, say) are left
    alone: cuDNN ran tensor-core engines for them.

    Report (`tcc.pass_report`, `pad-channels`): `padded`, the convolutions
    whose input and weight it padded.
  }];
  let options = [
    Option<"channels", "channels", "int64_t", "8",
           "the input channels a 16-bit convolution with fewer is padded to">,
  ];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def FrozenStep : Pass<"tcc-frozen-step", "::mlir::ModuleOp"> {
  let summary = "Build @train_step_frozen, the step after the train_epochs of its parameters";
  let description = [{
    A parameter with `train_epochs` (`tcc.train_epochs` on its `@forward`
    argument; airbench94's whitening bias) trains for its first epochs only.
    `@train_step` skips its update afterwards (`tcc.frozen_after`) but still
    computes its gradient. Run on `@forward` and `@loss` before
    tcc-build-train-step, this pass builds a second training step,
    `@train_step_frozen`, as tcc-build-train-step builds `@train_step` but
    with every parameter that has `train_epochs` a constant of the backward:
    no gradient (nor the backward work only it needed, which AD never
    builds), no optimizer update (the parameter and its optimizer state are
    returned unchanged), no place in the fp16 overflow check. Its state
    arguments and results are `@train_step`'s, so both share the state
    arena and the one scratch arena; the trainer runs it from epoch
    `tcc.frozen_from_epoch`, the largest `train_epochs`, on. Parameters
    whose `train_epochs` are smaller stop earlier in `@train_step` through
    `tcc.frozen_after`, as without this pass: one second step, not one per
    distinct `train_epochs`.

    ```mlir
    func.func @train_step_frozen(...) attributes {
        tcc.frozen_from_epoch = 3 : i64, tcc.frozen_params = ["whiten.bias"]}
    ```

    Does not fire without a trainable parameter with `train_epochs`, nor
    when every trainable parameter has one (the step after them would train
    nothing).
    Disabled (`--disable-pass=frozen-step`), the trainer runs `@train_step`
    throughout, with the same results, fp16 loss scaling aside: after the
    switch the frozen gradient no longer counts in its overflow check, as in
    PyTorch (docs/training.md).

    Report (`tcc.pass_report`): `frozen` (the parameters' names) and
    `from_epoch`.
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect", "::mlir::arith::ArithDialect"];
}

def BuildTrainStep : Pass<"tcc-build-train-step", "::mlir::ModuleOp"> {
  let summary = "Build @train_step and @eval_step from @forward, @loss and the recipe";
  let description = [{
    Replaces the frontend's `@forward` and `@loss` with the two functions a
    trainer runs (docs/training.md, "The training step"):

    - `@train_step`: for each of the `train.accumulate` micro-batches the
      forward pass and the loss, then reverse-mode AD (each op's
      DifferentiableOpInterface rule, walked in reverse), gradient clipping
      by global norm, the learning-rate schedule, one optimizer update per
      trainable parameter (SGD, AdamW or LAMB with the parameter's group
      scales), Lookahead, EMA of the weights, the step counter, and the
      step's loss sum and correct count. Under `train.loss_scale`
      (fp16-mixed) as `torch.amp.GradScaler` does it: the loss times the
      scale before AD, the gradients times its reciprocal after, a step
      with an inf or nan gradient skipped by the updates (their `skip`
      operand), the scale updated (`tcc.update_loss_scale`), and the
      optimizer's own count of applied steps (`amp.optimizer_steps`) for
      SGD's first step and Adam's bias correction.
    - `@eval_step`: the forward pass with running BN statistics, no dropout,
      the EMA weights when the recipe has EMA, averaged over the TTA views
      of `eval.tta`; returns the number of correct predictions.
    - `@predict_step` (a token model only): `@eval_step`'s forward without
      TTA on one sample (`[1, T]` token ids), returning its logits (result
      role `logits`): the entry `tcc sample` runs (docs/step-contract.md).

    Both take the whole state (parameters, buffers, optimizer state, EMA
    weights, step counter) as arguments tagged `tcc.state`, and
    `@train_step` returns each state tensor's new value tagged the same way,
    so that code generators can update the state in place. Frozen
    parameters get no gradient and no update.
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect", "::mlir::arith::ArithDialect"];
}

def Fusion : Pass<"tcc-fusion", "::mlir::ModuleOp"> {
  let summary = "Group ops that run as one kernel into tcc.fusion_group";
  let description = [{
    Runs on the step functions (and micro-batch loop bodies) after
    `tcc-build-train-step`, so forward, backward and update ops alike can
    join a group. Groups are formed from what each op declares in its
    FusionOpInterface (its fusion kind, and whether its kernel takes its
    elementwise neighbours in), never from op names, greedily, in this
    order:

    1. The target's library epilogues, with `epilogue-patterns`: each
       pattern of the target's table (target/FusionPattern.h) names a group
       kind, the fusion kind of its anchor and a matcher for the ops after
       the anchor, which the library call applies. The cuda target
       declares `cublaslt-linear-activation` (`matmul_epilogue`: an f32
       `tcc.linear` and the `tcc.relu` that alone reads its result, or the
       tanh-approximated `tcc.gelu` of it, which cuBLASLt applies in the
       matmul's epilogue; where the backward reads the linear's result too,
       the group yields it, stored by the GELU_AUX epilogue, which needs
       rows of a multiple of 8 elements; an exact GELU stays an elementwise
       op) and `cudnn-conv-bias-relu` (`conv_epilogue`: a `tcc.conv2d`
       with a bias and the `tcc.relu` that alone reads its result, under
       16-bit storage the cast that alone widens it, the ReLU of that and
       the cast that alone narrows it back, which cuDNN's fused engines
       apply to the f32 sums; GELU and SiLU epilogues are not formed:
       cuDNN builds them only by compiling a kernel on a GPU, so their
       engine could not be fixed at compile time). The patterns run one
       after another, each over the whole block, in the option's order.
    2. `norm_epilogue`: an op that declares the result whose elementwise
       consumers its kernel applies before storing it
       (`getEpilogueResult`: `tcc.batch_norm`, `tcc.batch_norm_inference`),
       with those consumers (an activation, a residual add).
    3. `norm_backward_prologue`: an op that declares the operand its
       kernel computes as it reads it (`getPrologueOperand`:
       `tcc.batch_norm_backward`'s upstream gradient), with the
       elementwise ops whose result only it reads (the activation's
       backward, the residual gradient's add).

    Under 16-bit storage both also take the `tcc.cast` that widens the
    operand the op declares it loads from 16 bits (`getWideningLoadOperand`:
    the norm's input) from bf16/fp16 to f32: the kernel loads the 16-bit
    tensor and widens each element as it loads it (exact, as the cast), so
    the f32 copy is neither written nor read. A cast that other ops read
    too stays for them, and the group gets its own. The backward group
    also takes the `tcc.cast` that alone reads the result the op declares
    it may store narrowed (`getNarrowingStoreResult`: dx) and narrows it to
    16 bits (for the convolution's backward): the kernel stores dx
    narrowed, with the cast's rounding.
    4. `multi_tensor_update`: the step's Broadcast ops that update state in
       place (the `InPlaceStateUpdate` trait: `sgd_update`, `adamw_update`,
       `ema_update`, `lookahead_update`; LAMB's update is a Reduction),
       less any whose result is read before the last of them: one
       multi-tensor kernel per run of at most 64 updates (a kernel's
       arguments are bounded).
    5. `elementwise`: chains of two or more Elementwise ops over tensors of
       one size: one loop.

    With `multi-tensor-casts` (the cuda target), last: `multi_tensor_cast`,
    a run of consecutive `tcc.cast` ops between f32 and a 16-bit type that
    no group took, none reading another's and none changing its layout (at
    most 64 per group): one launch converts them all. A bf16-mixed step's
    parameter copies at its start and its gradients widened for the update
    at its end are such runs.

    A chain and a `norm_epilogue` also take in the elementwise ops that
    compute what their ops read where only the group reads it (a widening
    cast of a 16-bit residual, say), but not the norm's own input.

    An op joins only when every tensor it reads and writes has the group's
    number of elements and is f32 (a cast between f32 and a 16-bit float
    joins with its 16-bit side: on the cpu target every other op computes
    on f32 copies of 16-bit values), and when the group can sit where its
    last op was (every value leaving the group is read after that point
    only). A value read only inside its group is not stored at all.

    Report (`tcc.pass_report`): `groups`, `groups_by_kind`, `ops_fused`,
    and `kernels_before` / `kernels_after`, the kernels one training step
    launches.
  }];
  let options = [
    ListOption<"epiloguePatterns", "epilogue-patterns", "std::string",
               "The library epilogue patterns to form, by the names the registered "
               "targets declare them under (target/FusionPattern.h), in the order to try "
               "them; the compile pipeline lists its target's (cuda: "
               "cublaslt-linear-activation,cudnn-conv-bias-relu). An unknown name is an "
               "error">,
    Option<"multiTensorCasts", "multi-tensor-casts", "bool", /*default=*/"false",
           "Group runs of independent casts left alone (multi_tensor_cast), for a "
           "target that launches a kernel per op (cuda)">
  ];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def Recompute : Pass<"tcc-recompute", "::mlir::ModuleOp"> {
  let summary = "Compute forward values again where the backward reads them, to save memory";
  let description = [{
    Runs on `@train_step` after `tcc-fusion`, before `tcc-plan-memory`, and
    asks the memory plan (passes/MemoryPlan.h, in Measure mode) what each
    change does to the planned step: state, the larger scratch arena of
    the two steps, and one batch.

    Free, always: a batch norm's normalised result that the backward reads
    only in the `norm_backward_prologue` group of the same norm (the
    activation's backward) is recomputed there, per element, by a
    `tcc.batch_norm_apply` from the norm's input and saved statistics,
    which that kernel reads anyway. No kernel and no memory traffic are
    added; the normalised tensor no longer reaches memory. Under 16-bit
    storage on the cpu target the same holds for the 16-bit cast of the
    normalised result, computed again from the f32 copy of the norm's input
    that the backward reads and rounded again. Nothing else is recomputed
    without a budget.

    Under `train.memory_budget` (bytes; `tcc compile --memory-budget`):
    while the planned step is over the budget, a value whose readers have a
    gap between them is computed again before the readers after the widest
    gap, which then read the copy. Candidates are tried cheapest first —
    batch-norm applies, elementwise ops and groups, dropout (recomputed from
    its saved seed), then pooling, then convolutions and matmuls — and the
    largest first within a class; a recompute stays only if the planned
    scratch shrinks. If the step is still over the budget when every
    candidate was tried, tcc-plan-memory refuses the plan, with the smallest
    size reached.
    Recomputed values are bit-identical to the kept ones.

    Report (`tcc.pass_report`): `values` (how many were recomputed),
    `free` and `for_budget` (the model nodes, by kind of recompute),
    `kernels_added`, `bytes_saved`, and `peak_bytes_before` /
    `peak_bytes_after` (the planned step's bytes).
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def Widen16Bit : Pass<"tcc-widen-16bit", "::mlir::ModuleOp"> {
  let summary = "Run the ops a target has no 16-bit kernel for on f32 copies";
  let description = [{
    Under mixed precision the step stores 16-bit tensors (what tcc-precision
    assigned). A target computes some ops on them directly and every other
    op in f32. Ops declare which kind of 16-bit kernel they need (ODS traits,
    ir/TccDialect.td): `update` (Tcc_SixteenBitUpdate: the optimizer, EMA
    and Lookahead updates, which compute in double from the stored values),
    `library` (Tcc_SixteenBitLibrary: convolutions and linear layers, which
    cuDNN and cuBLASLt run with f32 accumulation) and `exact`
    (Tcc_SixteenBitExact: views, pads, slices, max pools and sums whose
    16-bit result is the rounded exact one); the target names the kinds its
    kernels take (`keep`). Each op of the step functions that reads or
    writes a bf16 or f16 tensor and declares none of them gets its 16-bit
    operands cast to f32 right before it and its results computed in f32
    and cast back to their 16-bit type right after it: the step keeps
    16-bit storage, rounded where a value is stored, with f32 arithmetic,
    and the memory plan counts the short-lived f32 copies. Casts are left as
    they are. The compile pipeline runs it for every target, after
    tcc-build-train-step and before tcc-fusion (so that fusion, recompute
    and the memory budget see the copies), with the target's kinds: `update`
    on the cpu target, all three on the cuda target.

    Report (`tcc.pass_report`, `widen-16bit`): `ops` widened, `casts`
    added.
  }];
  let options = [
    ListOption<"keep", "keep", "std::string",
               "the kinds of op the target runs on 16-bit tensors "
               "(update, library, exact): left as they are">,
  ];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def ChannelsLast : Pass<"tcc-channels-last", "::mlir::ModuleOp"> {
  let summary = "Store the activations around 16-bit convolutions NHWC (channels last)";
  let description = [{
    cuDNN's tensor-core engines read and write NHWC; given NCHW tensors they
    transpose inside their workspace (about the size of the largest tensor
    of the conv). On the step functions, after tcc-widen-16bit and before
    tcc-fusion (the compile pipeline runs it for the cuda target only), it
    marks the ops whose 4-d results are stored NHWC (`tcc.channels_last`,
    ir/PhysicalLayout.h); the IR's shapes stay NCHW, so the rewrite changes
    no value: only the kernels that index by channel or pixel read the mark.

    Values whose layout matters (4-d, more than one channel and one pixel)
    fall into classes that must share a layout: the operands and results of
    an elementwise op; a convolution's input, output and their gradients; a
    batch norm's, a pool's, and a reduction to channels' (a bias gradient).
    A class is stored NHWC when it holds an activation of a 16-bit
    convolution (in the function's body or a micro-batch loop's), unless one
    of its values is a block argument, a function or loop result,
    a convolution's weight (filters stay KCRS: cuDNN's engines take them
    with a small workspace) or an operand of any other op (a flatten of
    several pixels, a transpose, a concat, dropout, ...), which read NCHW.
    A cast joins the classes on both sides where they agree; where they do
    not (the f32 input batch cast to 16 bits for the first conv), the cast
    itself converts the layout, and tcc-fusion keeps it out of its groups.

    Report (`tcc.pass_report`, `channels-last`): `values` stored NHWC,
    `relayouts` (the casts that convert), `kept_nchw` (values of 16-bit
    convolutions left NCHW because their class has an op that reads NCHW).
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def BucketCollectives : Pass<"tcc-bucket-collectives", "::mlir::ModuleOp"> {
  let summary = "Split the gradients' all-reduce (ZeRO-2's reduce-scatter) into buckets, each right after its gradients are computed";
  let description = [{
    A distributed step sums every trainable parameter's gradient over the
    ranks; `tcc-build-train-step` builds that as one `tcc.all_reduce "sum"`
    after the whole backward, marked `tcc.gradients` (with
    `train.distributed.shard: "gradients"`, ZeRO-2, one
    `tcc.reduce_scatter` so marked). This pass does what PyTorch DDP's
    reducer does at run time, at compile time: it splits that collective
    into buckets of the same kind and places each right after the last op
    that computes one of its gradients, so that its communication can run
    while the rest of the backward does (on the cuda target, on a second
    stream inside the step's CUDA graph).

    - **Order**: the gradients in the order the backward computes them
      (the last layer's first, as DDP's), ties in state order.
    - **Sizes**: consecutive gradients fill a bucket up to `bucket-bytes`
      (DDP's `bucket_cap_mb`, 25 MiB) of the tensors the all-reduce sends
      (their element type after `tcc-widen-16bit`: f32 where the target
      sums 16-bit gradients in f32); the first bucket up to
      `first-bucket-bytes` (1 MiB, DDP's first bucket), so that the
      communication starts early. A tensor larger than a bucket is a
      bucket alone.
    - **Placement**: each bucket right after the last op that computes one
      of its gradients, and after the bucket before it: the buckets run in
      the order they were formed, the same on every rank. Not in front of
      an all-reduce that directly follows that op (a synchronised batch
      norm's backward sums, which the rest of the backward waits for): the
      bucket goes after it.
    - **Conversions move up** first: a pure op of one operand that only
      the all-reduce reads, or a chain of them, moves to right after what
      it reads: the widening `tcc.cast` of a mixed precision parameter's
      gradient and the `tcc.slice` of a padded weight's, which autodiff
      builds where the forward began (at the end of the backward), a bias
      gradient's sum, tcc-widen-16bit's f32 copies.
    - The results replace the uses of the all-reduce's results. An
      elementwise sum over two ranks does not depend on how the tensors
      are packed into messages (a + b = b + a); over more, an algorithm
      that splits the message (a ring) may add an element's terms in an
      order that depends on its offset, so the packing may change the
      rounding (docs/passes.md).

    It moves nothing else: not the running statistics' `"mean"`
    all-reduce, not a synchronised batch norm's all-reduces in the forward
    and backward, nothing inside a `tcc.micro_batches` loop, not FSDP's
    reduce-scatters (a step that gathers parameters, `tcc.gather_for`:
    tcc-gather-parameters splits them per node), nothing already a bucket.
    With `train.accumulate` > 1 the gradients are complete only after the
    loop: the collective there is split by size alone, every bucket right
    after the loop. A step of one rank has no gradient all-reduce: nothing to do.
    Runs after `tcc-widen-16bit` and the target's layout passes, before
    `tcc-fusion` (the op order is final from fusion on).

    Each bucket keeps `tcc.gradients` and gets `tcc.bucket` (its index).
    Report (`tcc.pass_report`, `bucket-collectives`), where the step has a
    gradient all-reduce or ZeRO-2 reduce-scatter: `buckets`, and per bucket `tensors`, `bytes` and
    `ops_after` (the ops of the step between the bucket and the end of the
    backward: the work that could hide its communication); `hoisted` (the
    conversions moved up).
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"26214400",
           "the bytes of gradients one bucket holds at most (25 MiB, DDP's "
           "bucket_cap_mb; a larger tensor is a bucket alone)">,
    Option<"firstBucketBytes", "first-bucket-bytes", "int64_t", /*default=*/"1048576",
           "the bytes the first bucket holds at most (1 MiB, DDP's first bucket), "
           "if less than bucket-bytes; 0: as bucket-bytes">,
  ];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def GatherParameters : Pass<"tcc-gather-parameters", "::mlir::ModuleOp"> {
  let summary = "Gather each model node's sharded parameters one node ahead of its readers, reduce-scatter its gradients after them";
  let description = [{
    With `train.distributed.shard: "parameters"` (FSDP / ZeRO-3) every rank
    keeps its chunk of each trainable parameter. `tcc-build-train-step`
    gathers all of them twice in each micro-batch: one `tcc.all_gather`
    (`tcc.gather_for = "forward"`) before the forward, whose whole tensors
    the forward reads, and a second (`"backward"`) after the loss, whose
    tensors the backward reads. This pass splits each into one gather per
    model node (the parameters whose first reader, in the forward or the
    backward, is the same node's op: a layer's weight and bias together)
    and places each one node ahead, as FSDP's prefetch does: the gather of
    the k-th node to read parameters right before the first reader of the
    (k-1)-th, the first where the whole gather was. The backward's order is
    the backward's own (the last layer first). So each whole parameter
    lives from one node before its reads to its last read, and the memory
    plan frees it between its forward and its backward.

    - A result nothing reads is not gathered (a bias, which no backward
      op reads).
    - The gradients' `tcc.reduce_scatter` (marked `tcc.gradients`) is split
      the same way: one per node, right after the last op that computes one
      of the node's gradients (a mixed precision gradient's widening cast
      moved up to it first, as tcc-bucket-collectives does), so each whole
      gradient dies once its node's backward is done (not in a
      `tcc.micro_batches` loop, whose gradients are complete only after it:
      that one stays after the loop).
    - A parameter whose forward readers belong to two model nodes is an
      error (it would be gathered for one and read by the other).
    - It works in the block of the gathers: inside a `tcc.micro_batches`
      loop, each micro-batch gathers each parameter once for its forward
      and once for its backward. A gather of one node is left where it is,
      so the pass is idempotent. Nothing else moves: not the gradients'
      `tcc.reduce_scatter`, not a ZeRO-1/2 step's gather after the update
      (no `tcc.gather_for`); a step of one rank, or of another shard mode,
      has no gathers to split.

    Runs after `tcc-widen-16bit` and the target's layout passes, before
    `tcc-fusion`. Report (`tcc.pass_report`, `gather-parameters`):
    `gathers` (after the split), `forward` and `backward` (how many of each),
    `reduce_scatters`.
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def PlanMemory : Pass<"tcc-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Assign every tensor of the step functions a place in memory";
  let description = [{
    The static memory plan that both code generators walk. The training
    state (the `tcc.state` arguments, identical in `@train_step` and
    `@eval_step`) is laid out once, 64-byte aligned, in a state arena:
    `tcc.state_arena` (`#tcc.state_arena<bytes, offsets>`) on the module.
    Every other tensor an op produces gets an offset in a per-function
    scratch arena (`tcc.placement`, `#tcc.placement<scratch = [...]>`, on
    the op, one entry per result; `tcc.scratch_arena` on the function),
    reusing the memory of tensors that are dead by then: the
    result of an elementwise op or group goes over an operand of its size
    that it reads last, and the live ranges are packed first fit in
    schedule order or largest first (in blocks of up to 32768 values),
    whichever plan is smaller.

    A value is live from its op to the last op of its block that reads it
    or holds (in a region) an op that reads it: a value read inside a
    `tcc.micro_batches` body lives until the loop ends. The body is planned
    on its own and placed as one region of scratch, live while the loop
    runs, reused by every iteration.

    A result that replaces a state tensor is written in place (its slot in
    the placement's `state` list, its scratch offset -1) when its op has the
    InPlaceStateUpdate
    trait, reads the slot's current value, and is the last to read it;
    otherwise it gets scratch memory and the code generator copies it into
    the state at the end of the step.

    Workspace: an op with `tcc.workspace = #tcc.workspace<bytes = N>`, N > 0
    (set by a target before planning, e.g. for cuDNN or cuBLASLt; the CPU
    target sets none) gets that many bytes of scratch live during the op
    only, aligned like every allocation, at the `offset` the pass adds to
    the attribute. It may share bytes with any value not live at the op and
    with other ops' workspaces; the scratch arena counts it.

    Under `train.memory_budget` the pass refuses a plan whose step (state,
    the larger scratch arena, one batch) is over the budget, with the sizes
    and whether tcc-recompute ran: the one check of the budget.

    Fusion groups (`tcc.fusion_group`) are planned as one op: their results
    get memory, the values their bodies define and do not yield get none. A
    group's result is written in place when the op inside that yields it
    qualifies as above (InPlaceStateUpdate, reads the slot, and no other op
    of the group reads the slot).

    Views: the result of `tcc.flatten` or `tcc.reshape` whose input has
    scratch memory of the same block (not a function or loop-body argument,
    not a state slot updated in place, not a constant) takes the input's
    offset, and the input's bytes stay live until the view's last use
    (transitively: a reshape of a flatten of `x` has `x`'s offset). Equal
    scratch offsets tell a code generator that no copy is needed.
  }];
}

#endif // TCC_PASSES_TD
