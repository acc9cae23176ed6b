// With train.accumulate > 1 every micro-batch draws dropout masks of its
// own, as PyTorch does for each micro-batch of an accumulated step: the
// loop body holds one forward and one backward dropout with the same
// stream, and the loop declares how many streams an iteration uses, so
// iteration k draws stream + k * dropout_streams (codegen/cpu/ops/ArithmeticOps.cpp;
// the dropout e2e variants check the masks against PyTorch).
// RUN: tcc-opt %s -tcc-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.micro_batches 2({{.*}}) {dropout_streams = 1 : i64}
// CHECK: tcc.dropout %{{[^,]*}}, %[[SEED:[^ ]+]] {p = 2.500000e-01 : f64, stream = 0 : i64}
// CHECK: tcc.dropout %{{[^,]*}}, %[[SEED]] {p = 2.500000e-01 : f64, stream = 0 : i64}
// CHECK-NOT: tcc.dropout
// CHECK: tcc.yield
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "accumulate_dropout",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 2, deterministic = false>} {
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
