// RUN: tcc-opt %s -split-input-file -tcc-precision | FileCheck %s

// bf16-mixed: the convolutions compute in bf16, on casts of the input and of
// the f32 weights made once where the forward starts (the weight both
// convolutions read is cast once); the batch norm and the activation keep
// bf16 (the norm's scale and running statistics stay f32); the forward's
// result goes back to f32 for the loss.
// CHECK: tcc.pass_report = {precision = {casts = 3 : i64, ops_by_dtype = {bf16 = 4 : i64}, precision = "bf16-mixed"}}
// CHECK-LABEL: func.func @forward(
// CHECK-DAG: %[[X:.*]] = tcc.cast %arg0 to bf16 : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xbf16>
// CHECK-DAG: %[[W:.*]] = tcc.cast %arg1 to bf16 : (tensor<3x3x1x1xf32>) -> tensor<3x3x1x1xbf16>
// CHECK: %[[C:.*]] = tcc.conv2d %[[X]], %[[W]] {{.*}} -> tensor<2x3x4x4xbf16>
// CHECK: tcc.batch_norm %[[C]] weight %arg2 running %arg3, %arg4 {{.*}} : (tensor<2x3x4x4xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xbf16>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[R:.*]] = tcc.relu %{{.*}} : tensor<2x3x4x4xbf16>
// CHECK: %[[C2:.*]] = tcc.conv2d %[[R]], %[[W]] {{.*}} -> tensor<2x3x4x4xbf16>
// CHECK: %[[OUT:.*]] = tcc.cast %[[C2]] to f32
// CHECK: return %[[OUT]], %{{.*}}, %{{.*}} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = bf16, storage = mixed>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<2x3x4x4xf32>, %w: tensor<3x3x1x1xf32>, %g: tensor<3xf32>,
                     %rm: tensor<3xf32>, %rv: tensor<3xf32>)
      -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
    %c = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
    %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %c weight %g running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
        -> (tensor<2x3x4x4xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>)
    %r = tcc.relu %y : tensor<2x3x4x4xf32>
    %c2 = tcc.conv2d %r, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
    return %c2, %nrm, %nrv : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
  }
}

// -----

// Mixed operands: an add of a bf16 value and an f32 one computes in f32 (the
// bf16 one cast up, as autocast promotes); an op with no precision trait
// (softmax) computes in f32 on a cast of its bf16 operand.
// CHECK: precision = {casts = 3 : i64, ops_by_dtype = {bf16 = 1 : i64, f32 = 2 : i64}, precision = "bf16-mixed"}
// CHECK-LABEL: func.func @forward(
// CHECK: %[[L:.*]] = tcc.linear %{{.*}}, %{{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[UP:.*]] = tcc.cast %[[L]] to f32
// CHECK: tcc.add %[[UP]], %arg2 : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: tcc.softmax %[[UP]] {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = bf16, storage = mixed>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<4x8xf32>)
      -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %l = tcc.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %s = tcc.add %l, %r : tensor<4x8xf32>, tensor<4x8xf32>
    %p = tcc.softmax %l {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %s, %p : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

// -----

// fp32: the forward is left as it is.
// CHECK: precision = {casts = 0 : i64, ops_by_dtype = {f32 = 1 : i64}, precision = "fp32"}
// CHECK-NOT: tcc.cast
// CHECK: return
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
    %l = tcc.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %l : tensor<4x8xf32>
  }
}

// -----

// fp16-mixed: the same policy with f16 (its loss scaling is
// tcc-build-train-step's).
// CHECK: precision = {casts = 3 : i64, ops_by_dtype = {f16 = 1 : i64}, precision = "fp16-mixed"}
// CHECK-DAG: tcc.cast %arg0 to f16 : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-DAG: tcc.cast %arg1 to f16 : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CHECK: %[[L:.*]] = tcc.linear %{{.*}}, %{{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK: %[[OUT:.*]] = tcc.cast %[[L]] to f32
// CHECK: return %[[OUT]]
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp16, storage = mixed>, accumulate = 1, deterministic = false,
                     loss_scale = <init_scale = 65536.0, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000>>} {
  func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
    %l = tcc.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %l : tensor<4x8xf32>
  }
}

// -----

// Pure fp16 (model.half()): the same policy, and every parameter the forward
// reads only through its cast to f16 is stored in f16 itself (the cast goes:
// its gradient, optimizer state and checkpoint tensor are f16 too). The
// input stays f32 (not a parameter, cast as before); the batch norm's scale
// stays f32 (an f32 operand of the norm); a weight that an f32 op also reads
// (the softmax of the weight) stays f32 and keeps its cast.
// CHECK: precision = {casts = 3 : i64, ops_by_dtype = {f16 = 3 : i64, f32 = 1 : i64}, precision = "fp16", sixteen_bit_params = 1 : i64}
// CHECK: func.func @forward(%arg0: tensor<2x3x4x4xf32>, %arg1: tensor<3x3x1x1xf16> {tcc.param = "conv.weight"}, %arg2: tensor<3xf32> {tcc.param = "bn.weight"}, %arg3: tensor<3xf32>, %arg4: tensor<3xf32>, %arg5: tensor<3x3x1x1xf32> {tcc.param = "tied.weight"})
// CHECK-DAG: %[[X:.*]] = tcc.cast %arg0 to f16
// CHECK-DAG: %[[T:.*]] = tcc.cast %arg5 to f16
// CHECK-NOT: tcc.cast %arg1
// CHECK: %[[C:.*]] = tcc.conv2d %[[X]], %arg1 {{.*}} -> tensor<2x3x4x4xf16>
// CHECK: tcc.batch_norm %[[C]] weight %arg2 running %arg3, %arg4 {{.*}} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: tcc.conv2d %{{.*}}, %[[T]] {{.*}} -> tensor<2x3x4x4xf16>
// CHECK: tcc.softmax %arg5
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp16, storage = pure>, accumulate = 1, deterministic = false>} {
  func.func @forward(%x: tensor<2x3x4x4xf32>, %w: tensor<3x3x1x1xf32> {tcc.param = "conv.weight"},
                     %g: tensor<3xf32> {tcc.param = "bn.weight"}, %rm: tensor<3xf32>, %rv: tensor<3xf32>,
                     %t: tensor<3x3x1x1xf32> {tcc.param = "tied.weight"})
      -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x3x1x1xf32>) {
    %c = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
    %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %c weight %g running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
        -> (tensor<2x3x4x4xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>)
    %c2 = tcc.conv2d %y, %t {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
        : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32>
    %s = tcc.softmax %t {axis = 1 : i64} : (tensor<3x3x1x1xf32>) -> tensor<3x3x1x1xf32>
    return %c2, %nrm, %nrv, %s : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x3x1x1xf32>
  }
}
