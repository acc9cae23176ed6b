// BuildTrainStep multiplies the batch by train.accumulate. The frontend
// bounds accumulate (docs/model-format.md, "Limits"), but tcc-opt reads
// hand-written IR: there 2^62 or 2^57 wrapped the product and aborted the
// compiler ("LLVM ERROR: Failed to infer result type(s)", SIGABRT). It must be
// one error at @forward instead. (A pass test; it lives beside the frontend's
// size-limit tests.)
// RUN: tcc-opt %s -split-input-file -verify-diagnostics -tcc-build-train-step

module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "acc",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 4611686018427387904, deterministic = false>} {
  // expected-error @+1 {{tcc.train accumulate 4611686018427387904 must be >= 1, and that many micro-batches of [4, 3] must fit one tensor}}
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

module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "acc",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 144115188075855872, deterministic = false>} {
  // expected-error @+1 {{tcc.train accumulate 144115188075855872 must be >= 1, and that many micro-batches of [4, 3] must fit one tensor}}
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

module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "acc",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   // expected-error @+1 {{accumulate must be >= 1, got 0}}
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 0, deterministic = false>} {
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

module attributes {tcc.classes = 2 : i64, tcc.input_shape = array<i64: 3>, tcc.model = "acc",
                   tcc.eval = #tcc.eval<tta_flip = false, tta_translate = false, translate = 2, batch_size = 4>,
                   // expected-error @+1 {{accumulate must be >= 1, got -3}}
                   tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = -3, deterministic = false>} {
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
