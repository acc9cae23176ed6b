// The pipeline's canonicalize drops the backward work that only the frozen
// gradients needed (dead code once they are not differentiated).
// RUN: tcc-opt %s -split-input-file -tcc-frozen-step -canonicalize | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-frozen-step -tcc-build-train-step -canonicalize | FileCheck %s --check-prefix=STEPS
// After tcc-build-train-step, which replaces @forward, it has nothing to build from.
// RUN: not tcc-opt %s -split-input-file -tcc-build-train-step -tcc-frozen-step 2>&1 | FileCheck %s --check-prefix=LATE
// LATE: error: tcc-frozen-step builds from @forward and @loss; run it before tcc-build-train-step
// Nor twice.
// RUN: not tcc-opt %s -split-input-file -tcc-frozen-step -tcc-frozen-step 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: already has @train_step_frozen

// Fires: conv.bias trains for its first 2 epochs. @train_step_frozen takes
// and returns the whole state as @train_step does, but the bias (and,
// since conv.weight is frozen, the whole backward of the conv and the relu
// before the linear) is not differentiated: no gradient, no update, no
// tcc.frozen_after; the bias and its momentum are returned as they came.
// CHECK: "frozen-step" = {from_epoch = 2 : i64, frozen = ["conv.bias"]}
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @train_step_frozen(
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x3x3x3xf32> {{[^%>]*}}tcc.state = "conv.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<4xf32> {{[^%>]*}}tcc.state = "conv.bias"
// CHECK-SAME: %[[FW:[^:]+]]: tensor<2x64xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[FB:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: %[[MB:[^:]+]]: tensor<4xf32> {{[^%>]*}}tcc.state = "optimizer.conv.bias.momentum_buffer"
// CHECK-SAME: attributes {tcc.frozen_from_epoch = 2 : i64, tcc.frozen_params = ["conv.bias"]}
// CHECK-NOT: tcc.frozen_after
// CHECK-NOT: tcc.linear_backward_data
// CHECK-NOT: tcc.relu_backward
// CHECK-NOT: tcc.conv2d_backward
// CHECK-NOT: tcc.sgd_update %[[B]]
// CHECK: tcc.sgd_update %[[FW]]
// CHECK: tcc.sgd_update %[[FB]]
// CHECK-NOT: tcc.sgd_update
// CHECK: return {{.*}}, %[[W]], %[[B]], {{[^,]+}}, {{[^,]+}}, %[[MB]], {{[^,]+}}, {{[^,]+}} :

// Both steps after tcc-build-train-step: @train_step keeps the gradient of
// the bias (the relu's backward, its sum over the conv's output gradient)
// and skips its update through tcc.frozen_after.
// STEPS-LABEL: func.func @train_step_frozen(
// STEPS-NOT: tcc.relu_backward
// STEPS-LABEL: func.func @train_step(
// STEPS: tcc.relu_backward
// STEPS: tcc.frozen_after {{.*}} {epochs = 2 : i64}
// STEPS-LABEL: func.func @eval_step(
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3, 6, 6>, tcc.model = "frozen",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 2>,
                   tcc.train = #tcc.train<batch_size = 2, epochs = 4.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.9, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<2x3x6x6xf32> {tcc.role = "input"},
                     %w: tensor<4x3x3x3xf32> {tcc.init = {kind = "constant", value = 0.1 : f64},
                                              tcc.param = "conv.weight", tcc.trainable = false},
                     %b: tensor<4xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "conv.bias",
                                        tcc.train_epochs = 2 : i64,
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %fw: tensor<2x64xf32> {tcc.init = {high = 0.1 : f64, kind = "uniform", low = -0.1 : f64},
                                            tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                            tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %fb: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                         tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                         tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<2x2xf32> {tcc.role = "output"}) {
    %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    %r = tcc.relu %c : tensor<2x4x4x4xf32>
    %f = tcc.flatten %r : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
    %y = tcc.linear %f, %fw, %fb : (tensor<2x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
  func.func @loss(%out: tensor<2x2xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Does not fire: no parameter has train_epochs.
// CHECK: "frozen-step" = {frozen = []}
// CHECK-NOT: @train_step_frozen
// STEPS-LABEL: func.func @train_step(
// STEPS-NOT: tcc.frozen_after
// STEPS-NOT: @train_step_frozen
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3, 6, 6>, tcc.model = "frozen",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 2>,
                   tcc.train = #tcc.train<batch_size = 2, epochs = 4.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.9, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<2x3x6x6xf32> {tcc.role = "input"},
                     %w: tensor<4x3x3x3xf32> {tcc.init = {kind = "constant", value = 0.1 : f64},
                                              tcc.param = "conv.weight", tcc.trainable = false},
                     %b: tensor<4xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "conv.bias",
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %fw: tensor<2x64xf32> {tcc.init = {high = 0.1 : f64, kind = "uniform", low = -0.1 : f64},
                                            tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                            tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %fb: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                         tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                         tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<2x2xf32> {tcc.role = "output"}) {
    %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    %r = tcc.relu %c : tensor<2x4x4x4xf32>
    %f = tcc.flatten %r : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
    %y = tcc.linear %f, %fw, %fb : (tensor<2x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
  func.func @loss(%out: tensor<2x2xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Does not fire: conv.bias is the only trainable parameter, so the step after
// its epochs would train nothing.
// CHECK: "frozen-step" = {frozen = []}
// CHECK-NOT: @train_step_frozen
// STEPS-LABEL: func.func @train_step(
// STEPS: tcc.frozen_after
// STEPS-NOT: @train_step_frozen
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3, 6, 6>, tcc.model = "frozen",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 2>,
                   tcc.train = #tcc.train<batch_size = 2, epochs = 4.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.9, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<2x3x6x6xf32> {tcc.role = "input"},
                     %w: tensor<4x3x3x3xf32> {tcc.init = {kind = "constant", value = 0.1 : f64},
                                              tcc.param = "conv.weight", tcc.trainable = false},
                     %b: tensor<4xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "conv.bias",
                                        tcc.train_epochs = 2 : i64,
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %fw: tensor<2x64xf32> {tcc.init = {high = 0.1 : f64, kind = "uniform", low = -0.1 : f64},
                                            tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                            tcc.trainable = false, tcc.weight_decay_scale = 1.0 : f64},
                     %fb: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                         tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                         tcc.trainable = false, tcc.weight_decay_scale = 1.0 : f64})
      -> (tensor<2x2xf32> {tcc.role = "output"}) {
    %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    %r = tcc.relu %c : tensor<2x4x4x4xf32>
    %f = tcc.flatten %r : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
    %y = tcc.linear %f, %fw, %fb : (tensor<2x64xf32>, tensor<2x64xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
  func.func @loss(%out: tensor<2x2xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
    %0 = tcc.cross_entropy %out, %labels {label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

