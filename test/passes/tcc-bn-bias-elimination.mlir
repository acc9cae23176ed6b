// RUN: tcc-opt %s -tcc-bn-bias-elimination -split-input-file | FileCheck %s

// Fires: conv2d -> batch_norm. The conv loses its bias; the bias stays in
// the state as a frozen zero that names the running mean it folds into.
// CHECK: module attributes {tcc.pass_report = {"bn-bias-elimination" = {removed = ["conv.bias"]}}}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<4xf32> {tcc.folded_into = "bn.running_mean", tcc.init = {kind = "constant", value = 0.000000e+00 : f64}, tcc.param = "conv.bias", tcc.trainable = false}
// CHECK: tcc.conv2d %{{[a-z0-9]+}}, %{{[a-z0-9]+}} {dilation
// CHECK-SAME: (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
func.func @forward(%x: tensor<2x3x8x8xf32> {tcc.role = "input"},
    %w: tensor<4x3x3x3xf32> {tcc.param = "conv.weight", tcc.trainable = true},
    %b: tensor<4xf32> {tcc.param = "conv.bias", tcc.trainable = true, tcc.init = {kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}},
    %g: tensor<4xf32> {tcc.param = "bn.weight", tcc.trainable = true},
    %s: tensor<4xf32> {tcc.param = "bn.bias", tcc.trainable = true},
    %rm: tensor<4xf32> {tcc.buffer = "bn.running_mean"},
    %rv: tensor<4xf32> {tcc.buffer = "bn.running_var"}) -> tensor<2x4x6x6xf32> {
  %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %y, %sm, %si, %nm, %nv = tcc.batch_norm %c weight %g bias %s running %rm, %rv {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<2x4x6x6xf32>
}

// -----

// Must not fire: an activation between them is not affine.
// CHECK: {tcc.pass_report = {"bn-bias-elimination" = {removed = []}}}
// CHECK: tcc.param = "conv.bias", tcc.trainable = true
func.func @forward(%x: tensor<2x3x8x8xf32> {tcc.role = "input"},
    %w: tensor<4x3x3x3xf32> {tcc.param = "conv.weight", tcc.trainable = true},
    %b: tensor<4xf32> {tcc.param = "conv.bias", tcc.trainable = true, tcc.init = {kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}},
    %g: tensor<4xf32> {tcc.param = "bn.weight", tcc.trainable = true},
    %s: tensor<4xf32> {tcc.param = "bn.bias", tcc.trainable = true},
    %rm: tensor<4xf32> {tcc.buffer = "bn.running_mean"},
    %rv: tensor<4xf32> {tcc.buffer = "bn.running_var"}) -> tensor<2x4x6x6xf32> {
  %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %r = tcc.relu %c : tensor<2x4x6x6xf32>
  %y, %sm, %si, %nm, %nv = tcc.batch_norm %r weight %g bias %s running %rm, %rv {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<2x4x6x6xf32>
}

// -----

// Must not fire: the pre-norm value has another user, which sees the bias.
// CHECK: {tcc.pass_report = {"bn-bias-elimination" = {removed = []}}}
func.func @forward(%x: tensor<2x3x8x8xf32> {tcc.role = "input"},
    %w: tensor<4x3x3x3xf32> {tcc.param = "conv.weight", tcc.trainable = true},
    %b: tensor<4xf32> {tcc.param = "conv.bias", tcc.trainable = true, tcc.init = {kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}},
    %g: tensor<4xf32> {tcc.param = "bn.weight", tcc.trainable = true},
    %s: tensor<4xf32> {tcc.param = "bn.bias", tcc.trainable = true},
    %rm: tensor<4xf32> {tcc.buffer = "bn.running_mean"},
    %rv: tensor<4xf32> {tcc.buffer = "bn.running_var"}) -> (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %y, %sm, %si, %nm, %nv = tcc.batch_norm %c weight %g bias %s running %rm, %rv {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %c : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}

// -----

// Must not fire: a norm with running statistics (frozen) does not cancel it.
// CHECK: {tcc.pass_report = {"bn-bias-elimination" = {removed = []}}}
func.func @forward(%x: tensor<2x3x8x8xf32> {tcc.role = "input"},
    %w: tensor<4x3x3x3xf32> {tcc.param = "conv.weight", tcc.trainable = true},
    %b: tensor<4xf32> {tcc.param = "conv.bias", tcc.trainable = true, tcc.init = {kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}},
    %g: tensor<4xf32> {tcc.param = "bn.weight", tcc.trainable = true},
    %s: tensor<4xf32> {tcc.param = "bn.bias", tcc.trainable = true},
    %rm: tensor<4xf32> {tcc.buffer = "bn.running_mean"},
    %rv: tensor<4xf32> {tcc.buffer = "bn.running_var"}) -> tensor<2x4x6x6xf32> {
  %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %y = tcc.batch_norm_inference %c weight %g bias %s running %rm, %rv {eps = 1.0e-5 : f64} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

// Fires: a linear [N, F] -> batch_norm (BatchNorm1d).
// CHECK: {tcc.pass_report = {"bn-bias-elimination" = {removed = ["fc.bias"]}}}
// CHECK: tcc.linear %{{[a-z0-9]+}}, %{{[a-z0-9]+}} : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
func.func @forward(%x: tensor<8x16xf32> {tcc.role = "input"},
    %w: tensor<4x16xf32> {tcc.param = "fc.weight", tcc.trainable = true},
    %b: tensor<4xf32> {tcc.param = "fc.bias", tcc.trainable = true, tcc.init = {kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}},
    %g: tensor<4xf32> {tcc.param = "bn.weight", tcc.trainable = true},
    %s: tensor<4xf32> {tcc.param = "bn.bias", tcc.trainable = true},
    %rm: tensor<4xf32> {tcc.buffer = "bn.running_mean"},
    %rv: tensor<4xf32> {tcc.buffer = "bn.running_var"}) -> tensor<8x4xf32> {
  %l = tcc.linear %x, %w, %b : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %y, %sm, %si, %nm, %nv = tcc.batch_norm %l weight %g bias %s running %rm, %rv {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<8x4xf32>
}

// -----

// Must not fire: a linear [N, C, H, F]: the norm's channels are C, not the
// features F the bias shifts.
// CHECK: {tcc.pass_report = {"bn-bias-elimination" = {removed = []}}}
func.func @forward(%x: tensor<2x4x3x16xf32> {tcc.role = "input"},
    %w: tensor<4x16xf32> {tcc.param = "fc.weight", tcc.trainable = true},
    %b: tensor<4xf32> {tcc.param = "fc.bias", tcc.trainable = true, tcc.init = {kind = "uniform", low = -0.1 : f64, high = 0.1 : f64}},
    %g: tensor<4xf32> {tcc.param = "bn.weight", tcc.trainable = true},
    %s: tensor<4xf32> {tcc.param = "bn.bias", tcc.trainable = true},
    %rm: tensor<4xf32> {tcc.buffer = "bn.running_mean"},
    %rv: tensor<4xf32> {tcc.buffer = "bn.running_var"}) -> tensor<2x4x3x4xf32> {
  %l = tcc.linear %x, %w, %b : (tensor<2x4x3x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x4x3x4xf32>
  %y, %sm, %si, %nm, %nv = tcc.batch_norm %l weight %g bias %s running %rm, %rv {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<2x4x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<2x4x3x4xf32>
}
