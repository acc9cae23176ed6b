// RUN: tcc-opt %s -split-input-file -tcc-build-train-step -canonicalize -tcc-plan-memory | FileCheck %s

// The memory plan of small models, through the compile pipeline
// (tcc-compile-pipeline). Hand-written step functions, for the cases the
// pipeline never builds, are in tcc-plan-memory-hand-written.mlir.

// SGD with momentum. State arena, 64-byte aligned: step (8 B) at 0,
// fc.weight (72 B) at 64, fc.bias (24 B) at 192, their momentum buffers at 256
// and 384; 448 bytes in all.
// CHECK: module attributes {{.*}}tcc.model = "sgd", tcc.state_arena = #tcc.state_arena<bytes = 448, offsets = [0, 64, 192, 256, 384]>

// Scratch: first fit over live ranges in schedule order. The logits (96 B)
// at 0 live until count_correct; the loss at 128 dies at the scale, an
// elementwise op, so the loss sum (returned) goes in place of it; the
// logits' gradient goes above it to 192, and so on; count_correct reuses
// 192 once the logits' gradient is dead.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 512>}
// CHECK: %[[LOGITS:.*]] = tcc.linear {{.*}}tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[LOSS:.*]] = tcc.cross_entropy %[[LOGITS]], {{.*}}tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: %[[LOSS_SUM:.*]] = tcc.scale %[[LOSS]] {{.*}}tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: %[[DLOGITS:.*]] = tcc.cross_entropy_backward {{.*}}tcc.placement = #tcc.placement<scratch = [192]>}
// CHECK: %[[GW:.*]] = tcc.linear_backward_weight %[[DLOGITS]], {{.*}}tcc.placement = #tcc.placement<scratch = [320]>}
// CHECK: %[[GB:.*]] = tcc.reduce_sum %[[DLOGITS]] {{.*}}tcc.placement = #tcc.placement<scratch = [448]>}
// CHECK: %[[CORRECT:.*]] = tcc.count_correct %[[LOGITS]], {{.*}}tcc.placement = #tcc.placement<scratch = [192]>}
// CHECK: %[[LR:.*]] = tcc.lr_schedule {{.*}}tcc.placement = #tcc.placement<scratch = [0]>}
// The updates are in place: each reads its state slots last.
// CHECK: tcc.sgd_update %{{.*}}, %[[GW]], %[[LR]], {{.*}}tcc.placement = #tcc.placement<scratch = [-1, -1], state = [1, 3]>
// CHECK: tcc.sgd_update %{{.*}}, %[[GB]], %[[LR]], {{.*}}tcc.placement = #tcc.placement<scratch = [-1, -1], state = [2, 4]>
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>} : tensor<i64>
// Constants get no memory.
// CHECK-NOT: arith.constant {{.*}}tcc.placement
// CHECK: return %[[LOSS_SUM]], %[[CORRECT]],
// @eval_step: the same state arena, its own scratch; nothing in place.
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: tcc.linear {{.*}}tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: tcc.cross_entropy {{.*}}tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: tcc.count_correct {{.*}}tcc.placement = #tcc.placement<scratch = [192]>}
// CHECK-NOT: state = [
// CHECK: return
module attributes {tcc.classes = 6 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "sgd",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.9, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<6x3xf32> {tcc.param = "fc.weight", tcc.trainable = true},
                     %b: tensor<6xf32> {tcc.param = "fc.bias", tcc.trainable = true})
      -> (tensor<4x6xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w, %b : (tensor<4x3xf32>, tensor<6x3xf32>, tensor<6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
  func.func @loss(%out: tensor<4x6xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// AdamW and batch norm: adamw_update writes the parameter and both moments
// in place; batch_norm writes its new running statistics (results 3 and 4)
// in place and its other results (live at the same time) to three
// different scratch offsets. The frozen bn.weight is returned as it came.
// CHECK: module attributes {{.*}}tcc.model = "adamw_bn", tcc.state_arena = #tcc.state_arena<bytes = 448, offsets = [0, 64, 128, 192, 256, 320, 384]>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[BN_WEIGHT:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.weight"
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 576>}
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}}, %[[MEAN:.*]], %[[VAR:.*]] = tcc.batch_norm
// CHECK-SAME: tcc.placement = #tcc.placement<scratch = [64, 128, 192, -1, -1], state = [-1, -1, -1, 3, 4]>
// CHECK: tcc.batch_norm_backward {{.*}}tcc.placement = #tcc.placement<scratch = [384, 448, 512]>
// CHECK: %[[P:.*]], %[[M:.*]], %[[V:.*]] = tcc.adamw_update
// CHECK-SAME: tcc.placement = #tcc.placement<scratch = [-1, -1, -1], state = [1, 5, 6]>
// CHECK: %[[STEP:.*]] = tcc.increment {{.*}}state = [0]>
// CHECK: return %{{.*}}, %{{.*}}, %[[STEP]], %[[P]], %[[BN_WEIGHT]], %[[MEAN]], %[[VAR]], %[[M]], %[[V]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK: tcc.batch_norm_inference {{.*}}tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK-NOT: state = [
// CHECK: return
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "adamw_bn",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = adamw, lr = 0.001, weight_decay = 0.01, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.param = "fc.weight", tcc.trainable = true},
                     %g: tensor<2xf32> {tcc.param = "bn.weight", tcc.trainable = false},
                     %mean: tensor<2xf32> {tcc.buffer = "bn.running_mean"},
                     %var: tensor<2xf32> {tcc.buffer = "bn.running_var"})
      -> (tensor<4x2xf32> {tcc.role = "output"}, tensor<2xf32> {tcc.buffer = "bn.running_mean"},
          tensor<2xf32> {tcc.buffer = "bn.running_var"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    %y, %sm, %si, %nm, %nv = tcc.batch_norm %0 weight %g running %mean, %var
        {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64}
        : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
        -> (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
    return %y, %nm, %nv : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Lookahead and EMA: the slow weights and the EMA copies are updated in
// place. The SGD result is not state (Lookahead's fast result is), but only
// the Lookahead that overwrites it in the weight's slot reads it: it is
// written in the slot, and Lookahead's fast result over it (the EMA reads
// that afterwards, from the slot), so the chain needs no scratch and no
// copy at the end. The EMA of the frozen bias reads the bias itself.
// CHECK: module attributes {{.*}}tcc.model = "ema_lookahead", tcc.state_arena = #tcc.state_arena<bytes = 384, offsets = [0, 64, 128, 192, 256, 320]>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: %[[SLOW:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "lookahead.fc.weight"
// CHECK-SAME: %[[EW:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "ema.fc.weight"
// CHECK-SAME: %[[EB:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "ema.fc.bias"
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: %[[NEW:.*]] = tcc.sgd_update %[[W]], {{.*}}tcc.placement = #tcc.placement<scratch = [-1], state = [1]>
// CHECK-SAME: : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK: %[[FAST:.*]], %[[NEW_SLOW:.*]] = tcc.lookahead_update %[[NEW]], %[[SLOW]], {{.*}}tcc.placement = #tcc.placement<scratch = [-1, -1], state = [1, 3]>}
// CHECK: %[[NEW_EW:.*]] = tcc.ema_update %[[EW]], %[[FAST]], %[[STEP]] {{.*}}tcc.placement = #tcc.placement<scratch = [-1], state = [4]>}
// CHECK: %[[NEW_EB:.*]] = tcc.ema_update %[[EB]], %[[B]], %[[STEP]] {{.*}}tcc.placement = #tcc.placement<scratch = [-1], state = [5]>}
// CHECK: %[[NEXT:.*]] = tcc.increment %[[STEP]] {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>}
// CHECK: return %{{.*}}, %{{.*}}, %[[NEXT]], %[[FAST]], %[[B]], %[[NEW_SLOW]], %[[NEW_EW]], %[[NEW_EB]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 192>}
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "ema_lookahead",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08,
                       lookahead = <every = 5, alpha = 0.5, alpha_schedule = constant, buffers = false, copy_back = false>>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false,
                     ema = <decay = 0.99, every = 1, per_epoch = false>>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.param = "fc.weight", tcc.trainable = true},
                     %b: tensor<2xf32> {tcc.param = "fc.bias", tcc.trainable = false})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w, %b : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}
