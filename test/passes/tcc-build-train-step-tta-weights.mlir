// Known bug: BuildEvalStep.cpp (ttaViews + the final tcc.scale) averages
// the TTA views uniformly, 1/3 each for "translate" and 1/6 each for "flip"
// with "translate". docs/model-format.md (eval.tta) and airbench's
// tta_level 2 weigh the image 1/2 and each shifted copy 1/4 (each of their
// mirrors half of that), which can change the argmax.
// RUN: tcc-opt %s -split-input-file -tcc-build-train-step | FileCheck %s

// "translate" only: image 1/2, shifted copies 1/4 each.

// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[IMAGES:[^:]+]]: tensor<4x1x4x4xf32> {tcc.role = "input"}
// CHECK-DAG: tcc.shift %[[IMAGES]] {dx = 1 : i64, dy = 1 : i64}
// CHECK-DAG: tcc.shift %[[IMAGES]] {dx = -1 : i64, dy = -1 : i64}
// CHECK-NOT: factor = 0.33333
// CHECK: tcc.count_correct
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 1, 4, 4>, tcc.model = "tta_translate",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = true, translate = 1, batch_size = 4>,
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

// "flip" and "translate": the image and its mirror 1/4 each, each shifted
// copy and its mirror 1/8 each; not 1/6 each.

// CHECK-LABEL: func.func @eval_step(
// CHECK-COUNT-2: tcc.shift
// CHECK-NOT: factor = 0.16666
// CHECK: tcc.count_correct
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
