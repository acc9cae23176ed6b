// RUN: tcc-opt %s -tcc-channels-last -split-input-file | FileCheck %s
// RUN: tcc-opt %s -tcc-channels-last -split-input-file | FileCheck %s --check-prefix=REPORT

// Fires: the activations of a 16-bit conv, forward and backward, and what
// shares their layout (the widening cast, a strided ghost batch norm, the
// activation and its cast back, the max pool, the next conv) are stored
// NHWC. The f32 input batch stays NCHW (an argument): its cast to f16
// converts the layout. The weights (arguments) and the weight gradient
// stay KCRS; the pooled [n, c, 1, 1] tensor is the same bytes in both
// layouts, so nothing marks it, and the flatten reads it as it is.
// CHECK-LABEL: func.func @conv_block
// CHECK: tcc.cast %arg0 to f16 {tcc.channels_last}
// CHECK-NEXT: tcc.conv2d {{.*}}tcc.channels_last
// CHECK-NEXT: tcc.cast {{.*}} to f32 {tcc.channels_last}
// CHECK-NEXT: tcc.batch_norm {{.*}}ghost_strided = true{{.*}}tcc.channels_last
// CHECK-NEXT: tcc.relu {{.*}}{tcc.channels_last}
// CHECK-NEXT: tcc.cast {{.*}} to f16 {tcc.channels_last}
// CHECK-NEXT: tcc.max_pool2d {{.*}}tcc.channels_last
// CHECK-NEXT: tcc.conv2d {{.*}}tcc.channels_last
// CHECK-NEXT: tcc.max_pool2d
// CHECK-NOT: tcc.channels_last
// CHECK-SAME: -> tensor<4x16x1x1xf16>
// CHECK-NEXT: tcc.flatten
// CHECK-NOT: tcc.channels_last
// CHECK-SAME: -> tensor<4x16xf16>
// CHECK-NEXT: tcc.conv2d_backward_data {{.*}}tcc.channels_last
// CHECK-NEXT: tcc.conv2d_backward_filter
// CHECK-NOT: tcc.channels_last
// CHECK-SAME: -> tensor<16x8x3x3xf16>
// CHECK-NEXT: tcc.reduce_sum
// CHECK-NOT: tcc.channels_last
// CHECK-SAME: -> tensor<8xf16>
// REPORT: "channels-last" = {kept_nchw = 0 : i64, relayouts = 1 : i64, values = 9 : i64}
func.func @conv_block(%x: tensor<4x3x8x8xf32>, %w1: tensor<8x3x3x3xf16>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<16x8x3x3xf16>) -> (tensor<4x16xf16>, tensor<8xf16>, tensor<16x8x3x3xf16>) {
  %0 = tcc.cast %x to f16 : (tensor<4x3x8x8xf32>) -> tensor<4x3x8x8xf16>
  %1 = tcc.conv2d %0, %w1 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x3x8x8xf16>, tensor<8x3x3x3xf16>) -> tensor<4x8x8x8xf16>
  %2 = tcc.cast %1 to f32 : (tensor<4x8x8x8xf16>) -> tensor<4x8x8x8xf32>
  %y, %sm, %si, %rm, %rv = tcc.batch_norm %2 weight %gamma bias %beta running %mean, %var {eps = 1.0e-05 : f64, ghost_batch = 2 : i64, ghost_strided = true, momentum = 1.000000e-01 : f64} : (tensor<4x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %3 = tcc.relu %y : tensor<4x8x8x8xf32>
  %4 = tcc.cast %3 to f16 : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf16>
  %5 = tcc.max_pool2d %4 {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<4x8x8x8xf16>) -> tensor<4x8x4x4xf16>
  %6 = tcc.conv2d %5, %w2 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x8x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<4x16x4x4xf16>
  %7 = tcc.max_pool2d %6 {kernel = array<i64: 4, 4>, padding = array<i64: 0, 0>, stride = array<i64: 4, 4>} : (tensor<4x16x4x4xf16>) -> tensor<4x16x1x1xf16>
  %8 = tcc.flatten %7 : (tensor<4x16x1x1xf16>) -> tensor<4x16xf16>
  %9 = tcc.conv2d_backward_data %6, %w2 {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 4, 8, 4, 4>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<4x8x4x4xf16>
  %10 = tcc.conv2d_backward_filter %6, %5 {dilation = array<i64: 1, 1>, groups = 1 : i64, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x16x4x4xf16>, tensor<4x8x4x4xf16>) -> tensor<16x8x3x3xf16>
  %11 = tcc.reduce_sum %9 {axes = array<i64: 0, 2, 3>} : (tensor<4x8x4x4xf16>) -> tensor<8xf16>
  return %8, %11, %10 : tensor<4x16xf16>, tensor<8xf16>, tensor<16x8x3x3xf16>
}

// -----

// Must not fire: f32 convolutions (cuDNN's f32 engines take NCHW; the
// whole step stays as it is).
// CHECK-LABEL: func.func @f32_conv
// CHECK-NOT: tcc.channels_last
// CHECK: return
// REPORT: "channels-last" = {kept_nchw = 0 : i64, relayouts = 0 : i64, values = 0 : i64}
func.func @f32_conv(%x: tensor<4x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<4x8x8x8xf32> {
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x8x8xf32>
  %1 = tcc.relu %0 : tensor<4x8x8x8xf32>
  return %1 : tensor<4x8x8x8xf32>
}

// -----

// Must not fire: a 16-bit conv's output read by an op that reads NCHW (a
// flatten of several pixels; the elementwise ops between join its class,
// so they stay NCHW too), or returned by the function. Both are counted as
// kept NCHW.
// CHECK-LABEL: func.func @kept_nchw
// CHECK-NOT: tcc.channels_last
// CHECK: return
// REPORT: "channels-last" = {kept_nchw = 5 : i64, relayouts = 0 : i64, values = 0 : i64}
func.func @kept_nchw(%x: tensor<4x3x8x8xbf16>, %w: tensor<8x3x3x3xbf16>) -> (tensor<4x512xbf16>, tensor<4x8x8x8xbf16>) {
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x3x8x8xbf16>, tensor<8x3x3x3xbf16>) -> tensor<4x8x8x8xbf16>
  %1 = tcc.cast %0 to f32 : (tensor<4x8x8x8xbf16>) -> tensor<4x8x8x8xf32>
  %2 = tcc.relu %1 : tensor<4x8x8x8xf32>
  %3 = tcc.cast %2 to bf16 : (tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xbf16>
  %4 = tcc.flatten %3 : (tensor<4x8x8x8xbf16>) -> tensor<4x512xbf16>
  %5 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x3x8x8xbf16>, tensor<8x3x3x3xbf16>) -> tensor<4x8x8x8xbf16>
  return %4, %5 : tensor<4x512xbf16>, tensor<4x8x8x8xbf16>
}
