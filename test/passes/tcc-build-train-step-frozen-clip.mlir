// With train.grad_clip_norm and no trainable parameter there is nothing to
// clip: the step is built without clipping (an earlier version built a
// tcc.global_norm of no operands, whose type inference aborted `tcc compile`
// on a model whose parameters are all frozen).
// RUN: tcc-opt %s -tcc-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight", tcc.trainable = false}
// CHECK-NOT: tcc.scale_by
// CHECK-NOT: tcc.sgd_update
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[W]] :
// CHECK-LABEL: func.func @eval_step(
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "frozen_clip",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, grad_clip_norm = 1.0>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = false, tcc.weight_decay_scale = 1.0 : f64})
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
