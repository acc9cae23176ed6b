// RUN: tcc-opt %s -split-input-file -tcc-cuda-dgrad-statistics | FileCheck %s

// A whole-batch norm in pure fp16 whose output gradient is the ReLU
// backward of the next convolution's backward-data (conv -> norm -> ReLU ->
// conv), every tensor NHWC, dy stored fp16: its backward becomes the
// synchronised norm's for one rank, the sums of dy and dy * (x - mean) (and
// the scale and shift gradients) first, dx from them. Both read the fp16 dy
// and x (their widening casts go) and dx is fp16: the cast that narrowed
// the f32 dx goes, a reader of the f32 one gets a widened copy. cuDNN 9.19
// has no engine for the dgrad + drelu + dbn_weight graph on the h100: the
// report counts the dgrad under no_engine (its sums run as kernels).
// CHECK: tcc.pass_report = {"cuda-dgrad-statistics" = {no_engine = 1 : i64, norms = 1 : i64}}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.*]] = tcc.cast %arg2 to f16
// CHECK-NEXT: %[[X:.*]] = tcc.cast %arg3 to f16
// CHECK-NEXT: tcc.conv2d_backward_data
// CHECK: tcc.relu_backward
// CHECK-NEXT: %[[DY:.*]] = tcc.cast %{{.*}} to f16 {tcc.channels_last}
// CHECK-NEXT: %[[S:.*]], %[[DW:.*]], %[[DB:.*]] = tcc.batch_norm_backward_sums %[[DY]], %[[X]] saved %arg5, %arg6 {tcc.channels_last} : (tensor<8x8x8x8xf16>, tensor<8x8x8x8xf16>,
// CHECK-NEXT: %[[DX:.*]] = tcc.batch_norm_backward_input %[[DY]], %[[X]] weight %arg4 saved %arg5, %arg6 sums %[[S]] {ranks = 1 : i64, tcc.channels_last} : {{.*}} -> tensor<8x8x8x8xf16>
// CHECK-NEXT: %[[WIDE:.*]] = tcc.cast %[[DX]] to f32 {tcc.channels_last}
// CHECK-NEXT: return %[[WIDE]], %[[DX]], %[[DW]], %[[DB]]
func.func @train_step(%dn32: tensor<8x16x4x4xf32> {tcc.role = "input"}, %w: tensor<16x8x3x3xf16>,
                      %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>,
                      %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>)
    -> (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf16>, tensor<8xf32>, tensor<8xf32>) {
  %dn = tcc.cast %dn32 to f16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %dxh = tcc.cast %dx to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  return %dx, %dxh, %dw, %db : tensor<8x8x8x8xf32>, tensor<8x8x8x8xf16>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Where it must not fire (each norm keeps its one backward op):
//  @bf16 and @f32: no fp16 graph; @ghost: ghost batches (the graph's sums
//  are over the whole batch); @celu: an activation other than ReLU;
//  @nchw: tensors stored NCHW; @dz_read: the dgrad's result has another
//  reader; @dy_read: dy's fp16 copy has another reader; @no_dgrad: dy is
//  not written by a convolution's backward-data; @inexact: the norm's dy is
//  not the fp16 one's exact copy (narrowed to bf16 on its way).
// CHECK: tcc.pass_report = {"cuda-dgrad-statistics" = {no_engine = 0 : i64, norms = 0 : i64}}
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @bf16(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xbf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> tensor<8x8x8x8xf32> {
  %dn = tcc.cast %dn32 to bf16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xbf16>
  %r = tcc.cast %r32 to bf16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xbf16>
  %x = tcc.cast %x32 to bf16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xbf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xbf16>, tensor<16x8x3x3xbf16>) -> tensor<8x8x8x8xbf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xbf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xbf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to bf16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xbf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xbf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xbf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
// CHECK-LABEL: func.func @f32
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @f32(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf32>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> tensor<8x8x8x8xf32> {
  %dn = tcc.relu %dn32 {tcc.channels_last} : tensor<8x16x4x4xf32>
  %r = tcc.relu %r32 {tcc.channels_last} : tensor<8x8x8x8xf32>
  %x = tcc.relu %x32 {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<8x8x8x8xf32>
  %dy = tcc.relu_backward %dz, %r {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %x weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
// CHECK-LABEL: func.func @ghost
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @ghost(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<2x8xf32>, %inv: tensor<2x8xf32>) -> tensor<8x8x8x8xf32> {
  %dn = tcc.cast %dn32 to f16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 4 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
// CHECK-LABEL: func.func @celu
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @celu(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> tensor<8x8x8x8xf32> {
  %dn = tcc.cast %dn32 to f16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.celu_backward %dzf, %rf {alpha = 3.0e-01 : f64, tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
// CHECK-LABEL: func.func @nchw
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @nchw(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> tensor<8x8x8x8xf32> {
  %dn = tcc.cast %dn32 to f16 : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
// CHECK-LABEL: func.func @dz_read
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @dz_read(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf16>) {
  %dn = tcc.cast %dn32 to f16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %dz : tensor<8x8x8x8xf32>, tensor<8x8x8x8xf16>
}
// CHECK-LABEL: func.func @dy_read
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @dy_read(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf16>) {
  %dn = tcc.cast %dn32 to f16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %dy16 : tensor<8x8x8x8xf32>, tensor<8x8x8x8xf16>
}
// CHECK-LABEL: func.func @no_dgrad
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @no_dgrad(%dz32: tensor<8x8x8x8xf32>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> tensor<8x8x8x8xf32> {
  %dz = tcc.cast %dz32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dy = tcc.cast %dy16 to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
// CHECK-LABEL: func.func @inexact
// CHECK-NOT: tcc.batch_norm_backward_sums
// CHECK: tcc.batch_norm_backward %
func.func @inexact(%dn32: tensor<8x16x4x4xf32>, %w: tensor<16x8x3x3xf16>, %r32: tensor<8x8x8x8xf32>, %x32: tensor<8x8x8x8xf32>, %g: tensor<8xf32>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>) -> tensor<8x8x8x8xf32> {
  %dn = tcc.cast %dn32 to f16 {tcc.channels_last} : (tensor<8x16x4x4xf32>) -> tensor<8x16x4x4xf16>
  %r = tcc.cast %r32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %x = tcc.cast %x32 to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dz = tcc.conv2d_backward_data %dn, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 8, 8, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<8x16x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<8x8x8x8xf16>
  %dzf = tcc.cast %dz to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %rf = tcc.cast %r to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dyf = tcc.relu_backward %dzf, %rf {tcc.channels_last} : tensor<8x8x8x8xf32>
  %dy16 = tcc.cast %dyf to f16 {tcc.channels_last} : (tensor<8x8x8x8xf32>) -> tensor<8x8x8x8xf16>
  %dyb = tcc.cast %dy16 to bf16 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xbf16>
  %dy = tcc.cast %dyb to f32 {tcc.channels_last} : (tensor<8x8x8x8xbf16>) -> tensor<8x8x8x8xf32>
  %xf = tcc.cast %x to f32 {tcc.channels_last} : (tensor<8x8x8x8xf16>) -> tensor<8x8x8x8xf32>
  %dx, %dw, %db = tcc.batch_norm_backward %dy, %xf weight %g saved %mean, %inv {ghost_batch = 0 : i64, tcc.channels_last} : (tensor<8x8x8x8xf32>, tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<8x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx : tensor<8x8x8x8xf32>
}
