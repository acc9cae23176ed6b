//===- TccTrainOps.td - Optimizer, schedule and metric ops -*- tablegen -*-===//
//
// The rest of a training step after the gradients: learning-rate schedule,
// gradient clipping, optimizer updates, weight averaging, the step counter,
// metrics, and the test-time-augmentation views of the evaluation step. All
// run on the device: nothing here needs the host between steps.
//
// Scalars are 0-d tensors: the step counter and run constants are i64, the
// learning rate and norms f32.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_TRAIN_OPS_TD
#define TCC_TRAIN_OPS_TD

include "ir/TccDialect.td"
include "ir/TccInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tcc_ScalarI64 : 0DTensorOf<[I64]>;

//===----------------------------------------------------------------------===//
// Step counter, seeds, schedule
//===----------------------------------------------------------------------===//

def Tcc_IncrementOp : Tcc_Op<"increment",
    [Pure, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate]> {
  let summary = "A counter plus one, unless the step is skipped";
  let description = [{
    `input + 1`; with `skip`, `input` unchanged when `skip` is nonzero (the
    optimizer's own step count under fp16 loss scaling, which counts the
    steps the optimizer applied, as PyTorch's `state["step"]` does).

    ```mlir
    %next = tcc.increment %step : tensor<i64>
    %applied = tcc.increment %optimizer_steps skip %found_inf : tensor<i64>
    ```
  }];
  let arguments = (ins Tcc_ScalarI64:$input, Optional<Tcc_SkipFlag>:$skip);
  let results = (outs Tcc_ScalarI64:$result);
  let assemblyFormat = "$input (`skip` $skip^)? attr-dict `:` type($input)";
}

def Tcc_MixSeedOp : Tcc_Op<"mix_seed",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "A per-step random seed from the run's seed and the step";
  let description = [{
    A 64-bit hash (splitmix64 of `seed` combined with `step`), so each
    step's dropout masks differ and a run is reproducible from its seed.

    ```mlir
    %s = tcc.mix_seed %seed, %step : tensor<i64>
    ```
  }];
  let arguments = (ins Tcc_ScalarI64:$seed, Tcc_ScalarI64:$step);
  let results = (outs Tcc_ScalarI64:$result);
  let assemblyFormat = "$seed `,` $step attr-dict `:` type($result)";
}

def Tcc_LrScheduleOp : Tcc_Op<"lr_schedule", [Pure, InferTypeOpAdaptor]> {
  let summary = "The learning rate at a step";
  let description = [{
    `base_lr * factor(t)` where `t` is the step, or the fractional epoch
    `step / steps_per_epoch` when `schedule.unit` is `epoch`. `schedule` is
    model.json's `train.schedule` (#tcc.schedule: type constant, step,
    linear_warmup, one_cycle, cosine or piecewise_linear;
    docs/model-format.md). `total_steps` bounds one_cycle and cosine.

    ```mlir
    %lr = tcc.lr_schedule %step, %steps_per_epoch, %total_steps {base_lr = 4.0e-01 : f64,
            schedule = #tcc.schedule<type = piecewise_linear, unit = epoch, count_from = 0,
              step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3,
              div_factor = 25.0, final_div_factor = 1.0e+04, anneal = cos,
              times = [0.0, 2.0, 10.0], factors = [0.0, 1.0, 0.0]>}
          : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_ScalarI64:$step, Tcc_ScalarI64:$steps_per_epoch,
                       Tcc_ScalarI64:$total_steps, F64Attr:$base_lr,
                       Tcc_ScheduleAttr:$schedule);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = [{
    $step `,` $steps_per_epoch `,` $total_steps attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Gradient clipping
//===----------------------------------------------------------------------===//

def Tcc_GlobalNormOp : Tcc_Op<"global_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "The L2 norm of all its operands together";
  let description = [{
    `sqrt(sum over all operands and elements of x^2)`, accumulated in f32,
    as torch.nn.utils.clip_grad_norm_ computes the total norm.

    ```mlir
    %n = tcc.global_norm %g1, %g2 : (tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_FloatTensor>:$inputs);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Tcc_ClipCoefficientOp : Tcc_Op<"clip_coefficient",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "min(1, max_norm / (norm + 1e-6)), as clip_grad_norm_";
  let description = [{
    ```mlir
    %c = tcc.clip_coefficient %norm {max_norm = 1.0 : f64} : tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_ScalarF32:$norm, F64Attr:$max_norm);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$norm attr-dict `:` type($result)";
}

def Tcc_ScaleByOp : Tcc_Op<"scale_by", [Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>,
    DeclareOpInterfaceMethods<Tcc_DifferentiableOpInterface>]> {
  let summary = "A tensor times a run-time f32 scalar";
  let description = [{
    Clipping scales the gradients by it; fp16 loss scaling scales the loss
    before autodiff and the gradients by its reciprocal after. Its gradient
    is `scale_by` of the result's gradient by the same factor (the factor's
    is the sum of the result's gradient times the input).

    ```mlir
    %g2 = tcc.scale_by %g, %c : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_ScalarF32:$factor);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $factor attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling (fp16-mixed), as torch.amp.GradScaler
//===----------------------------------------------------------------------===//

def Tcc_ReciprocalOp : Tcc_Op<"reciprocal",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "1 / x of a scalar (the loss scale's inverse, to unscale gradients)";
  let description = [{
    ```mlir
    %inv = tcc.reciprocal %loss_scale : tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_ScalarF32:$input);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tcc_FoundNonFiniteOp : Tcc_Op<"found_non_finite", [Pure, InferTypeOpAdaptor]> {
  let summary = "1 if any element of its operands is inf or nan, else 0";
  let description = [{
    GradScaler's `found_inf` over the unscaled gradients: the step's updates
    skip (`skip` operand) and the loss scale backs off when it is 1. An f32
    scalar, as PyTorch keeps it, so the updates read it on the device.

    ```mlir
    %found = tcc.found_non_finite %g1, %g2 : (tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_FloatTensor>:$inputs);
  let results = (outs Tcc_ScalarF32:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Tcc_FrozenAfterOp : Tcc_Op<"frozen_after", [Pure]> {
  let summary = "1 once a parameter that trains for its first epochs only is frozen";
  let description = [{
    The skip flag of the updates of a parameter with `train_epochs`
    (model.json): 1 when `step >= epochs * steps_per_epoch` or when `skip`
    (fp16 loss scaling's found-inf flag) is nonzero, else 0. airbench trains
    its whitening bias for 3 epochs, then sets `requires_grad = False`, and
    torch.optim.SGD skips a parameter without a gradient entirely: no weight
    decay, no momentum. `step` is the counter before this step.

    ```mlir
    %frozen = tcc.frozen_after %step, %steps_per_epoch {epochs = 3 : i64}
              : (tensor<i64>, tensor<i64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_ScalarI64:$step, Tcc_ScalarI64:$steps_per_epoch,
                       Optional<Tcc_SkipFlag>:$skip, I64Attr:$epochs);
  let results = (outs Tcc_SkipFlag:$result);
  let assemblyFormat = [{
    $step `,` $steps_per_epoch (`skip` $skip^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_UpdateLossScaleOp : Tcc_Op<"update_loss_scale",
    [Pure, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate]> {
  let summary = "GradScaler.update: back off on inf/nan, grow after clean steps";
  let description = [{
    As `torch._amp_update_scale_`: when `found_inf` is nonzero, `scale *=
    backoff_factor` and `growth_tracker = 0`; otherwise `growth_tracker + 1`,
    and when that reaches `growth_interval`, `scale *= growth_factor` (kept
    only if finite) and `growth_tracker = 0`.

    ```mlir
    %s2, %t2 = tcc.update_loss_scale %scale, %tracker, %found {backoff_factor = 5.0e-01 : f64,
                 growth_factor = 2.0 : f64, growth_interval = 2000 : i64}
               : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
    ```
  }];
  let arguments = (ins Tcc_ScalarF32:$scale, Tcc_ScalarI64:$growth_tracker,
                       Tcc_ScalarF32:$found_inf, F64Attr:$growth_factor,
                       F64Attr:$backoff_factor, I64Attr:$growth_interval);
  let results = (outs Tcc_ScalarF32:$new_scale, Tcc_ScalarI64:$new_growth_tracker);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $found_inf attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers: one op updates one parameter and its state
//===----------------------------------------------------------------------===//

def Tcc_SgdUpdateOp : Tcc_Op<"sgd_update",
    [Pure, Tcc_SixteenBitUpdate, AttrSizedOperandSegments, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "One torch.optim.SGD step of one parameter";
  let description = [{
    With `lr = lr_scale * lr` and `wd = weight_decay`:
    `g = grad + wd * param`; with momentum, `buf = g` on the first step
    (`step == 0`) and `momentum * buf + (1 - dampening) * g` after it, and
    `g = g + momentum * buf` (Nesterov) or `g = buf`;
    `param = param - lr * g`. Without momentum there is no buffer.
    With `lr_scaled_buffer` the buffer accumulates the lr-scaled steps
    instead (the form of myrtle.ai's ResNet-9 code, which differs from
    torch.optim.SGD whenever the rate changes): `d = -lr * g`,
    `buf = momentum * buf + d`, `param += nesterov ? d + momentum * buf : buf`.
    With
    `skip` nonzero (fp16 loss scaling found an inf or nan gradient) nothing
    changes, as `GradScaler.step` skips `optimizer.step()`.

    ```mlir
    %p2, %b2 = tcc.sgd_update %p, %g, %lr, %step momentum_buffer %b {dampening = 0.0 : f64, lr_scale = 1.0 : f64,
                 momentum = 9.0e-01 : f64, nesterov = true, weight_decay = 5.0e-04 : f64}
               : (tensor<16xf32>, tensor<16xf32>, tensor<f32>, tensor<i64>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$param, Tcc_FloatTensor:$grad,
                       Tcc_ScalarF32:$lr, Tcc_ScalarI64:$step,
                       Optional<Tcc_FloatTensor>:$momentum_buffer,
                       Optional<Tcc_SkipFlag>:$skip,
                       F64Attr:$lr_scale, F64Attr:$momentum, F64Attr:$dampening,
                       BoolAttr:$nesterov, F64Attr:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$lr_scaled_buffer);
  let results = (outs Tcc_FloatTensor:$new_param,
                      Optional<Tcc_FloatTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr `,` $step (`momentum_buffer` $momentum_buffer^)?
    (`skip` $skip^)? attr-dict `:` functional-type(operands, results)
  }];
}

class Tcc_AdamLikeUpdateOp<string mnemonic, string summaryText, string formula,
                           list<Trait> traits = []>
    : Tcc_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = summaryText;
  let description = formula # [{

    The moments `exp_avg` and `exp_avg_sq` have the parameter's shape; `step`
    is the number of steps taken before this one (bias correction uses
    `t = step + 1`). With `skip` nonzero nothing changes (fp16 loss scaling
    found an inf or nan gradient).

    ```mlir
    %p2, %m2, %v2 = tcc.}] # mnemonic # [{ %p, %g, %lr, %step, %m, %v {beta1 = 9.0e-01 : f64,
        beta2 = 9.990000e-01 : f64, eps = 1.0e-08 : f64, lr_scale = 1.0 : f64, weight_decay = 1.0e-02 : f64}
      : (tensor<16xf32>, tensor<16xf32>, tensor<f32>, tensor<i64>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$param, Tcc_FloatTensor:$grad,
                       Tcc_ScalarF32:$lr, Tcc_ScalarI64:$step,
                       Tcc_FloatTensor:$exp_avg, Tcc_FloatTensor:$exp_avg_sq,
                       Optional<Tcc_SkipFlag>:$skip, F64Attr:$lr_scale, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$eps, F64Attr:$weight_decay);
  let results = (outs Tcc_FloatTensor:$new_param, Tcc_FloatTensor:$new_exp_avg,
                      Tcc_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr `,` $step `,` $exp_avg `,` $exp_avg_sq
    (`skip` $skip^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_AdamwUpdateOp : Tcc_AdamLikeUpdateOp<"adamw_update",
    "One torch.optim.AdamW step of one parameter",
    [{`param *= 1 - lr * weight_decay`, then the Adam step with bias-corrected
    moments: `param -= lr * m_hat / (sqrt(v_hat) + eps)`.}], [Tcc_SixteenBitUpdate]>;

def Tcc_LambUpdateOp : Tcc_AdamLikeUpdateOp<"lamb_update",
    "One LAMB step of one parameter (You et al., 2019)",
    [{`u = m_hat / (sqrt(v_hat) + eps) + weight_decay * param`,
    `r = |param| / |u|` (1 when either norm is 0),
    `param -= lr * r * u`: Adam's direction with a per-layer trust ratio.}]>;

//===----------------------------------------------------------------------===//
// Weight averaging
//===----------------------------------------------------------------------===//

def Tcc_EmaUpdateOp : Tcc_Op<"ema_update",
    [Pure, Tcc_SixteenBitUpdate, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "Exponential moving average of a weight, every n steps";
  let description = [{
    `decay` is per step: when the update is due,
    `ema = d * ema + (1 - d) * value` with `d = decay^every`; otherwise `ema`
    is unchanged. `step` is the counter before this step. The update is due
    when `(step + 1) % every == 0` (after steps every, 2 every, ... of the
    run), or, with a `per_epoch` operand (the steps per epoch), when
    `(step % steps_per_epoch) % every == 0`: after steps 1, 1 + every, ... of
    each epoch, as myrtle.ai's update_ema, whose counter restarts with each
    epoch.

    ```mlir
    %e2 = tcc.ema_update %e, %p, %step {decay = 9.9e-01 : f64, every = 5 : i64}
          : (tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> tensor<16xf32>
    %e3 = tcc.ema_update %e, %p, %step per_epoch %steps_per_epoch {decay = 9.9e-01 : f64, every = 5 : i64}
          : (tensor<16xf32>, tensor<16xf32>, tensor<i64>, tensor<i64>) -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$ema, Tcc_FloatTensor:$value,
                       Tcc_ScalarI64:$step, Optional<Tcc_ScalarI64>:$per_epoch,
                       F64Attr:$decay, I64Attr:$every);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    $ema `,` $value `,` $step (`per_epoch` $per_epoch^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Tcc_LookaheadUpdateOp : Tcc_Op<"lookahead_update",
    [Pure, Tcc_SixteenBitUpdate, InferTypeOpAdaptor, Tcc_InPlaceStateUpdate, DeclareOpInterfaceMethods<Tcc_FusionOpInterface, ["getFusionKind"]>]> {
  let summary = "Lookahead (Zhang et al., 2019) on one parameter";
  let description = [{
    When `(step + 1) % every == 0`: `slow = alpha_t * slow + (1 - alpha_t) * fast`
    and `fast = slow`; otherwise both are unchanged. `alpha_t`, the share the
    slow weights keep (airbench's "decay"), is `alpha`, or with
    `alpha_schedule = "cubic"` `alpha * ((step + 1) / total_steps)^3` as
    airbench uses it. With `copy_back`, the last step of the run
    (`step + 1 == total_steps`) ends with `fast = slow`: training ends on
    the slow weights, as airbench's final `update(decay=1.0)`.

    ```mlir
    %fast2, %slow2 = tcc.lookahead_update %fast, %slow, %step, %total {alpha = 7.7e-01 : f64,
                       alpha_schedule = "cubic", every = 5 : i64}
                     : (tensor<16xf32>, tensor<16xf32>, tensor<i64>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$fast, Tcc_FloatTensor:$slow,
                       Tcc_ScalarI64:$step, Tcc_ScalarI64:$total_steps,
                       F64Attr:$alpha, StrAttr:$alpha_schedule, I64Attr:$every,
                       DefaultValuedAttr<BoolAttr, "false">:$copy_back);
  let results = (outs Tcc_FloatTensor:$new_fast, Tcc_FloatTensor:$new_slow);
  let assemblyFormat = [{
    $fast `,` $slow `,` $step `,` $total_steps attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Metrics and evaluation views
//===----------------------------------------------------------------------===//

def Tcc_CountCorrectOp : Tcc_Op<"count_correct", [Pure, InferTypeOpAdaptor]> {
  let summary = "How many of the first `valid` rows have argmax == label";
  let description = [{
    The argmax takes the first maximal logit. Rows from `valid` on (padding
    of a short last batch) are ignored.

    ```mlir
    %n = tcc.count_correct %logits, %labels, %valid : (tensor<8x10xf32>, tensor<8xi64>, tensor<i64>) -> tensor<i64>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$logits, Tcc_IndexTensor:$labels,
                       Tcc_ScalarI64:$valid);
  let results = (outs Tcc_ScalarI64:$result);
  let assemblyFormat = "$logits `,` $labels `,` $valid attr-dict `:` functional-type(operands, results)";
}

def Tcc_FlipOp : Tcc_Op<"flip", [Pure, SameOperandsAndResultType,
                                 InferTypeOpInterface]> {
  let summary = "Horizontal mirror of [N, C, H, W] images (a TTA view)";
  let description = [{
    ```mlir
    %m = tcc.flip %x : tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tcc_ShiftOp : Tcc_Op<"shift", [Pure, SameOperandsAndResultType,
                                   InferTypeOpInterface]> {
  let summary = "Images translated by (dy, dx) pixels with reflection (a TTA view)";
  let description = [{
    `result[n, c, i, j] = input[n, c, reflect(i - dy), reflect(j - dx)]`,
    as padding with reflection and cropping at an offset.

    ```mlir
    %s = tcc.shift %x {dx = 1 : i64, dy = 1 : i64} : tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, I64Attr:$dy, I64Attr:$dx);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient accumulation
//===----------------------------------------------------------------------===//

def Tcc_MicroBatchesOp : Tcc_Op<"micro_batches",
    [AttrSizedOperandSegments, RecursiveMemoryEffects, SingleBlock]> {
  let summary = "The forward and backward pass of each micro-batch, as one loop";
  let description = [{
    Gradient accumulation (`train.accumulate`) without copying the model once
    per micro-batch: the body runs `count` times, so the IR and the generated
    code stay the size of one micro-batch whatever `count` is.

    Iteration `k` receives, as the body's first arguments, the k-th of
    `count` equal slices along dim 0 of each `batched` operand (the images
    and labels of the step), then the carried values: `inits` in the first
    iteration, what the previous iteration yielded after that (the
    batch-norm running statistics). The body yields the new carried values,
    then the summands: per-micro-batch gradients, loss sums and correct
    counts. The results are the last carried values, then the sum over the
    iterations of each summand, added in iteration order (so the result is
    bit-identical to the unrolled sum `((s0 + s1) + s2) + ...`).

    A dropout in the body draws stream `stream + k * dropout_streams` in
    iteration `k`, so no two micro-batches share a mask.

    ```mlir
    %rm, %gw, %loss = tcc.micro_batches 4 (%images, %labels : tensor<32x3xf32>, tensor<32xi64>)
        carry (%running_mean : tensor<3xf32>) {dropout_streams = 0 : i64}
        -> (tensor<3xf32>, tensor<2x3xf32>, tensor<f32>) {
    ^bb0(%x: tensor<8x3xf32>, %y: tensor<8xi64>, %mean: tensor<3xf32>):
      ...
      tcc.yield %new_mean, %grad_w, %loss_sum : tensor<3xf32>, tensor<2x3xf32>, tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Tcc_Tensor>:$batched, Variadic<Tcc_Tensor>:$inits,
                       I64Attr:$count, I64Attr:$dropout_streams);
  let results = (outs Variadic<Tcc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $count `(` $batched `:` type($batched) `)` (`carry` `(` $inits^ `:` type($inits) `)`)?
    attr-dict `->` `(` type($results) `)` $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's argument of the k-th batched operand, and of the k-th carried value.
    BlockArgument getBatchedArgument(unsigned k) { return getBody().getArgument(k); }
    BlockArgument getCarriedArgument(unsigned k) {
      return getBody().getArgument(getBatched().size() + k);
    }
    /// The results that sum a summand (after the carried ones).
    ResultRange getSums() { return getResults().drop_front(getInits().size()); }
  }];
}

def Tcc_YieldOp : Tcc_Op<"yield",
    [Pure, Terminator, ParentOneOf<["MicroBatchesOp", "FusionGroupOp"]>]> {
  let summary = "The values that leave a micro-batch or a fusion group";
  let description = [{
    ```mlir
    tcc.yield %new_mean, %grad_w : tensor<3xf32>, tensor<2x3xf32>
    ```
  }];
  // (f64: a conv_statistics group's sums.)
  let arguments = (ins Variadic<AnyTypeOf<[Tcc_Tensor, Tcc_SumsTensor]>>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // TCC_TRAIN_OPS_TD
