// The recipe items of airbench94 and ResNet-9 in the built step: a
// parameter that trains for its first epochs (tcc.train_epochs) skips its
// update through tcc.frozen_after, the others do not; Lookahead's slow copies
// cover the batch-norm running statistics with `buffers` and end the run on
// them with `copy_back`; an EMA with `per_epoch` reads the steps per epoch;
// the schedule keeps `count_from`.
// RUN: tcc-opt %s -tcc-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[SPE:[^:]+]]: tensor<i64> {tcc.role = "steps_per_epoch"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {{[^%>]*}}tcc.state = "step"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {{[^%>]*}}tcc.state = "fc.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {{[^%>]*}}tcc.state = "fc.bias"
// CHECK-SAME: tcc.state = "lookahead.bn.running_mean"
// CHECK-SAME: tcc.state = "lookahead.bn.running_var"
// CHECK: tcc.lr_schedule {{.*}}schedule = #tcc.schedule<type = constant, unit = epoch, count_from = 1,
// CHECK-NOT: tcc.frozen_after
// CHECK: tcc.sgd_update %[[W]], {{[^ ]+}}, {{[^ ]+}}, %[[STEP]] {
// CHECK: %[[FROZEN:.+]] = tcc.frozen_after %[[STEP]], %[[SPE]] {epochs = 3 : i64}
// CHECK: tcc.sgd_update %[[B]], {{[^ ]+}}, {{[^ ]+}}, %[[STEP]] skip %[[FROZEN]] {
// CHECK-COUNT-4: tcc.lookahead_update {{.*}}copy_back = true
// CHECK: tcc.ema_update {{.*}}, %[[STEP]] per_epoch %[[SPE]] {decay = {{.*}}, every = 5 : i64}
// CHECK-LABEL: func.func @eval_step(
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "recipes",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08,
                       lookahead = <every = 5, alpha = 0.5, alpha_schedule = constant, buffers = true, copy_back = true>>,
                     schedule = <type = constant, unit = epoch, count_from = 1, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false,
                     ema = <decay = 0.99, every = 5, per_epoch = true>>} {
  func.func @forward(%x: tensor<4x3xf32> {tcc.role = "input"},
                     %w: tensor<2x3xf32> {tcc.init = {high = 0.5 : f64, kind = "uniform", low = -0.5 : f64},
                                          tcc.lr_scale = 1.0 : f64, tcc.param = "fc.weight",
                                          tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %b: tensor<2xf32> {tcc.init = {kind = "constant", value = 0.0 : f64},
                                        tcc.lr_scale = 1.0 : f64, tcc.param = "fc.bias",
                                        tcc.train_epochs = 3 : i64,
                                        tcc.trainable = true, tcc.weight_decay_scale = 1.0 : f64},
                     %mean: tensor<2xf32> {tcc.buffer = "bn.running_mean",
                                           tcc.init = {kind = "constant", value = 0.0 : f64}},
                     %var: tensor<2xf32> {tcc.buffer = "bn.running_var",
                                          tcc.init = {kind = "constant", value = 1.0 : f64}})
      -> (tensor<4x2xf32> {tcc.role = "output"}, tensor<2xf32> {tcc.buffer = "bn.running_mean"},
          tensor<2xf32> {tcc.buffer = "bn.running_var"}) {
    %0 = tcc.linear %x, %w, %b : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %1 = tcc.relu %0 : tensor<4x2xf32>
    %y, %sm, %si, %nm, %nv = tcc.batch_norm %1 running %mean, %var
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
