// RUN: tcc-opt %s -split-input-file -tcc-build-train-step -verify-diagnostics | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-build-train-step -canonicalize -verify-diagnostics | FileCheck %s --check-prefix=CANON

// Small modules in the frontend's form (what `tcc compile --emit=mlir`
// prints, shrunk): @forward, @loss and the recipe become @train_step and
// @eval_step (docs/ir.md).

// SGD with Nesterov momentum. The state is the step counter, the parameters
// in state_dict order, then one momentum buffer per trainable parameter; both
// step functions take it, and @train_step returns each entry's new value.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[IMAGES:[^:]+]]: tensor<4x3xf32> {tcc.role = "input"}
// CHECK-SAME: %[[LABELS:[^:]+]]: tensor<4xi64> {tcc.role = "labels"}
// CHECK-SAME: %[[SPE:[^:]+]]: tensor<i64> {tcc.role = "steps_per_epoch"}
// CHECK-SAME: %[[TOTAL:[^:]+]]: tensor<i64> {tcc.role = "total_steps"}
// CHECK-SAME: %{{[^:]+}}: tensor<i64> {tcc.role = "seed"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "counter", tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {tcc.init = {high = 5.000000e-01 : f64, kind = "uniform", low = -5.000000e-01 : f64}, tcc.kind = "param", tcc.state = "fc.weight", tcc.trainable = true}
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "param", tcc.state = "fc.bias", tcc.trainable = true}
// CHECK-SAME: %[[WBUF:[^:]+]]: tensor<2x3xf32> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "optimizer", tcc.state = "optimizer.fc.weight.momentum_buffer"}
// CHECK-SAME: %[[BBUF:[^:]+]]: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "optimizer", tcc.state = "optimizer.fc.bias.momentum_buffer"})
// CHECK-SAME: -> (tensor<f32> {tcc.role = "loss_sum"}, tensor<i64> {tcc.role = "correct"},
// CHECK-SAME: tensor<i64> {tcc.state = "step"}, tensor<2x3xf32> {tcc.state = "fc.weight"}, tensor<2xf32> {tcc.state = "fc.bias"},
// CHECK-SAME: tensor<2x3xf32> {tcc.state = "optimizer.fc.weight.momentum_buffer"}, tensor<2xf32> {tcc.state = "optimizer.fc.bias.momentum_buffer"})
// CHECK-NOT: tcc.mix_seed
// CHECK: %[[LOGITS:.*]] = tcc.linear %[[IMAGES]], %[[W]], %[[B]]
// CHECK: %[[LOSS:.*]] = tcc.cross_entropy %[[LOGITS]], %[[LABELS]]
// The per-sample losses summed: the mean times the batch.
// CHECK: %[[LOSS_SUM:.*]] = tcc.scale %[[LOSS]] {factor = 4.000000e+00 : f64}
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DLOGITS:.*]] = tcc.cross_entropy_backward %[[ONE]], %[[LOGITS]], %[[LABELS]]
// CHECK: %[[GW:.*]] = tcc.linear_backward_weight %[[DLOGITS]], %[[IMAGES]]
// CHECK: %[[GB:.*]] = tcc.reduce_sum %[[DLOGITS]] {axes = array<i64: 0>}
// CHECK: %[[ALL:.*]] = arith.constant dense<4> : tensor<i64>
// CHECK: %[[CORRECT:.*]] = tcc.count_correct %[[LOGITS]], %[[LABELS]], %[[ALL]]
// CHECK: %[[LR:.*]] = tcc.lr_schedule %[[STEP]], %[[SPE]], %[[TOTAL]] {base_lr = 1.000000e-01 : f64, schedule = #tcc.schedule<type = constant, unit = epoch, count_from = 0, {{.*}}>}
// CHECK: %[[NEW_W:.*]], %[[NEW_WBUF:.*]] = tcc.sgd_update %[[W]], %[[GW]], %[[LR]], %[[STEP]] momentum_buffer %[[WBUF]]
// CHECK-SAME: {dampening = 0.000000e+00 : f64, lr_scale = 1.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 5.000000e-04 : f64}
// CHECK: %[[NEW_B:.*]], %[[NEW_BBUF:.*]] = tcc.sgd_update %[[B]], %[[GB]], %[[LR]], %[[STEP]] momentum_buffer %[[BBUF]]
// CHECK-SAME: nesterov = true
// CHECK: %[[NEXT:.*]] = tcc.increment %[[STEP]] : tensor<i64>
// CHECK: return %[[LOSS_SUM]], %[[CORRECT]], %[[NEXT]], %[[NEW_W]], %[[NEW_B]], %[[NEW_WBUF]], %[[NEW_BBUF]] :

// @eval_step takes the same state (after images, labels and the valid count)
// and returns the number of correct predictions.
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[EIMAGES:[^:]+]]: tensor<4x3xf32> {tcc.role = "input"}
// CHECK-SAME: %[[ELABELS:[^:]+]]: tensor<4xi64> {tcc.role = "labels"}
// CHECK-SAME: %[[VALID:[^:]+]]: tensor<i64> {tcc.role = "valid"}
// CHECK-SAME: %{{[^:]+}}: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[EW:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[EB:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: tcc.state = "optimizer.fc.weight.momentum_buffer"
// CHECK-SAME: tcc.state = "optimizer.fc.bias.momentum_buffer"
// CHECK-SAME: -> (tensor<f32> {tcc.role = "loss_sum"}, tensor<i64> {tcc.role = "correct"})
// CHECK: %[[ELOGITS:.*]] = tcc.linear %[[EIMAGES]], %[[EW]], %[[EB]]
// The test loss: the criterion over the valid rows, summed.
// CHECK: %[[ELOSS:.*]] = tcc.cross_entropy %[[ELOGITS]], %[[ELABELS]], %[[VALID]] {{{.*}}reduction = "sum"}
// CHECK: %[[ECORRECT:.*]] = tcc.count_correct %[[ELOGITS]], %[[ELABELS]], %[[VALID]]
// CHECK: return %[[ELOSS]], %[[ECORRECT]] : tensor<f32>, tensor<i64>
// The frontend's functions are gone.
// CHECK-NOT: func.func @forward
// CHECK-NOT: func.func @loss
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "sgd_nesterov",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0005, momentum = 0.9, dampening = 0.0, nesterov = true, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// SGD without momentum: no momentum buffer in the state or on the update.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight", tcc.trainable = true}
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias", tcc.trainable = true})
// CHECK-SAME: -> (tensor<f32> {tcc.role = "loss_sum"}, tensor<i64> {tcc.role = "correct"}, tensor<i64> {tcc.state = "step"}, tensor<2x3xf32> {tcc.state = "fc.weight"}, tensor<2xf32> {tcc.state = "fc.bias"})
// CHECK-NOT: momentum_buffer
// CHECK: %[[LR:.*]] = tcc.lr_schedule %[[STEP]]
// CHECK: %[[NEW_W:.*]] = tcc.sgd_update %[[W]], %{{.*}}, %[[LR]], %[[STEP]] {dampening = 0.000000e+00 : f64, lr_scale = 1.000000e+00 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-SAME: : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK: %[[NEW_B:.*]] = tcc.sgd_update %[[B]], %{{.*}}, %[[LR]], %[[STEP]] {
// CHECK-SAME: -> tensor<2xf32>
// CHECK: %[[NEXT:.*]] = tcc.increment %[[STEP]]
// CHECK: return %{{.*}}, %{{.*}}, %[[NEXT]], %[[NEW_W]], %[[NEW_B]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT: momentum_buffer
// CHECK: return
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "sgd_plain",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// AdamW: two moments per trainable parameter, zero-initialised, after the
// parameters; one adamw_update per parameter with the recipe's betas and eps.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: %[[WM:[^:]+]]: tensor<2x3xf32> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "optimizer", tcc.state = "optimizer.fc.weight.exp_avg"}
// CHECK-SAME: %[[WV:[^:]+]]: tensor<2x3xf32> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "optimizer", tcc.state = "optimizer.fc.weight.exp_avg_sq"}
// CHECK-SAME: %[[BM:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "optimizer.fc.bias.exp_avg"}
// CHECK-SAME: %[[BV:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "optimizer.fc.bias.exp_avg_sq"})
// CHECK-SAME: tensor<i64> {tcc.state = "step"}, tensor<2x3xf32> {tcc.state = "fc.weight"}, tensor<2xf32> {tcc.state = "fc.bias"},
// CHECK-SAME: tensor<2x3xf32> {tcc.state = "optimizer.fc.weight.exp_avg"}, tensor<2x3xf32> {tcc.state = "optimizer.fc.weight.exp_avg_sq"},
// CHECK-SAME: tensor<2xf32> {tcc.state = "optimizer.fc.bias.exp_avg"}, tensor<2xf32> {tcc.state = "optimizer.fc.bias.exp_avg_sq"})
// CHECK: %[[GW:.*]] = tcc.linear_backward_weight
// CHECK: %[[GB:.*]] = tcc.reduce_sum
// CHECK: %[[LR:.*]] = tcc.lr_schedule %[[STEP]], {{.*}}base_lr = 1.000000e-03 : f64
// CHECK: %[[NW:.*]], %[[NWM:.*]], %[[NWV:.*]] = tcc.adamw_update %[[W]], %[[GW]], %[[LR]], %[[STEP]], %[[WM]], %[[WV]]
// CHECK-SAME: {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr_scale = 1.000000e+00 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK: %[[NB:.*]], %[[NBM:.*]], %[[NBV:.*]] = tcc.adamw_update %[[B]], %[[GB]], %[[LR]], %[[STEP]], %[[BM]], %[[BV]]
// CHECK: %[[NEXT:.*]] = tcc.increment %[[STEP]]
// CHECK: return %{{.*}}, %{{.*}}, %[[NEXT]], %[[NW]], %[[NB]], %[[NWM]], %[[NWV]], %[[NBM]], %[[NBV]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: tcc.state = "optimizer.fc.bias.exp_avg_sq"
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "adamw",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = adamw, lr = 0.001, weight_decay = 0.01, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// LAMB: the same state as AdamW; without an eps in the recipe it is LAMB's
// 1.0e-6 (AdamW's is 1.0e-8).

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: %[[WM:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "optimizer.fc.weight.exp_avg"}
// CHECK-SAME: %[[WV:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "optimizer.fc.weight.exp_avg_sq"}
// CHECK-SAME: %[[BM:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "optimizer.fc.bias.exp_avg"}
// CHECK-SAME: %[[BV:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "optimizer.fc.bias.exp_avg_sq"})
// CHECK: %[[LR:.*]] = tcc.lr_schedule
// CHECK: %[[NW:.*]], %[[NWM:.*]], %[[NWV:.*]] = tcc.lamb_update %[[W]], %{{.*}}, %[[LR]], %[[STEP]], %[[WM]], %[[WV]]
// CHECK-SAME: {beta1 = 9.000000e-01 : f64, beta2 = 0.98999999999999999 : f64, eps = 9.9999999999999995E-7 : f64, lr_scale = 1.000000e+00 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK: %[[NB:.*]], %[[NBM:.*]], %[[NBV:.*]] = tcc.lamb_update %[[B]], %{{.*}}, %[[LR]], %[[STEP]], %[[BM]], %[[BV]]
// CHECK-NOT: tcc.adamw_update
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[NW]], %[[NB]], %[[NWM]], %[[NWV]], %[[NBM]], %[[NBV]] :
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "lamb",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = lamb, lr = 0.01, weight_decay = 0.01, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.99, eps = 1.0e-06>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// A frozen parameter (trainable false) stays in the state but gets no
// gradient, no optimizer state and no update: @train_step returns it as it
// came in.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.kind = "param", tcc.state = "fc.weight", tcc.trainable = false}
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.kind = "param", tcc.state = "fc.bias", tcc.trainable = true}
// CHECK-SAME: %[[BBUF:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "optimizer.fc.bias.momentum_buffer"})
// CHECK-SAME: -> (tensor<f32> {tcc.role = "loss_sum"}, tensor<i64> {tcc.role = "correct"}, tensor<i64> {tcc.state = "step"}, tensor<2x3xf32> {tcc.state = "fc.weight"}, tensor<2xf32> {tcc.state = "fc.bias"}, tensor<2xf32> {tcc.state = "optimizer.fc.bias.momentum_buffer"})
// CHECK-NOT: tcc.sgd_update %[[W]]
// CHECK: %[[NB:.*]], %[[NBBUF:.*]] = tcc.sgd_update %[[B]], %{{.*}}, %{{.*}}, %[[STEP]] momentum_buffer %[[BBUF]]
// CHECK-NOT: tcc.sgd_update
// CHECK: %[[NEXT:.*]] = tcc.increment %[[STEP]]
// CHECK: return %{{.*}}, %{{.*}}, %[[NEXT]], %[[W]], %[[NB]], %[[NBBUF]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: tcc.state = "fc.weight", tcc.trainable = false
// CHECK-NOT: optimizer.fc.weight
// CHECK: return
// The linear's rule also builds the frozen weight's gradient; nothing uses
// it, so it is gone after canonicalization (the input's too). The bias's stays.
// CANON-LABEL: tcc.model = "frozen"
// CANON: func.func @train_step(
// CANON-NOT: tcc.linear_backward_weight
// CANON-NOT: tcc.linear_backward_data
// CANON: tcc.reduce_sum
// CANON-NOT: tcc.linear_backward_weight
// CANON-NOT: tcc.linear_backward_data
// CANON: return
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "frozen",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.9, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = false, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// Parameter groups: the frontend writes each parameter's scales
// (tcc.lr_scale, tcc.weight_decay_scale); the update op gets the lr scale
// and the already scaled weight decay (0.01 / 64 here).

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK: tcc.adamw_update %[[W]], {{.*}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr_scale = 1.000000e+00 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK: tcc.adamw_update %[[B]], {{.*}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr_scale = 6.400000e+01 : f64, weight_decay = 1.562500e-04 : f64}
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "groups",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = adamw, lr = 0.001, weight_decay = 0.01, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 64.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 0.015625 : f64})
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

// -----

// grad_clip_norm: one global norm over every gradient, one clip coefficient,
// and every gradient scaled by it before its update.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-DAG: %[[GW:.*]] = tcc.linear_backward_weight
// CHECK-DAG: %[[GB:.*]] = tcc.reduce_sum
// CHECK: %[[NORM:.*]] = tcc.global_norm
// CHECK-SAME: (tensor<{{2x3xf32|2xf32}}>, tensor<{{2x3xf32|2xf32}}>) -> tensor<f32>
// CHECK-NEXT: %[[COEF:.*]] = tcc.clip_coefficient %[[NORM]] {max_norm = 2.500000e-01 : f64} : tensor<f32>
// CHECK-DAG: %[[CGW:.*]] = tcc.scale_by %[[GW]], %[[COEF]]
// CHECK-DAG: %[[CGB:.*]] = tcc.scale_by %[[GB]], %[[COEF]]
// CHECK: %[[LR:.*]] = tcc.lr_schedule
// CHECK: tcc.sgd_update %[[W]], %[[CGW]], %[[LR]]
// CHECK: tcc.sgd_update %[[B]], %[[CGB]], %[[LR]]
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "clip",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, grad_clip_norm = 0.25>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// accumulate = 2 with a mean loss: one tcc.micro_batches loop over the
// 2 x 4 images (the model appears once, whatever accumulate is). Its body
// runs the forward and backward pass on a slice of 4, scales the loss
// gradient by 1/2 (the step equals one on the effective batch of 8), and
// yields the gradients, the loss sum and the correct count, which the loop
// sums over the micro-batches.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[IMAGES:[^:]+]]: tensor<8x3xf32> {tcc.role = "input"}
// CHECK-SAME: %[[LABELS:[^:]+]]: tensor<8xi64> {tcc.role = "labels"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK: %[[SUMS:.*]]:4 = tcc.micro_batches 2(%[[IMAGES]], %[[LABELS]] : tensor<8x3xf32>, tensor<8xi64>) {dropout_streams = 0 : i64} -> (tensor<2x3xf32>, tensor<2xf32>, tensor<f32>, tensor<i64>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x3xf32>, %[[L:.*]]: tensor<4xi64>):
// CHECK-NEXT: %[[Y:.*]] = tcc.linear %[[X]], %[[W]], %[[B]]
// CHECK-NEXT: %[[LOSS:.*]] = tcc.cross_entropy %[[Y]], %[[L]]
// CHECK-NEXT: %[[SUM:.*]] = tcc.scale %[[LOSS]] {factor = 4.000000e+00 : f64}
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SEED:.*]] = tcc.scale %[[ONE]] {factor = 5.000000e-01 : f64} : tensor<f32>
// CHECK: %[[D:.*]] = tcc.cross_entropy_backward %[[SEED]], %[[Y]], %[[L]]
// CHECK: %[[GW:.*]] = tcc.linear_backward_weight %[[D]], %[[X]]
// CHECK: %[[GB:.*]] = tcc.reduce_sum %[[D]]
// CHECK: %[[FOUR:.*]] = arith.constant dense<4> : tensor<i64>
// CHECK: %[[CORRECT:.*]] = tcc.count_correct %[[Y]], %[[L]], %[[FOUR]]
// CHECK: tcc.yield %[[GW]], %[[GB]], %[[SUM]], %[[CORRECT]]
// CHECK-NEXT: }
// CHECK-NOT: tcc.linear
// CHECK: tcc.sgd_update %[[W]], %[[SUMS]]#0,
// CHECK: tcc.sgd_update %[[B]], %[[SUMS]]#1,
// CHECK: return %[[SUMS]]#2, %[[SUMS]]#3,
// Evaluation is not accumulated: eval.batch_size images at once.
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: tensor<4x3xf32> {tcc.role = "input"}
// CHECK-NOT: tcc.slice
// CHECK: return
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "accumulate",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 2, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// accumulate = 2 with a sum loss: the sum over the effective batch is the
// sum of the halves' sums, so nothing is scaled.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<8x3xf32> {tcc.role = "input"}
// CHECK: %[[SUMS:.*]]:3 = tcc.micro_batches 2
// CHECK: %[[LOSS:.*]] = tcc.cross_entropy {{.*}}reduction = "sum"
// CHECK-NOT: tcc.scale
// CHECK: tcc.yield %{{.*}}, %[[LOSS]], %{{.*}} :
// CHECK-NOT: tcc.scale
// CHECK: return %[[SUMS]]#1,
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "accumulate_sum",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 2, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "sum"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// EMA: a copy of every parameter and buffer (ema.NAME, initialised from it)
// after the optimizer state, moved towards the freshly updated parameters;
// @eval_step evaluates the EMA weights, not the trained ones.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: %[[EW:[^:]+]]: tensor<2x3xf32> {tcc.init = {kind = "copy", source = "fc.weight"}, tcc.kind = "ema", tcc.state = "ema.fc.weight"}
// CHECK-SAME: %[[EB:[^:]+]]: tensor<2xf32> {tcc.init = {kind = "copy", source = "fc.bias"}, tcc.kind = "ema", tcc.state = "ema.fc.bias"})
// CHECK-SAME: tensor<2x3xf32> {tcc.state = "ema.fc.weight"}, tensor<2xf32> {tcc.state = "ema.fc.bias"})
// CHECK: %[[NW:.*]] = tcc.sgd_update %[[W]]
// CHECK: %[[NB:.*]] = tcc.sgd_update %[[B]]
// CHECK: %[[NEW:.*]] = tcc.ema_update %[[EW]], %[[NW]], %[[STEP]] {decay = 0.98999999999999999 : f64, every = 5 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK: %[[NEB:.*]] = tcc.ema_update %[[EB]], %[[NB]], %[[STEP]] {decay = 0.98999999999999999 : f64, every = 5 : i64}
// CHECK: %[[NEXT:.*]] = tcc.increment %[[STEP]]
// CHECK: return %{{.*}}, %{{.*}}, %[[NEXT]], %[[NW]], %[[NB]], %[[NEW]], %[[NEB]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[IMAGES:[^:]+]]: tensor<4x3xf32> {tcc.role = "input"}
// CHECK-SAME: %[[EVAL_EW:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "ema.fc.weight"}
// CHECK-SAME: %[[EVAL_EB:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "ema.fc.bias"})
// CHECK: tcc.linear %[[IMAGES]], %[[EVAL_EW]], %[[EVAL_EB]]
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "ema",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false,
                     ema = <decay = 0.99, every = 5, per_epoch = false>>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// Lookahead: slow weights (lookahead.NAME, a copy of the parameter) for each
// trainable parameter only; the update takes the optimizer's new weights and
// returns both the new fast and the new slow weights.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[TOTAL:[^:]+]]: tensor<i64> {tcc.role = "total_steps"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight", tcc.trainable = true}
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias", tcc.trainable = false}
// CHECK-SAME: %[[SW:[^:]+]]: tensor<2x3xf32> {tcc.init = {kind = "copy", source = "fc.weight"}, tcc.kind = "lookahead", tcc.state = "lookahead.fc.weight"})
// CHECK-SAME: tensor<2x3xf32> {tcc.state = "lookahead.fc.weight"})
// CHECK: %[[NW:.*]] = tcc.sgd_update %[[W]]
// CHECK: %[[FAST:.*]], %[[SLOW:.*]] = tcc.lookahead_update %[[NW]], %[[SW]], %[[STEP]], %[[TOTAL]] {alpha = 5.000000e-01 : f64, alpha_schedule = "cubic", every = 5 : i64}
// CHECK-SAME: : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NOT: tcc.lookahead_update
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[FAST]], %[[B]], %[[SLOW]] :
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "lookahead",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08,
                       lookahead = <every = 5, alpha = 0.5, alpha_schedule = cubic, buffers = false, copy_back = false>>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.trainable = false, tcc.weight_decay_scale = 1.0 : f64})
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

// -----

// Batch norm: the running statistics are buffers in the state; the training
// step returns batch_norm's new ones as their new value, the evaluation
// step normalises with them (batch_norm_inference) and updates nothing.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[G:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.weight"
// CHECK-SAME: %[[BETA:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.bias"
// CHECK-SAME: %[[MEAN:[^:]+]]: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.kind = "buffer", tcc.state = "bn.running_mean"}
// CHECK-SAME: %[[VAR:[^:]+]]: tensor<2xf32> {tcc.init = {kind = "constant", value = 1.000000e+00 : f64}, tcc.kind = "buffer", tcc.state = "bn.running_var"})
// CHECK-SAME: tensor<2xf32> {tcc.state = "bn.running_mean"}, tensor<2xf32> {tcc.state = "bn.running_var"})
// CHECK: %[[Y:.*]], %[[SMEAN:.*]], %[[SINVSTD:.*]], %[[NMEAN:.*]], %[[NVAR:.*]] = tcc.batch_norm %{{.*}} weight %[[G]] bias %[[BETA]] running %[[MEAN]], %[[VAR]] {eps = 1.000000e-05 : f64, ghost_batch = 0 : i64, momentum = 1.000000e-01 : f64}
// CHECK: tcc.batch_norm_backward %{{.*}}, %{{.*}} weight %[[G]] saved %[[SMEAN]], %[[SINVSTD]]
// CHECK-NOT: tcc.sgd_update %[[MEAN]]
// CHECK-NOT: tcc.sgd_update %[[VAR]]
// CHECK: return {{.*}}, %[[NMEAN]], %[[NVAR]] :
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[EG:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.weight"
// CHECK-SAME: %[[EBETA:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.bias"
// CHECK-SAME: %[[EMEAN:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.running_mean"
// CHECK-SAME: %[[EVAR:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.running_var"
// CHECK-NOT: tcc.batch_norm %
// CHECK: tcc.batch_norm_inference %{{.*}} weight %[[EG]] bias %[[EBETA]] running %[[EMEAN]], %[[EVAR]] {eps = 1.000000e-05 : f64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: tcc.batch_norm %
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<i64>
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "bn",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %g: tensor<2xf32> {tcc.init = {kind = "constant", value = 1.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "bn.weight",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %beta: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                           tcc.lr_scale = 1.0 : f64, tcc.param = "bn.bias",
                                           tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %mean: tensor<2xf32> {tcc.buffer = "bn.running_mean", tcc.init = {kind = "constant", value = 0.0 : f64}},
                     %var: tensor<2xf32> {tcc.buffer = "bn.running_var", tcc.init = {kind = "constant", value = 1.0 : f64}})
      -> (tensor<4x2xf32> {tcc.role = "output"}, tensor<2xf32> {tcc.buffer = "bn.running_mean"},
          tensor<2xf32> {tcc.buffer = "bn.running_var"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    %y, %sm, %si, %nm, %nv = tcc.batch_norm %0 weight %g bias %beta running %mean, %var
        {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64}
        : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
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

// Batch norm with accumulate = 2: the running statistics are carried
// through the loop, so each micro-batch's batch_norm starts from the
// previous one's, and the step returns the last.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[MEAN:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.running_mean"
// CHECK-SAME: %[[VAR:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "bn.running_var"
// CHECK: %[[LOOP:.*]]:5 = tcc.micro_batches 2(%{{.*}}, %{{.*}} : tensor<8x3xf32>, tensor<8xi64>) carry(%[[MEAN]], %[[VAR]] : tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4xi64>, %[[M:.*]]: tensor<2xf32>, %[[V:.*]]: tensor<2xf32>):
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[M1:.*]], %[[V1:.*]] = tcc.batch_norm %{{.*}} running %[[M]], %[[V]]
// CHECK: tcc.yield %[[M1]], %[[V1]],
// CHECK: return {{.*}}, %[[LOOP]]#0, %[[LOOP]]#1 :
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "bn_accumulate",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 2, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %mean: tensor<2xf32> {tcc.buffer = "bn.running_mean", tcc.init = {kind = "constant", value = 0.0 : f64}},
                     %var: tensor<2xf32> {tcc.buffer = "bn.running_var", tcc.init = {kind = "constant", value = 1.0 : f64}})
      -> (tensor<4x2xf32> {tcc.role = "output"}, tensor<2xf32> {tcc.buffer = "bn.running_mean"},
          tensor<2xf32> {tcc.buffer = "bn.running_var"}) {
    %0 = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    %y, %sm, %si, %nm, %nv = tcc.batch_norm %0 running %mean, %var
        {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64}
        : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
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

// Eval TTA "flip": the logits of the images and of their mirror, averaged.
// The eval batch (8) differs from the training batch (4): the reshape's
// batch dim follows its input.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<4x1x2x2xf32> {tcc.role = "input"}
// CHECK-NOT: tcc.flip
// CHECK: tcc.reshape %{{.*}} {shape = array<i64: 4, 4>} : (tensor<4x1x2x2xf32>) -> tensor<4x4xf32>
// CHECK-NOT: tcc.flip
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[IMAGES:[^:]+]]: tensor<8x1x2x2xf32> {tcc.role = "input"}
// CHECK-SAME: %[[LABELS:[^:]+]]: tensor<8xi64> {tcc.role = "labels"}
// CHECK-SAME: %[[VALID:[^:]+]]: tensor<i64> {tcc.role = "valid"}
// CHECK: %[[MIRROR:.*]] = tcc.flip %[[IMAGES]] : tensor<8x1x2x2xf32>
// CHECK: %[[X0:.*]] = tcc.reshape %[[IMAGES]] {shape = array<i64: 8, 4>} : (tensor<8x1x2x2xf32>) -> tensor<8x4xf32>
// CHECK: %[[Y0:.*]] = tcc.linear %[[X0]], {{.*}} -> tensor<8x2xf32>
// CHECK: %[[X1:.*]] = tcc.reshape %[[MIRROR]] {shape = array<i64: 8, 4>}
// CHECK: %[[Y1:.*]] = tcc.linear %[[X1]],
// CHECK: %[[SUM:.*]] = tcc.add %[[Y0]], %[[Y1]] : tensor<8x2xf32>, tensor<8x2xf32>
// CHECK: %[[MEAN:.*]] = tcc.scale %[[SUM]] {factor = 5.000000e-01 : f64} : tensor<8x2xf32>
// The test loss is taken on the averaged logits.
// CHECK: %[[LOSS:.*]] = tcc.cross_entropy %[[MEAN]], %[[LABELS]], %[[VALID]]
// CHECK: %[[CORRECT:.*]] = tcc.count_correct %[[MEAN]], %[[LABELS]], %[[VALID]]
// CHECK-NOT: tcc.shift
// CHECK: return %[[LOSS]], %[[CORRECT]]
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 1, 2, 2>, tcc.model = "tta_flip",
                   tcc.eval = #tcc.eval<tta_flip = true, tta_translate = false, translate = 2, batch_size = 8>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x1x2x2xf32> {tcc.role = "input"},
                     %w: tensor<2x4xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.reshape %x {shape = array<i64: 4, 4>} : (tensor<4x1x2x2xf32>) -> tensor<4x4xf32>
    %1 = tcc.linear %0, %w : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<4x2xf32>
    return %1 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Eval TTA "flip" and "translate": the images shifted by (t, t) and
// (-t, -t), each of the three mirrored too; the six views' logits summed
// and scaled to an average. (Their weights are checked in
// tcc-build-train-step-tta-weights.mlir.)

// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[IMAGES:[^:]+]]: tensor<4x1x4x4xf32> {tcc.role = "input"}
// CHECK-SAME: %[[LABELS:[^:]+]]: tensor<4xi64> {tcc.role = "labels"}
// CHECK-SAME: %[[VALID:[^:]+]]: tensor<i64> {tcc.role = "valid"}
// CHECK-DAG: %[[UP:.*]] = tcc.shift %[[IMAGES]] {dx = 1 : i64, dy = 1 : i64} : tensor<4x1x4x4xf32>
// CHECK-DAG: %[[DOWN:.*]] = tcc.shift %[[IMAGES]] {dx = -1 : i64, dy = -1 : i64} : tensor<4x1x4x4xf32>
// CHECK-DAG: %[[M0:.*]] = tcc.flip %[[IMAGES]] : tensor<4x1x4x4xf32>
// CHECK-DAG: %[[M1:.*]] = tcc.flip %[[UP]] : tensor<4x1x4x4xf32>
// CHECK-DAG: %[[M2:.*]] = tcc.flip %[[DOWN]] : tensor<4x1x4x4xf32>
// CHECK-DAG: tcc.flatten %[[IMAGES]] :
// CHECK-DAG: tcc.flatten %[[UP]] :
// CHECK-DAG: tcc.flatten %[[DOWN]] :
// CHECK-DAG: tcc.flatten %[[M0]] :
// CHECK-DAG: tcc.flatten %[[M1]] :
// CHECK-DAG: tcc.flatten %[[M2]] :
// The weighted sum of the groups' means (weights: tcc-build-train-step-tta-weights.mlir).
// CHECK: %[[CORRECT:.*]] = tcc.count_correct %{{.*}}, %[[LABELS]], %[[VALID]]
// CHECK-NEXT: return %{{.*}}, %[[CORRECT]]
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 1, 4, 4>, tcc.model = "tta_flip_translate",
                   tcc.eval = #tcc.eval<tta_flip = true, tta_translate = true, translate = 1, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x1x4x4xf32> {tcc.role = "input"},
                     %w: tensor<2x16xf32> {tcc.init = {high = 0.25 : f64, kind = "uniform", low = -0.25 : f64},
                                           tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                           tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.flatten %x : (tensor<4x1x4x4xf32>) -> tensor<4x16xf32>
    %1 = tcc.linear %0, %w : (tensor<4x16xf32>, tensor<2x16xf32>) -> tensor<4x2xf32>
    return %1 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Dropout: @forward's seed argument becomes a per-step seed mixed from the
// run's seed and the step counter; the backward pass replays the same mask.
// Evaluation has no dropout.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[SEED:[^:]+]]: tensor<i64> {tcc.role = "seed"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-NOT: tcc.role = "seed"
// CHECK: %[[MIXED:.*]] = tcc.mix_seed %[[SEED]], %[[STEP]] : tensor<i64>
// CHECK: %[[H:.*]] = tcc.linear
// CHECK: %[[DROPPED:.*]] = tcc.dropout %[[H]], %[[MIXED]] {p = 2.500000e-01 : f64, stream = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<4x3xf32>
// CHECK: tcc.cross_entropy_backward
// CHECK: %[[DH:.*]] = tcc.linear_backward_data
// CHECK: tcc.dropout %[[DH]], %[[MIXED]] {p = 2.500000e-01 : f64, stream = 0 : i64}
// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT: tcc.dropout
// CHECK-NOT: tcc.mix_seed
// CHECK: tcc.count_correct
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "dropout",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"}, %seed: tensor<i64> {tcc.role = "seed"},
                     %w1: tensor<3x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                           tcc.lr_scale = 1.0 : f64, tcc.param = "fc1.weight",
                                           tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %w2: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                           tcc.lr_scale = 1.0 : f64, tcc.param = "fc2.weight",
                                           tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<4x2xf32> {tcc.role = "output"}) {
    %0 = tcc.linear %x, %w1 : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
    %1 = tcc.dropout %0, %seed {p = 0.25 : f64, stream = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<4x3xf32>
    %2 = tcc.linear %1, %w2 : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %2 : tensor<4x2xf32>
  }
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Not the frontend's form: no @forward.

// CHECK-NOT: func.func @train_step
// expected-error @+1 {{needs func @forward, func @loss and the tcc.train (#tcc.train) and tcc.eval (#tcc.eval) attributes that the frontend writes}}
module attributes {tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @loss(%out: tensor<4x2xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// No recipe: no tcc.train.

// expected-error @+1 {{needs func @forward, func @loss and the tcc.train (#tcc.train) and tcc.eval (#tcc.eval) attributes that the frontend writes}}
module attributes {tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.param = "fc.weight", tcc.trainable = true})
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

// Already built: a module with @train_step but no @forward is left alone
// with the same error (the pass does not run twice).

// expected-error @+1 {{needs func @forward}}
module attributes {tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @train_step(%x: tensor<4x3xf32> {tcc.role = "input"}) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
