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
      step's loss sum and correct count.
    - `@eval_step`: the forward pass with running BN statistics, no dropout,
      the EMA weights when the recipe has EMA, averaged over the TTA views
      of `eval.tta`; returns the number of correct predictions.

    Both take the whole state (parameters, buffers, optimizer state, EMA
    weights, step counter) as arguments tagged `tcc.state`, and
    `@train_step` returns each state tensor's new value tagged the same way,
    so that code generators can update the state in place. Frozen
    parameters get no gradient and no update.
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect", "::mlir::arith::ArithDialect"];
}

def PlanMemory : Pass<"tcc-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Assign every tensor of the step functions a place in memory";
  let description = [{
    The static memory plan that both code generators walk. The training
    state (the `tcc.state` arguments, identical in `@train_step` and
    `@eval_step`) is laid out once, 64-byte aligned, in a state arena:
    `tcc.state_offsets` and `tcc.state_bytes` on the module. Every other
    tensor an op produces gets an offset in a per-function scratch arena
    (`tcc.offsets` on the op, one entry per result; `tcc.scratch_bytes` on the
    function), reusing the memory of tensors that are dead by then (first
    fit over live ranges in schedule order).

    A value is live from its op to the last op of its block that reads it
    or holds (in a region) an op that reads it: a value read inside a
    `tcc.micro_batches` body lives until the loop ends. The body is planned
    on its own and placed as one region of scratch, live while the loop
    runs, reused by every iteration.

    A result that replaces a state tensor is written in place
    (`tcc.state_slots` on the op) when its op has the InPlaceStateUpdate
    trait, reads the slot's current value, and is the last to read it;
    otherwise it gets scratch memory and the code generator copies it into
    the state at the end of the step.

    Workspace: an op with an i64 attribute `tcc.workspace_bytes` > 0 (set
    by a target before planning, e.g. for cuDNN or cuBLASLt; the CPU target
    sets none) gets that many bytes of scratch live during the op only,
    aligned like every allocation, at `tcc.workspace_offset` (i64) on the
    op. It may share bytes with any value not live at the op and with other
    ops' workspaces; `tcc.scratch_bytes` counts it. Another value (negative,
    not an i64, over 2^48) is an error.

    Views: the result of `tcc.flatten` or `tcc.reshape` whose input has
    scratch memory of the same block (not a function or loop-body argument,
    not a state slot updated in place, not a constant) takes the input's
    offset, and the input's bytes stay live until the view's last use
    (transitively: a reshape of a flatten of `x` has `x`'s offset). Equal
    entries in `tcc.offsets` tell a code generator that no copy is needed.
  }];
}

#endif // TCC_PASSES_TD
