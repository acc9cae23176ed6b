// Known bug: with train.accumulate > 1, BuildTrainStep.cpp
// (buildMicroBatches) mixes the dropout seed once per step and gives every
// micro-batch the same seed and stream. A dropout mask is a function of
// (seed, stream, element index) only, so sample i of every micro-batch
// drops the same units: the masks of an accumulated step are not
// independent, unlike the one big batch that accumulation stands for
// (docs/model-format.md, train.accumulate) and unlike PyTorch, which draws
// fresh masks for each micro-batch. Each micro-batch needs its own
// (seed, stream) pair.
// RUN: tcc-opt %s -tcc-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// First micro-batch: its forward dropout.
// CHECK: tcc.slice %{{.*}} {axis = 0 : i64, offset = 0 : i64, size = 4 : i64}
// CHECK: tcc.dropout %{{[^,]*}}, %[[SEED0:[^ ]+]] {p = 2.500000e-01 : f64, stream = [[STREAM0:[0-9]+]] : i64}
// Second micro-batch: neither its forward nor its backward dropout may reuse
// the first one's (seed, stream).
// CHECK: tcc.slice %{{.*}} {axis = 0 : i64, offset = 4 : i64, size = 4 : i64}
// CHECK-NOT: tcc.dropout %{{[^,]*}}, %[[SEED0]] {p = 2.500000e-01 : f64, stream = [[STREAM0]] : i64}
// CHECK: tcc.dropout
// CHECK-NOT: tcc.dropout %{{[^,]*}}, %[[SEED0]] {p = 2.500000e-01 : f64, stream = [[STREAM0]] : i64}
// CHECK: tcc.count_correct
module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "accumulate_dropout",
                   tcc.eval = {batch_size = 4 : i64, translate = 2 : i64, tta = []},
                   tcc.train = {accumulate = 2 : i64, batch_size = 4 : i64,
                                optimizer = {lr = 0.1 : f64, type = "sgd"},
                                schedule = {type = "constant", unit = "epoch"}}} {
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
