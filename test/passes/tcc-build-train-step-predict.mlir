// RUN: tcc-opt %s -split-input-file -tcc-build-train-step -verify-diagnostics | FileCheck %s

// A token model (tcc.vocab) also gets @predict_step: the evaluation's
// forward on one sequence, returning the logits for tcc sample. Here a
// next-token model with dropout and EMA (`tcc compile --emit=mlir` of
// embedding, dropout, linear): the predict step reads the EMA weights, as
// @eval_step does, and has no dropout.

// CHECK-LABEL: func.func @eval_step(
// CHECK-LABEL: func.func @predict_step(
// CHECK-SAME: %[[TOKENS:[^:]+]]: tensor<1x4xf32> {tcc.role = "input"}
// CHECK-SAME: tcc.state = "step"
// CHECK-SAME: tcc.state = "emb.weight"
// CHECK-SAME: tcc.state = "head.weight"
// CHECK-SAME: tcc.state = "head.bias"
// CHECK-SAME: %[[EMB:[^:]+]]: tensor<5x3xf32> {{[^%>]*}}tcc.state = "ema.emb.weight"
// CHECK-SAME: %[[W:[^:]+]]: tensor<5x3xf32> {{[^%>]*}}tcc.state = "ema.head.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<5xf32> {{[^%>]*}}tcc.state = "ema.head.bias"
// CHECK-SAME: -> (tensor<1x4x5xf32> {tcc.role = "logits"})
// CHECK-NOT: tcc.dropout
// CHECK: %[[X:.*]] = tcc.embedding %[[TOKENS]], %[[EMB]]
// CHECK-NEXT: %[[LOGITS:.*]] = tcc.linear %[[X]], %[[W]], %[[B]]
// CHECK-NEXT: return %[[LOGITS]] : tensor<1x4x5xf32>
module attributes {tcc.classes = 5 : i64, tcc.data = #tcc.data<format = npy, path = "x", random_crop_padding = 0, flip = false, alternate_flip = false, translate = 0, cutout = 0, reflect = false, balanced = false, mean = [0.000000e+00], std = [1.000000e+00]>, tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 2>, tcc.ignore_index = -100 : i64, tcc.input_shape = array<i64: 4>, tcc.model = "mini_lm", tcc.sequence_targets = 4 : i64, tcc.train = #tcc.train<batch_size = 2, epochs = 1.000000e+00, seed = 0, drop_last = true, optimizer = <type = sgd, lr = 1.000000e-01, weight_decay = 0.000000e+00, momentum = 0.000000e+00, dampening = 0.000000e+00, nesterov = false, momentum_of = gradient, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08>, schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.000000e+00, gamma = 1.000000e-01, warmup = 0.000000e+00, min_factor = 0.000000e+00, pct_start = 3.000000e-01, div_factor = 2.500000e+01, final_div_factor = 1.000000e+04, anneal = cos, times = [], factors = []>, precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, ema = <decay = 9.000000e-01, every = 1, per_epoch = false>>, tcc.vocab = 5 : i64} {
  func.func @forward(%arg0: tensor<2x4xf32> {tcc.role = "input"}, %arg1: tensor<i64> {tcc.role = "seed"}, %arg2: tensor<5x3xf32> {tcc.init = {kind = "normal", mean = 0.000000e+00 : f64, std = 1.000000e+00 : f64}, tcc.lr_scale = 1.000000e+00 : f64, tcc.param = "emb.weight", tcc.trainable = true, tcc.weight_decay_scale = 1.000000e+00 : f64}, %arg3: tensor<5x3xf32> {tcc.init = {high = 0.57735026918962584 : f64, kind = "uniform", low = -0.57735026918962584 : f64}, tcc.lr_scale = 1.000000e+00 : f64, tcc.param = "head.weight", tcc.trainable = true, tcc.weight_decay_scale = 1.000000e+00 : f64}, %arg4: tensor<5xf32> {tcc.init = {high = 0.57735026918962584 : f64, kind = "uniform", low = -0.57735026918962584 : f64}, tcc.lr_scale = 1.000000e+00 : f64, tcc.param = "head.bias", tcc.trainable = true, tcc.weight_decay_scale = 1.000000e+00 : f64}) -> (tensor<2x4x5xf32> {tcc.role = "output"}) {
    %0 = tcc.embedding %arg0, %arg2 {padding_idx = -1 : i64} : (tensor<2x4xf32>, tensor<5x3xf32>) -> tensor<2x4x3xf32>
    %1 = tcc.dropout %0, %arg1 {p = 1.000000e-01 : f64, stream = 0 : i64} : (tensor<2x4x3xf32>, tensor<i64>) -> tensor<2x4x3xf32>
    %2 = tcc.linear %1, %arg3, %arg4 : (tensor<2x4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>
    return %2 : tensor<2x4x5xf32>
  }
  func.func @loss(%arg0: tensor<2x4x5xf32>, %arg1: tensor<2x4xi64>) -> tensor<f32> {
    %0 = tcc.token_cross_entropy %arg0, %arg1 {ignore_index = -100 : i64, label_smoothing = 0.000000e+00 : f64, reduction = "mean"} : (tensor<2x4x5xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Without tcc.vocab (the same graph on float features): no @predict_step.

// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT: @predict_step
module attributes {tcc.classes = 5 : i64, tcc.data = #tcc.data<format = npy, path = "x", random_crop_padding = 0, flip = false, alternate_flip = false, translate = 0, cutout = 0, reflect = false, balanced = false, mean = [0.000000e+00], std = [1.000000e+00]>, tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 2>, tcc.ignore_index = -100 : i64, tcc.input_shape = array<i64: 4>, tcc.model = "mini_lm", tcc.sequence_targets = 4 : i64, tcc.train = #tcc.train<batch_size = 2, epochs = 1.000000e+00, seed = 0, drop_last = true, optimizer = <type = sgd, lr = 1.000000e-01, weight_decay = 0.000000e+00, momentum = 0.000000e+00, dampening = 0.000000e+00, nesterov = false, momentum_of = gradient, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08>, schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.000000e+00, gamma = 1.000000e-01, warmup = 0.000000e+00, min_factor = 0.000000e+00, pct_start = 3.000000e-01, div_factor = 2.500000e+01, final_div_factor = 1.000000e+04, anneal = cos, times = [], factors = []>, precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, ema = <decay = 9.000000e-01, every = 1, per_epoch = false>>} {
  func.func @forward(%arg0: tensor<2x4xf32> {tcc.role = "input"}, %arg1: tensor<i64> {tcc.role = "seed"}, %arg2: tensor<5x3xf32> {tcc.init = {kind = "normal", mean = 0.000000e+00 : f64, std = 1.000000e+00 : f64}, tcc.lr_scale = 1.000000e+00 : f64, tcc.param = "emb.weight", tcc.trainable = true, tcc.weight_decay_scale = 1.000000e+00 : f64}, %arg3: tensor<5x3xf32> {tcc.init = {high = 0.57735026918962584 : f64, kind = "uniform", low = -0.57735026918962584 : f64}, tcc.lr_scale = 1.000000e+00 : f64, tcc.param = "head.weight", tcc.trainable = true, tcc.weight_decay_scale = 1.000000e+00 : f64}, %arg4: tensor<5xf32> {tcc.init = {high = 0.57735026918962584 : f64, kind = "uniform", low = -0.57735026918962584 : f64}, tcc.lr_scale = 1.000000e+00 : f64, tcc.param = "head.bias", tcc.trainable = true, tcc.weight_decay_scale = 1.000000e+00 : f64}) -> (tensor<2x4x5xf32> {tcc.role = "output"}) {
    %0 = tcc.embedding %arg0, %arg2 {padding_idx = -1 : i64} : (tensor<2x4xf32>, tensor<5x3xf32>) -> tensor<2x4x3xf32>
    %1 = tcc.dropout %0, %arg1 {p = 1.000000e-01 : f64, stream = 0 : i64} : (tensor<2x4x3xf32>, tensor<i64>) -> tensor<2x4x3xf32>
    %2 = tcc.linear %1, %arg3, %arg4 : (tensor<2x4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>
    return %2 : tensor<2x4x5xf32>
  }
  func.func @loss(%arg0: tensor<2x4x5xf32>, %arg1: tensor<2x4xi64>) -> tensor<f32> {
    %0 = tcc.token_cross_entropy %arg0, %arg1 {ignore_index = -100 : i64, label_smoothing = 0.000000e+00 : f64, reduction = "mean"} : (tensor<2x4x5xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}
