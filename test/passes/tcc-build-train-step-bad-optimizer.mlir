// Known bug: planSteps (StepPlan.cpp) reads train.optimizer.type with
// getAs<StringAttr>("type").getValue() and crashes (SIGSEGV) when it is
// missing; an unknown type passes planSteps and BuildTrainStep.cpp
// (buildUpdates) then treats it as Adam-like and indexes the state with the
// missing exp_avg slot (-1): another crash. Both should be the pass's
// error on the module, like a missing optimizer.
// RUN: tcc-opt %s -split-input-file -tcc-build-train-step -verify-diagnostics

// expected-error @+1 {{optimizer}}
module attributes {tcc.eval = {batch_size = 4 : i64, translate = 2 : i64, tta = []},
                   tcc.train = {accumulate = 1 : i64, batch_size = 4 : i64, optimizer = {lr = 0.1 : f64}}} {
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

// expected-error @+1 {{optimizer}}
module attributes {tcc.eval = {batch_size = 4 : i64, translate = 2 : i64, tta = []},
                   tcc.train = {accumulate = 1 : i64, batch_size = 4 : i64, optimizer = {lr = 0.1 : f64, type = "rmsprop"}}} {
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
