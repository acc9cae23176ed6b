// RUN: tcc-opt %s -split-input-file -tcc-build-train-step | FileCheck %s

// fp16-mixed's dynamic loss scaling, as torch.amp.GradScaler does it: the
// state gains amp.loss_scale (starting at init_scale), amp.growth_tracker and
// amp.optimizer_steps; the loss is scaled before autodiff, the gradients
// unscaled by the reciprocal before clipping, a step with an inf or nan
// gradient skipped by the SGD update (which counts the optimizer's own
// applied steps), while the schedule and EMA go by the step counter; then
// the scale is updated and the counters advance.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[BUF:[^:]+]]: tensor<2x3xf32> {{[^%]*}}tcc.state = "optimizer.fc.weight.momentum_buffer"}
// CHECK-SAME: %[[EMA:[^:]+]]: tensor<2x3xf32> {{[^%]*}}tcc.state = "ema.fc.weight"}
// CHECK-SAME: %[[SCALE:[^:]+]]: tensor<f32> {tcc.init = {kind = "constant", value = 1.024000e+03 : f64}, tcc.kind = "amp", tcc.state = "amp.loss_scale"}
// CHECK-SAME: %[[TRACKER:[^:]+]]: tensor<i64> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "amp", tcc.state = "amp.growth_tracker"}
// CHECK-SAME: %[[APPLIED:[^:]+]]: tensor<i64> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "amp", tcc.state = "amp.optimizer_steps"})
// CHECK: %[[LOSS:.*]] = tcc.cross_entropy
// CHECK: tcc.scale_by %[[LOSS]], %[[SCALE]]
// The gradient of the scaled loss, the scale (1 times it), seeds autodiff.
// CHECK: %[[SEED:.*]] = tcc.scale_by %{{.*}}, %[[SCALE]]
// CHECK: tcc.cross_entropy_backward %[[SEED]]
// CHECK: %[[GRAD:.*]] = tcc.linear_backward_weight
// CHECK: %[[INV:.*]] = tcc.reciprocal %[[SCALE]] : tensor<f32>
// CHECK: %[[UNSCALED:.*]] = tcc.scale_by %[[GRAD]], %[[INV]]
// CHECK: %[[FOUND:.*]] = tcc.found_non_finite %[[UNSCALED]] : (tensor<2x3xf32>) -> tensor<f32>
// CHECK: %[[NORM:.*]] = tcc.global_norm %[[UNSCALED]]
// CHECK: %[[COEF:.*]] = tcc.clip_coefficient %[[NORM]]
// CHECK: %[[CLIPPED:.*]] = tcc.scale_by %[[UNSCALED]], %[[COEF]]
// CHECK: %[[LR:.*]] = tcc.lr_schedule %[[STEP]]
// CHECK: %[[NEW_W:.*]], %[[NEW_BUF:.*]] = tcc.sgd_update %[[W]], %[[CLIPPED]], %[[LR]], %[[APPLIED]] momentum_buffer %[[BUF]] skip %[[FOUND]]
// CHECK: %[[NEW_EMA:.*]] = tcc.ema_update %[[EMA]], %[[NEW_W]], %[[STEP]]
// CHECK: %[[NEW_SCALE:.*]], %[[NEW_TRACKER:.*]] = tcc.update_loss_scale %[[SCALE]], %[[TRACKER]], %[[FOUND]] {backoff_factor = 2.500000e-01 : f64, growth_factor = 4.000000e+00 : f64, growth_interval = 7 : i64}
// CHECK: %[[NEW_APPLIED:.*]] = tcc.increment %[[APPLIED]] skip %[[FOUND]] : tensor<i64>
// CHECK: %[[NEW_STEP:.*]] = tcc.increment %[[STEP]] : tensor<i64>
// CHECK: return %{{.*}}, %{{.*}}, %[[NEW_STEP]], %[[NEW_W]], %[[NEW_BUF]], %[[NEW_EMA]], %[[NEW_SCALE]], %[[NEW_TRACKER]], %[[NEW_APPLIED]] :
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "fp16",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.9, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp16, storage = mixed>, accumulate = 1, deterministic = false,
                     loss_scale = <init_scale = 1024.0, growth_factor = 4.0, backoff_factor = 0.25, growth_interval = 7>,
                     ema = <decay = 0.9, every = 1, per_epoch = false>, grad_clip_norm = 1.0>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// AdamW: its bias correction counts the applied steps too, and it skips.
// Without loss_scale (bf16-mixed, fp32) there is none of it.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[APPLIED2:[^:]+]]: tensor<i64> {{[^%]*}}tcc.state = "amp.optimizer_steps"})
// CHECK: %[[FOUND2:.*]] = tcc.found_non_finite
// CHECK: tcc.adamw_update %{{.*}}, %{{.*}}, %{{.*}}, %[[APPLIED2]], %{{.*}}, %{{.*}} skip %[[FOUND2]]
// CHECK: tcc.update_loss_scale {{.*}} {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64}
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "fp16_adamw",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = adamw, lr = 0.001, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp16, storage = mixed>, accumulate = 1, deterministic = false,
                     loss_scale = <init_scale = 65536.0, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000>>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: amp.
// CHECK-NOT: tcc.found_non_finite
// CHECK-NOT: skip
// CHECK: return
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "bf16",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = bf16, storage = mixed>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}
