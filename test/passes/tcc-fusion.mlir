// RUN: tcc-opt %s -split-input-file -tcc-fusion | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-fusion -tcc-plan-memory | FileCheck %s --check-prefix=PLAN

// A batch norm with an activation and a residual add on its result: one
// norm_epilogue group. The normalised value is read later (by the backward
// here, the return), so it leaves the group with the norm's statistics; the
// activation's value is read only by the add and stays inside.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[G:.*]]:6 = tcc.fusion_group "norm_epilogue" -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>) {
// CHECK-NEXT: %[[Y:.*]], %[[M:.*]], %[[I:.*]], %[[RM:.*]], %[[RV:.*]] = tcc.batch_norm
// CHECK-NEXT: %[[A:.*]] = tcc.relu %[[Y]]
// CHECK-NEXT: %[[S:.*]] = tcc.add %[[A]], %arg0
// CHECK-NEXT: tcc.yield %[[Y]], %[[M]], %[[I]], %[[RM]], %[[RV]], %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#5, %[[G]]#0, %[[G]]#3, %[[G]]#4, %[[G]]#1
// The running statistics the norm inside the group updates in place stay in
// their state slots; the other results get scratch.
// PLAN-LABEL: func.func @train_step(
// PLAN: tcc.fusion_group "norm_epilogue" {tcc.placement = #tcc.placement<scratch = [0, 320, 384, -1, -1, 448], state = [-1, -1, -1, 0, 1, -1]>}
// PLAN-NOT: tcc.placement
// PLAN: tcc.yield
func.func @train_step(%x: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %rm: tensor<2xf32> {tcc.state = "bn.running_mean"},
                      %rv: tensor<2xf32> {tcc.state = "bn.running_var"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<2xf32> {tcc.state = "bn.running_mean"},
        tensor<2xf32> {tcc.state = "bn.running_var"}, tensor<1x2xf32>) {
  %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %x running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
      : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
      -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %a = tcc.relu %y : tensor<4x2x3x3xf32>
  %s = tcc.add %a, %x : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>
  return %s, %y, %nrm, %nrv, %mean : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>
}

// -----

// The activation's backward and the residual gradient's add, read only by a
// batch_norm_backward: a norm_backward_prologue group; the gradient they
// compute never leaves it. So does the scale that only the add reads.
// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[G:.*]]:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
// CHECK-NEXT: %[[T:.*]] = tcc.scale %arg1
// CHECK-NEXT: %[[ADD:.*]] = tcc.add %arg0, %[[T]]
// CHECK-NEXT: %[[DY:.*]] = tcc.celu_backward %[[ADD]], %arg1
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = tcc.batch_norm_backward %[[DY]], %arg1
// CHECK-NEXT: tcc.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#0, %[[G]]#1
func.func @train_step(%g: tensor<4x2xf32> {tcc.role = "input"}, %x: tensor<4x2xf32> {tcc.role = "input"},
                      %mean: tensor<1x2xf32> {tcc.role = "input"}, %invstd: tensor<1x2xf32> {tcc.role = "input"})
    -> (tensor<4x2xf32>, tensor<2xf32>) {
  %t = tcc.scale %x {factor = 2.0 : f64} : tensor<4x2xf32>
  %sum = tcc.add %g, %t : tensor<4x2xf32>, tensor<4x2xf32>
  %dy = tcc.celu_backward %sum, %x {alpha = 1.0 : f64} : tensor<4x2xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %x saved %mean, %invstd {ghost_batch = 0 : i64}
      : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %dx, %dw : tensor<4x2xf32>, tensor<2xf32>
}

// -----

// Must not fire into the backward: the activation gradient is also read by
// another op, so the norm's kernel would compute it and it would still be
// needed in memory. The add and the celu_backward form an elementwise chain
// instead.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[G:.*]] = tcc.fusion_group "elementwise"
// CHECK-NEXT: tcc.add
// CHECK-NEXT: tcc.celu_backward
// CHECK-NEXT: tcc.yield
// CHECK: tcc.batch_norm_backward %[[G]]
// CHECK-NOT: fusion_group
func.func @train_step(%g: tensor<4x2xf32> {tcc.role = "input"}, %x: tensor<4x2xf32> {tcc.role = "input"},
                      %mean: tensor<1x2xf32> {tcc.role = "input"}, %invstd: tensor<1x2xf32> {tcc.role = "input"})
    -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %sum = tcc.add %g, %x : tensor<4x2xf32>, tensor<4x2xf32>
  %dy = tcc.celu_backward %sum, %x {alpha = 1.0 : f64} : tensor<4x2xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %x saved %mean, %invstd {ghost_batch = 0 : i64}
      : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %dx, %dy : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Must not fire:
// - a lone elementwise op (nothing to fuse it with);
// - across a change of size (a global pool between two activations);
// - where a value of the chain is read between its ops (%a by the pool
//   before %b: the group could not sit where %b is);
// - on 16-bit tensors (the loop nests compute in f32; precision comes later);
// - into a conv (no conv epilogues on this target).
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: fusion_group
// CHECK: return
func.func @train_step(%x: tensor<2x3x4x4xf32> {tcc.role = "input"}, %w: tensor<3x3x1x1xf32> {tcc.role = "input"},
                      %h: tensor<8xbf16> {tcc.role = "input"})
    -> (tensor<2x3xf32>, tensor<2x3x4x4xf32>, tensor<8xbf16>) {
  %c = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %a = tcc.relu %c : tensor<2x3x4x4xf32>
  %p = tcc.global_max_pool %a : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  %b = tcc.tanh %a : tensor<2x3x4x4xf32>
  %q = tcc.sigmoid %p : tensor<2x3xf32>
  %h1 = tcc.relu %h : tensor<8xbf16>
  %h2 = tcc.tanh %h1 : tensor<8xbf16>
  return %q, %b, %h2 : tensor<2x3xf32>, tensor<2x3x4x4xf32>, tensor<8xbf16>
}

// -----

// In the evaluation step: batch_norm_inference and its activation; inside a
// micro-batch loop's body, a chain of elementwise ops.
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.micro_batches
// CHECK: tcc.fusion_group "elementwise"
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.scale
// CHECK-LABEL: func.func @eval_step(
// CHECK: tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: tcc.batch_norm_inference
// CHECK-NEXT: tcc.gelu
func.func @train_step(%x: tensor<4x2xf32> {tcc.role = "input"}) -> tensor<2x2xf32> {
  %r = tcc.micro_batches 2 (%x : tensor<4x2xf32>) {dropout_streams = 0 : i64} -> (tensor<2x2xf32>) {
  ^bb0(%s: tensor<2x2xf32>):
    %a = tcc.relu %s : tensor<2x2xf32>
    %b = tcc.scale %a {factor = 0.5 : f64} : tensor<2x2xf32>
    tcc.yield %b : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}
func.func @eval_step(%x: tensor<4x2xf32> {tcc.role = "input"}, %rm: tensor<2xf32> {tcc.state = "rm"},
                     %rv: tensor<2xf32> {tcc.state = "rv"}) -> tensor<4x2xf32> {
  %y = tcc.batch_norm_inference %x running %rm, %rv {eps = 1.0e-05 : f64}
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %g = tcc.gelu %y : tensor<4x2xf32>
  return %g : tensor<4x2xf32>
}

// -----

// What the pass did, for the report: kernels of @train_step before and after.
// CHECK: tcc.pass_report = {fusion = {groups = 1 : i64, groups_by_kind = {elementwise = 1 : i64}, kernels_after = 1 : i64, kernels_before = 3 : i64, ops_fused = 3 : i64}}
func.func @train_step(%x: tensor<8xf32> {tcc.role = "input"}) -> tensor<8xf32> {
  %a = tcc.relu %x : tensor<8xf32>
  %b = tcc.tanh %a : tensor<8xf32>
  %c = tcc.add %a, %b : tensor<8xf32>, tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

// The optimizer, EMA and Lookahead updates: one multi_tensor_update group,
// sunk to the last update; an update whose result is read before the last
// (%e by the relu) stays out. The state the group's updates replace stays
// in place where the update inside reads the slot (slow, ema), and so do the
// SGD step's weights, which only the Lookahead that overwrites them in the
// same slot reads: the whole chain runs in the state's bytes (no scratch,
// no copy at the end).
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.ema_update %arg3
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: %[[G:.*]]:4 = tcc.fusion_group "multi_tensor_update"
// CHECK-NEXT: tcc.sgd_update
// CHECK-NEXT: tcc.lookahead_update
// CHECK-NEXT: tcc.ema_update
// CHECK-NEXT: tcc.yield
// PLAN-LABEL: func.func @train_step(
// PLAN: tcc.fusion_group "multi_tensor_update" {tcc.placement = #tcc.placement<scratch = [-1, -1, -1, -1], state = [0, 0, 1, 2]>}
func.func @train_step(%p: tensor<4xf32> {tcc.state = "p"}, %slow: tensor<4xf32> {tcc.state = "slow"},
                      %ema: tensor<4xf32> {tcc.state = "ema"}, %e2: tensor<4xf32> {tcc.state = "e2"},
                      %g: tensor<4xf32> {tcc.role = "input"}, %lr: tensor<f32> {tcc.role = "input"},
                      %step: tensor<i64> {tcc.role = "input"}, %total: tensor<i64> {tcc.role = "input"})
    -> (tensor<4xf32> {tcc.state = "p"}, tensor<4xf32> {tcc.state = "slow"},
        tensor<4xf32> {tcc.state = "ema"}, tensor<4xf32> {tcc.state = "e2"}, tensor<4xf32>) {
  %p1 = tcc.sgd_update %p, %g, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
  %e = tcc.ema_update %e2, %g, %step {decay = 0.5 : f64, every = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  %r = tcc.relu %e : tensor<4xf32>
  %p2, %s2 = tcc.lookahead_update %p1, %slow, %step, %total {alpha = 0.5 : f64, alpha_schedule = "constant", every = 2 : i64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  %em = tcc.ema_update %ema, %p2, %step {decay = 0.9 : f64, every = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %p2, %s2, %em, %e, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Where an update after the Lookahead still reads the SGD step's weights
// (the EMA of %p1), they must survive the Lookahead: they get scratch, and
// the Lookahead's weights, which then do not read the slot, too (copied to
// the slot at the end).
// CHECK: tcc.fusion_group "multi_tensor_update"
// PLAN: tcc.fusion_group "multi_tensor_update" {tcc.placement = #tcc.placement<scratch = [{{[0-9]+}}, {{[0-9]+}}, -1, -1], state = [-1, -1, 1, 2]>}
func.func @train_step(%p: tensor<4xf32> {tcc.state = "p"}, %slow: tensor<4xf32> {tcc.state = "slow"},
                      %ema: tensor<4xf32> {tcc.state = "ema"},
                      %g: tensor<4xf32> {tcc.role = "input"}, %lr: tensor<f32> {tcc.role = "input"},
                      %step: tensor<i64> {tcc.role = "input"}, %total: tensor<i64> {tcc.role = "input"})
    -> (tensor<4xf32> {tcc.state = "p"}, tensor<4xf32> {tcc.state = "slow"},
        tensor<4xf32> {tcc.state = "ema"}) {
  %p1 = tcc.sgd_update %p, %g, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
  %p2, %s2 = tcc.lookahead_update %p1, %slow, %step, %total {alpha = 0.5 : f64, alpha_schedule = "constant", every = 2 : i64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  %em = tcc.ema_update %ema, %p1, %step {decay = 0.9 : f64, every = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %p2, %s2, %em : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// 16-bit storage: the norm's input is the f32 copy of a bf16 tensor. The
// cast that widens it joins the norm's group (its kernel loads the bf16
// tensor and widens each element, exactly as the cast did), so the f32 copy
// is never stored.
// CHECK: tcc.fusion_group "norm_epilogue" -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xbf16>) {
// CHECK-NEXT: %[[W:.*]] = tcc.cast %arg0 to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
// CHECK-NEXT: tcc.batch_norm %[[W]]
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.cast %{{.*}} to bf16
// CHECK-NEXT: tcc.yield
// PLAN: tcc.fusion_group "norm_epilogue" {tcc.placement
// PLAN-NEXT: tcc.cast %arg0 to f32
func.func @train_step(%x: tensor<4x2x3x3xbf16> {tcc.role = "input"}, %rm: tensor<2xf32> {tcc.role = "input"},
                      %rv: tensor<2xf32> {tcc.role = "input"})
    -> (tensor<4x2x3x3xbf16>, tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = tcc.cast %x to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %w running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
      : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %a = tcc.relu %y : tensor<4x2x3x3xf32>
  %s = tcc.cast %a to bf16 : (tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xbf16>
  return %s, %mean, %invstd : tensor<4x2x3x3xbf16>, tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// The f32 copy is also read outside the group (here, returned): the group
// widens the bf16 tensor itself all the same, with a cast of its own.
// CHECK: %[[COPY:.*]] = tcc.cast %arg0 to f32
// CHECK-NEXT: tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: %[[W:.*]] = tcc.cast %arg0 to f32
// CHECK-NEXT: tcc.batch_norm %[[W]]
// CHECK: return %[[COPY]],
func.func @train_step(%x: tensor<4x2x3x3xbf16> {tcc.role = "input"}, %rm: tensor<2xf32> {tcc.role = "input"},
                      %rv: tensor<2xf32> {tcc.role = "input"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>) {
  %w = tcc.cast %x to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %w running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
      : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %a = tcc.relu %y : tensor<4x2x3x3xf32>
  return %w, %a, %mean : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>
}

// -----

// Where it must not fire: the norm's f32 input is computed (a scale), not
// a widened 16-bit tensor; the scale stays its own kernel, outside.
// CHECK: tcc.scale
// CHECK-NEXT: tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: tcc.batch_norm
func.func @train_step(%x: tensor<4x2x3x3xf32> {tcc.role = "input"}, %rm: tensor<2xf32> {tcc.role = "input"},
                      %rv: tensor<2xf32> {tcc.role = "input"})
    -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>) {
  %w = tcc.scale %x {factor = 2.0 : f64} : tensor<4x2x3x3xf32>
  %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %w running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
      : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %a = tcc.relu %y : tensor<4x2x3x3xf32>
  return %a, %mean : tensor<4x2x3x3xf32>, tensor<1x2xf32>
}

// -----

// The backward's input x, widened from bf16, joins its prologue likewise.
// CHECK: tcc.fusion_group "norm_backward_prologue"
// CHECK-NEXT: tcc.celu_backward
// CHECK-NEXT: %[[W:.*]] = tcc.cast %arg1 to f32 : (tensor<4x2xbf16>) -> tensor<4x2xf32>
// CHECK-NEXT: tcc.batch_norm_backward %{{.*}}, %[[W]]
func.func @train_step(%g: tensor<4x2xf32> {tcc.role = "input"}, %x: tensor<4x2xbf16> {tcc.role = "input"},
                      %a: tensor<4x2xf32> {tcc.role = "input"},
                      %mean: tensor<1x2xf32> {tcc.role = "input"}, %invstd: tensor<1x2xf32> {tcc.role = "input"})
    -> (tensor<4x2xf32>, tensor<2xf32>) {
  %dy = tcc.celu_backward %g, %a {alpha = 1.0 : f64} : tensor<4x2xf32>
  %w = tcc.cast %x to f32 : (tensor<4x2xbf16>) -> tensor<4x2xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %w saved %mean, %invstd {ghost_batch = 0 : i64}
      : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %dx, %dw : tensor<4x2xf32>, tensor<2xf32>
}

// -----

// The cast that alone reads the backward's dx and narrows it to bf16 (the
// convolution's backward reads 16 bits) joins the group last: the kernel
// stores dx narrowed, and the f32 dx never leaves the group.
// CHECK: %[[G:.*]]:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<2xf32>, tensor<2xf32>, tensor<4x2xbf16>) {
// CHECK-NEXT: %[[DY:.*]] = tcc.celu_backward
// CHECK-NEXT: %[[DX:.*]], %[[DW:.*]], %[[DB:.*]] = tcc.batch_norm_backward %[[DY]], %arg1
// CHECK-NEXT: %[[N:.*]] = tcc.cast %[[DX]] to bf16
// CHECK-NEXT: tcc.yield %[[DW]], %[[DB]], %[[N]] : tensor<2xf32>, tensor<2xf32>, tensor<4x2xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#2, %[[G]]#0
func.func @train_step(%g: tensor<4x2xf32> {tcc.role = "input"}, %x: tensor<4x2xf32> {tcc.role = "input"},
                      %a: tensor<4x2xf32> {tcc.role = "input"},
                      %mean: tensor<1x2xf32> {tcc.role = "input"}, %invstd: tensor<1x2xf32> {tcc.role = "input"})
    -> (tensor<4x2xbf16>, tensor<2xf32>) {
  %dy = tcc.celu_backward %g, %a {alpha = 1.0 : f64} : tensor<4x2xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %x saved %mean, %invstd {ghost_batch = 0 : i64}
      : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %n = tcc.cast %dx to bf16 : (tensor<4x2xf32>) -> tensor<4x2xbf16>
  return %n, %dw : tensor<4x2xbf16>, tensor<2xf32>
}

// -----

// Must not take the narrowing cast: dx is also read in f32 (the return);
// nor a cast that converts the layout (its operand NHWC, its result NCHW),
// which writes its elements in another order than it reads them. The
// backward alone with the other cast forms no group.
// CHECK: %[[G:.*]]:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
// CHECK-NEXT: tcc.celu_backward
// CHECK-NEXT: tcc.batch_norm_backward
// CHECK-NEXT: tcc.yield
// CHECK-NEXT: }
// CHECK-NEXT: tcc.cast %[[G]]#0 to bf16
// CHECK: func.func @eval_step(
// CHECK-NOT: fusion_group
// CHECK: tcc.batch_norm_backward
// CHECK-NEXT: tcc.cast
// CHECK-NOT: fusion_group
func.func @train_step(%g: tensor<4x2xf32> {tcc.role = "input"}, %x: tensor<4x2xf32> {tcc.role = "input"},
                      %a: tensor<4x2xf32> {tcc.role = "input"},
                      %mean: tensor<1x2xf32> {tcc.role = "input"}, %invstd: tensor<1x2xf32> {tcc.role = "input"})
    -> (tensor<4x2xbf16>, tensor<4x2xf32>, tensor<2xf32>) {
  %dy = tcc.celu_backward %g, %a {alpha = 1.0 : f64} : tensor<4x2xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %x saved %mean, %invstd {ghost_batch = 0 : i64}
      : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %n = tcc.cast %dx to bf16 : (tensor<4x2xf32>) -> tensor<4x2xbf16>
  return %n, %dx, %dw : tensor<4x2xbf16>, tensor<4x2xf32>, tensor<2xf32>
}
func.func @eval_step(%dy: tensor<1x4x2x2xf32> {tcc.role = "input"}, %x: tensor<1x4x2x2xf32> {tcc.role = "input"},
                     %mean: tensor<1x4xf32> {tcc.role = "input"}, %invstd: tensor<1x4xf32> {tcc.role = "input"})
    -> (tensor<1x4x2x2xbf16>) {
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %x saved %mean, %invstd {ghost_batch = 0 : i64, tcc.channels_last}
      : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>)
  %n = tcc.cast %dx to bf16 : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xbf16>
  return %n : tensor<1x4x2x2xbf16>
}

// -----

// A cast that converts the layout (tcc-channels-last: its operand stored
// NHWC, its result NCHW) reads its elements in another order than it
// writes them: no loop over elements takes it in (unmarked, the four ops
// are one group); the cast and relu after it still fuse.
// CHECK: func.func @train_step(%arg0: tensor<2x5x4x4xf32>
// CHECK-NEXT: %[[H:.*]] = tcc.relu %arg0 {tcc.channels_last}
// CHECK-NEXT: %[[C:.*]] = tcc.cast %[[H]] to bf16 :
// CHECK-NEXT: tcc.fusion_group "elementwise"
// CHECK-NEXT: tcc.cast %[[C]] to f32
// CHECK-NEXT: tcc.relu
func.func @train_step(%x: tensor<2x5x4x4xf32> {tcc.role = "input"}) -> tensor<2x5x4x4xf32> {
  %h = tcc.relu %x {tcc.channels_last} : tensor<2x5x4x4xf32>
  %c = tcc.cast %h to bf16 : (tensor<2x5x4x4xf32>) -> tensor<2x5x4x4xbf16>
  %w = tcc.cast %c to f32 : (tensor<2x5x4x4xbf16>) -> tensor<2x5x4x4xf32>
  %r = tcc.relu %w : tensor<2x5x4x4xf32>
  return %r : tensor<2x5x4x4xf32>
}
// -----

// A chain's operand that an op after the chain's first computes (here the
// widening cast of a 16-bit value, as tcc-widen-16bit writes one for each
// reader) and only the chain reads joins it: the loop loads the 16-bit
// value, and the f32 copy is never written. The residual's widening cast
// that only a norm's epilogue reads joins that group likewise.
// CHECK: tcc.fusion_group "elementwise"
// CHECK-NEXT: tcc.cast %arg0 to f32
// CHECK-NEXT: tcc.cast %arg1 to f32
// CHECK-NEXT: tcc.gelu_backward
// CHECK-NEXT: tcc.yield
// CHECK: tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: tcc.cast %arg1 to f32
// CHECK-NEXT: tcc.batch_norm %arg2
// CHECK-NEXT: tcc.add
// CHECK-NEXT: tcc.yield
func.func @train_step(%g: tensor<4x2x3x3xbf16> {tcc.role = "input"}, %x: tensor<4x2x3x3xbf16> {tcc.role = "input"},
                      %z: tensor<4x2x3x3xf32> {tcc.role = "input"}, %rm: tensor<2xf32> {tcc.role = "input"},
                      %rv: tensor<2xf32> {tcc.role = "input"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>) {
  %gw = tcc.cast %g to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %xw = tcc.cast %x to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %dx = tcc.gelu_backward %gw, %xw : tensor<4x2x3x3xf32>
  %r = tcc.cast %x to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %z running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
      : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %s = tcc.add %y, %r : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>
  return %dx, %s, %mean : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>
}

// -----

// Must not take in a producer that another op reads too: the widened %x
// is also returned, so it stays a kernel of its own (and in memory).
// CHECK: %[[XW:.*]] = tcc.cast %arg1 to f32
// CHECK: tcc.fusion_group "elementwise"
// CHECK-NEXT: tcc.cast %arg0 to f32
// CHECK-NEXT: tcc.gelu_backward %{{.*}}, %[[XW]]
func.func @train_step(%g: tensor<4x2x3x3xbf16> {tcc.role = "input"}, %x: tensor<4x2x3x3xbf16> {tcc.role = "input"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) {
  %gw = tcc.cast %g to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %xw = tcc.cast %x to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %dx = tcc.gelu_backward %gw, %xw : tensor<4x2x3x3xf32>
  return %dx, %xw : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>
}

// -----

// Must not take in what the norm's input is computed from (found by the
// fuzzer): the 16-bit %n is widened for the norm and again for the residual
// add of its epilogue; both casts join, but %n's own cast stays outside,
// because the norm reads its input from memory.
// CHECK: %[[N:.*]] = tcc.cast %arg0 to bf16
// CHECK-NEXT: tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: tcc.cast %[[N]] to f32
// CHECK-NEXT: tcc.batch_norm_inference
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.cast %[[N]] to f32
// CHECK-NEXT: tcc.add
func.func @train_step(%x: tensor<2x4x6x6xf32> {tcc.role = "input"}, %g: tensor<4xf32> {tcc.role = "input"})
    -> tensor<2x4x6x6xf32> {
  %n = tcc.cast %x to bf16 : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xbf16>
  %a = tcc.cast %n to f32 : (tensor<2x4x6x6xbf16>) -> tensor<2x4x6x6xf32>
  %y = tcc.batch_norm_inference %a weight %g bias %g running %g, %g {eps = 1.0e-5 : f64} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %r = tcc.relu %y : tensor<2x4x6x6xf32>
  %b = tcc.cast %n to f32 : (tensor<2x4x6x6xbf16>) -> tensor<2x4x6x6xf32>
  %s = tcc.add %r, %b : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
  return %s : tensor<2x4x6x6xf32>
}
