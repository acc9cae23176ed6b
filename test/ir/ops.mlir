// Round trip of every tcc op: parse, verify, print, parse the printout again.
// RUN: tcc-opt %s | tcc-opt | FileCheck %s
// RUN: tcc-opt %s -mlir-print-op-generic | tcc-opt | FileCheck %s

// CHECK-LABEL: func.func @conv_linear
func.func @conv_linear(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>, %b: tensor<64xf32>,
                       %dw: tensor<64x1x3x3xf32>, %f: tensor<8x256xf32>, %lw: tensor<10x256xf32>,
                       %lb: tensor<10xf32>) {
  // CHECK: tcc.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>, tensor<64xf32>) -> tensor<8x64x32x32xf32>
  %0 = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>, tensor<64xf32>) -> tensor<8x64x32x32xf32>
  // Depthwise, strided, dilated, no bias: (32 + 2*2 - 2*2 - 1) / 2 + 1 = 16.
  // CHECK: tcc.conv2d {{.*}} : (tensor<8x64x32x32xf32>, tensor<64x1x3x3xf32>) -> tensor<8x64x16x16xf32>
  %1 = tcc.conv2d %0, %dw {dilation = array<i64: 2, 2>, groups = 64 : i64, padding = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<8x64x32x32xf32>, tensor<64x1x3x3xf32>) -> tensor<8x64x16x16xf32>
  // CHECK: tcc.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x256xf32>, tensor<10x256xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %2 = tcc.linear %f, %lw, %lb : (tensor<8x256xf32>, tensor<10x256xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  // CHECK: tcc.linear %{{.*}}, %{{.*}} : (tensor<8x256xf32>, tensor<10x256xf32>) -> tensor<8x10xf32>
  %3 = tcc.linear %f, %lw : (tensor<8x256xf32>, tensor<10x256xf32>) -> tensor<8x10xf32>
  return
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<8x16x4x4xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %m: tensor<16xf32>,
                 %v: tensor<16xf32>, %h: tensor<8x64xbf16>, %lg: tensor<64xf32>) {
  // CHECK: tcc.batch_norm %{{.*}} weight %{{.*}} bias %{{.*}} running %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64, ghost_batch = 0 : i64, momentum = 1.000000e-01 : f64} : {{.*}} -> (tensor<8x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y:5 = tcc.batch_norm %x weight %g bias %b running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  // Ghost batches of 2 and only a shift: statistics per ghost batch.
  // CHECK: tcc.batch_norm %{{.*}} bias %{{.*}} running {{.*}} -> (tensor<8x16x4x4xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %z:5 = tcc.batch_norm %x bias %b running %m, %v {eps = 1.0e-12 : f64, ghost_batch = 2 : i64, momentum = 4.0e-01 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  // CHECK: tcc.batch_norm_inference %{{.*}} weight %{{.*}} running %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %i = tcc.batch_norm_inference %x weight %g running %m, %v {eps = 1.0e-05 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  // CHECK: tcc.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} {eps = 1.000000e-05 : f64, normalized_dims = 1 : i64} : (tensor<8x64xbf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xbf16>, tensor<8xf32>, tensor<8xf32>)
  %l:3 = tcc.layer_norm %h weight %lg bias %lg {eps = 1.0e-05 : f64, normalized_dims = 1 : i64} : (tensor<8x64xbf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xbf16>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: tcc.layer_norm %{{.*}} {eps = 1.000000e-05 : f64, normalized_dims = 3 : i64} : (tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<8xf32>, tensor<8xf32>)
  %n:3 = tcc.layer_norm %x {eps = 1.0e-05 : f64, normalized_dims = 3 : i64} : (tensor<8x16x4x4xf32>) -> (tensor<8x16x4x4xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<8x16xf32>, %h: tensor<4x4xf16>) {
  // CHECK: tcc.relu %{{.*}} : tensor<8x16xf32>
  %0 = tcc.relu %x : tensor<8x16xf32>
  // CHECK: tcc.leaky_relu %{{.*}} {negative_slope = 1.000000e-02 : f64} : tensor<8x16xf32>
  %1 = tcc.leaky_relu %0 {negative_slope = 1.0e-02 : f64} : tensor<8x16xf32>
  // CHECK: tcc.elu %{{.*}} {alpha = 1.000000e+00 : f64} : tensor<8x16xf32>
  %2 = tcc.elu %1 {alpha = 1.0 : f64} : tensor<8x16xf32>
  // CHECK: tcc.celu %{{.*}} {alpha = 3.000000e-01 : f64} : tensor<8x16xf32>
  %3 = tcc.celu %2 {alpha = 0.3 : f64} : tensor<8x16xf32>
  // The default approximation is not printed.
  // CHECK: tcc.gelu %{{.*}} : tensor<8x16xf32>
  %4 = tcc.gelu %3 : tensor<8x16xf32>
  // CHECK: tcc.gelu %{{.*}} {approximate = "tanh"} : tensor<8x16xf32>
  %5 = tcc.gelu %4 {approximate = "tanh"} : tensor<8x16xf32>
  // CHECK: tcc.silu %{{.*}} : tensor<8x16xf32>
  %6 = tcc.silu %5 : tensor<8x16xf32>
  // CHECK: tcc.sigmoid %{{.*}} : tensor<8x16xf32>
  %7 = tcc.sigmoid %6 : tensor<8x16xf32>
  // CHECK: tcc.tanh %{{.*}} : tensor<4x4xf16>
  %8 = tcc.tanh %h : tensor<4x4xf16>
  // CHECK: tcc.scale %{{.*}} {factor = 1.250000e-01 : f64} : tensor<8x16xf32>
  %9 = tcc.scale %7 {factor = 0.125 : f64} : tensor<8x16xf32>
  return
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<8x16x32x32xf32>, %o: tensor<8x16x7x7xf32>) {
  // CHECK: tcc.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  // Floor mode: (7 - 3) / 3 + 1 = 2.
  // CHECK: tcc.max_pool2d {{.*}} -> tensor<8x16x2x2xf32>
  %1 = tcc.max_pool2d %o {kernel = array<i64: 3, 3>, padding = array<i64: 0, 0>, stride = array<i64: 3, 3>} : (tensor<8x16x7x7xf32>) -> tensor<8x16x2x2xf32>
  // CHECK: tcc.avg_pool2d %{{.*}} {count_include_pad = false, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  %2 = tcc.avg_pool2d %x {count_include_pad = false, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  // CHECK: tcc.global_avg_pool %{{.*}} : (tensor<8x16x32x32xf32>) -> tensor<8x16xf32>
  %3 = tcc.global_avg_pool %x : (tensor<8x16x32x32xf32>) -> tensor<8x16xf32>
  // CHECK: tcc.global_max_pool %{{.*}} : (tensor<8x16x32x32xf32>) -> tensor<8x16xf32>
  %4 = tcc.global_max_pool %x : (tensor<8x16x32x32xf32>) -> tensor<8x16xf32>
  return
}

// CHECK-LABEL: func.func @binary_and_shape
func.func @binary_and_shape(%a: tensor<8x16x4x4xf32>, %b: tensor<8x8x4x4xf32>, %f: tensor<8x64xf32>,
                            %u: tensor<8x3x2x2xui8>) {
  // CHECK: tcc.add %{{.*}}, %{{.*}} : tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>
  %0 = tcc.add %a, %a : tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>
  // CHECK: tcc.mul %{{.*}}, %{{.*}} : tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>
  %1 = tcc.mul %0, %a : tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>
  // CHECK: tcc.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<8x16x4x4xf32>, tensor<8x8x4x4xf32>) -> tensor<8x24x4x4xf32>
  %2 = tcc.concat %1, %b {axis = 1 : i64} : (tensor<8x16x4x4xf32>, tensor<8x8x4x4xf32>) -> tensor<8x24x4x4xf32>
  // CHECK: tcc.flatten %{{.*}} : (tensor<8x24x4x4xf32>) -> tensor<8x384xf32>
  %3 = tcc.flatten %2 : (tensor<8x24x4x4xf32>) -> tensor<8x384xf32>
  // CHECK: tcc.reshape %{{.*}} {shape = array<i64: 8, 4, 16>} : (tensor<8x64xf32>) -> tensor<8x4x16xf32>
  %4 = tcc.reshape %f {shape = array<i64: 8, 4, 16>} : (tensor<8x64xf32>) -> tensor<8x4x16xf32>
  // CHECK: tcc.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<8x16x4x4xf32>) -> tensor<8x4x4x16xf32>
  %5 = tcc.transpose %a {perm = array<i64: 0, 2, 3, 1>} : (tensor<8x16x4x4xf32>) -> tensor<8x4x4x16xf32>
  // CHECK: tcc.cast %{{.*}} to bf16 : (tensor<8x64xf32>) -> tensor<8x64xbf16>
  %6 = tcc.cast %f to bf16 : (tensor<8x64xf32>) -> tensor<8x64xbf16>
  // CHECK: tcc.cast %{{.*}} to f32 : (tensor<8x3x2x2xui8>) -> tensor<8x3x2x2xf32>
  %7 = tcc.cast %u to f32 : (tensor<8x3x2x2xui8>) -> tensor<8x3x2x2xf32>
  return
}

// CHECK-LABEL: func.func @probabilities_and_losses
func.func @probabilities_and_losses(%x: tensor<8x10xf32>, %seed: tensor<i64>, %labels: tensor<8xi64>) {
  // CHECK: tcc.dropout %{{.*}}, %{{.*}} {p = 5.000000e-01 : f64, stream = 3 : i64} : (tensor<8x10xf32>, tensor<i64>) -> tensor<8x10xf32>
  %0 = tcc.dropout %x, %seed {p = 0.5 : f64, stream = 3 : i64} : (tensor<8x10xf32>, tensor<i64>) -> tensor<8x10xf32>
  // CHECK: tcc.softmax %{{.*}} {axis = 1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %1 = tcc.softmax %0 {axis = 1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  // CHECK: tcc.log_softmax %{{.*}} {axis = 1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %2 = tcc.log_softmax %0 {axis = 1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  // CHECK: tcc.cross_entropy %{{.*}}, %{{.*}} {label_smoothing = 2.000000e-01 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %3 = tcc.cross_entropy %x, %labels {label_smoothing = 0.2 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: tcc.one_hot %{{.*}} {classes = 10 : i64} : (tensor<8xi64>) -> tensor<8x10xf32>
  %4 = tcc.one_hot %labels {classes = 10 : i64} : (tensor<8xi64>) -> tensor<8x10xf32>
  // CHECK: tcc.mse_loss %{{.*}}, %{{.*}} {reduction = "sum"} : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f32>
  %5 = tcc.mse_loss %x, %4 {reduction = "sum"} : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%g: tensor<16x8xf32>, %b: tensor<16xf32>) -> (tensor<16x8xf32>, tensor<16xf32>) {
  // CHECK: tcc.all_reduce "sum" %{{.*}}, %{{.*}} : tensor<16x8xf32>, tensor<16xf32>
  %0:2 = tcc.all_reduce "sum" %g, %b : tensor<16x8xf32>, tensor<16xf32>
  // CHECK: tcc.all_reduce "mean" %{{.*}} : tensor<16xf32>
  %1 = tcc.all_reduce "mean" %0#1 : tensor<16xf32>
  return %0#0, %1 : tensor<16x8xf32>, tensor<16xf32>
}

// Sharded state: a rank's chunk, the gather of the chunks, the reduce-scatter.
// CHECK-LABEL: func.func @sharded
func.func @sharded(%w: tensor<10x3xf32>, %b: tensor<3xf32>) -> (tensor<10x3xf32>, tensor<3xf32>) {
  // CHECK: tcc.shard %{{.*}} {ranks = 4 : i64} : tensor<10x3xf32> -> tensor<8xf32>
  %ws = tcc.shard %w {ranks = 4 : i64} : tensor<10x3xf32> -> tensor<8xf32>
  // CHECK: tcc.reduce_scatter %{{.*}}, %{{.*}} {ranks = 4 : i64} : tensor<10x3xf32>, tensor<3xf32> -> tensor<8xf32>, tensor<1xf32>
  %gs:2 = tcc.reduce_scatter %w, %b {ranks = 4 : i64} : tensor<10x3xf32>, tensor<3xf32> -> tensor<8xf32>, tensor<1xf32>
  // CHECK: tcc.all_gather %{{.*}}, %{{.*}} {ranks = 4 : i64} : tensor<8xf32>, tensor<1xf32> -> tensor<10x3xf32>, tensor<3xf32>
  %all:2 = tcc.all_gather %ws, %gs#1 {ranks = 4 : i64} : tensor<8xf32>, tensor<1xf32> -> tensor<10x3xf32>, tensor<3xf32>
  return %all#0, %all#1 : tensor<10x3xf32>, tensor<3xf32>
}

// A synchronised batch norm over 2 ranks, forward and backward.
// CHECK-LABEL: func.func @sync_batch_norm
func.func @sync_batch_norm(%x: tensor<8x4x3x3xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>,
                           %m: tensor<4xf32>, %v: tensor<4xf32>, %dy: tensor<8x4x3x3xf32>)
    -> (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) {
  // CHECK: tcc.batch_norm_sums %{{.*}} {ranks = 2 : i64} : (tensor<8x4x3x3xf32>) -> tensor<4xf64>
  %s = tcc.batch_norm_sums %x {ranks = 2 : i64} : (tensor<8x4x3x3xf32>) -> tensor<4xf64>
  // CHECK: tcc.all_reduce "sum" %{{.*}} : tensor<4xf64>
  %S = tcc.all_reduce "sum" %s : tensor<4xf64>
  // CHECK: tcc.batch_norm_sums %{{.*}} centered %{{.*}} {ranks = 2 : i64}
  %q = tcc.batch_norm_sums %x centered %S {ranks = 2 : i64}
      : (tensor<8x4x3x3xf32>, tensor<4xf64>) -> tensor<4xf64>
  %Q = tcc.all_reduce "sum" %q : tensor<4xf64>
  // CHECK: tcc.batch_norm %{{.*}} weight %{{.*}} bias %{{.*}} running %{{.*}}, %{{.*}} statistics %{{.*}}, %{{.*}} {{{.*}}ranks = 2 : i64}
  %y, %mean, %invstd, %rm, %rv = tcc.batch_norm %x weight %w bias %b running %m, %v statistics %S, %Q
      {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, ranks = 2 : i64}
      : (tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf64>)
      -> (tensor<8x4x3x3xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: tcc.batch_norm_backward_sums %{{.*}}, %{{.*}} saved %{{.*}}, %{{.*}} : {{.*}} -> (tensor<2x4xf64>, tensor<4xf32>, tensor<4xf32>)
  %t, %dw, %db = tcc.batch_norm_backward_sums %dy, %x saved %mean, %invstd
      : (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>, tensor<1x4xf32>, tensor<1x4xf32>)
      -> (tensor<2x4xf64>, tensor<4xf32>, tensor<4xf32>)
  %T = tcc.all_reduce "sum" %t : tensor<2x4xf64>
  // CHECK: tcc.batch_norm_backward_input %{{.*}}, %{{.*}} weight %{{.*}} saved %{{.*}}, %{{.*}} sums %{{.*}} {ranks = 2 : i64}
  %dx = tcc.batch_norm_backward_input %dy, %x weight %w saved %mean, %invstd sums %T {ranks = 2 : i64}
      : (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<2x4xf64>)
      -> tensor<8x4x3x3xf32>
  return %y, %dx, %dw : tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>
}
