// RUN: tcc-opt %s -split-input-file -tcc-cuda-conv-statistics | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-cuda-conv-statistics -tcc-fusion=epilogue-patterns=cudnn-conv-genstats | FileCheck %s --check-prefix=FUSED
// RUN: tcc-opt %s -split-input-file -tcc-cuda-conv-statistics=gpu=a100 | FileCheck %s --check-prefix=A100

// A whole-batch norm of an fp16 NHWC convolution's result (through the cast
// that widens it, tcc-widen-16bit's) takes its statistics from the
// convolution: the sum of its result and the centered sum around it, right
// after the conv, become the norm's `statistics` (one rank). With
// tcc-fusion's cudnn-conv-genstats pattern the conv and the two sums are a
// conv_statistics group (cuDNN's conv_fprop + genstats), and the norm,
// reading the 16-bit result through its widening load, keeps its epilogue.
// CHECK: tcc.pass_report = {"cuda-conv-statistics" = {no_engine = 0 : i64, norms = 1 : i64}}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = tcc.conv2d %arg0, %arg1
// CHECK-NEXT: %[[S:.*]] = tcc.batch_norm_sums %[[Y]] {ranks = 1 : i64} : (tensor<8x16x8x8xf16>) -> tensor<16xf64>
// CHECK-NEXT: %[[Q:.*]] = tcc.batch_norm_sums %[[Y]] centered %[[S]] {ranks = 1 : i64}
// CHECK: %[[F:.*]] = tcc.cast %[[Y]] to f32
// CHECK: tcc.batch_norm %[[F]] weight %arg2 bias %arg3 running %arg4, %arg5 statistics %[[S]], %[[Q]]
// FUSED-LABEL: func.func @train_step
// FUSED: %[[G:.*]]:3 = tcc.fusion_group "conv_statistics" -> (tensor<8x16x8x8xf16>, tensor<16xf64>, tensor<16xf64>) {
// FUSED-NEXT: %[[Y:.*]] = tcc.conv2d
// FUSED-NEXT: %[[S:.*]] = tcc.batch_norm_sums %[[Y]]
// FUSED-NEXT: %[[Q:.*]] = tcc.batch_norm_sums %[[Y]] centered %[[S]]
// FUSED-NEXT: tcc.yield %[[Y]], %[[S]], %[[Q]]
// FUSED: tcc.fusion_group "norm_epilogue"
// FUSED-NEXT: tcc.cast %[[G]]#0 to f32
// FUSED-NEXT: tcc.batch_norm {{.*}} statistics %[[G]]#1, %[[G]]#2
// A100: norms = 1 : i64
func.func @train_step(%x: tensor<8x16x8x8xf16> {tcc.role = "input"}, %w: tensor<16x16x3x3xf16>,
                      %g: tensor<16xf32>, %b: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>)
    -> (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) {
  %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<8x16x8x8xf16>
  %f = tcc.cast %y to f32 {tcc.channels_last} : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %n, %mean, %invstd, %rm, %rv = tcc.batch_norm %f weight %g bias %b running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %r = tcc.gelu %n {approximate = "none", tcc.channels_last} : tensor<8x16x8x8xf32>
  return %r, %rm, %rv : tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Where it must not fire: bf16 (cuDNN 9.19 has no genstats engine for it),
// f32, a ghost batch norm (genstats gives whole-batch sums only), a conv
// with a bias, an activation between the conv and the norm, an fp16 conv
// stored NCHW (the graph needs NHWC), and a norm already synchronised over
// ranks. The norms keep their own statistics.
// CHECK: tcc.pass_report = {"cuda-conv-statistics" = {no_engine = 0 : i64, norms = 0 : i64}}
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: tcc.batch_norm_sums
// CHECK: return
func.func @train_step(%xb: tensor<8x16x8x8xbf16> {tcc.role = "input"}, %wb: tensor<16x16x3x3xbf16>,
                      %x: tensor<8x16x8x8xf32>, %w: tensor<16x16x3x3xf32>,
                      %xh: tensor<8x16x8x8xf16>, %wh: tensor<16x16x3x3xf16>, %bh: tensor<16xf16>,
                      %m: tensor<16xf32>, %v: tensor<16xf32>)
    -> (tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>) {
  %yb = tcc.conv2d %xb, %wb {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xbf16>, tensor<16x16x3x3xbf16>) -> tensor<8x16x8x8xbf16>
  %fb = tcc.cast %yb to f32 {tcc.channels_last} : (tensor<8x16x8x8xbf16>) -> tensor<8x16x8x8xf32>
  %n0, %a0, %b0, %c0, %d0 = tcc.batch_norm %fb running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y1 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<8x16x8x8xf32>
  %n1, %a1, %b1, %c1, %d1 = tcc.batch_norm %y1 running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y2 = tcc.conv2d %xh, %wh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<8x16x8x8xf16>
  %f2 = tcc.cast %y2 to f32 {tcc.channels_last} : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %n2, %a2, %b2, %c2, %d2 = tcc.batch_norm %f2 running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 4 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y3 = tcc.conv2d %xh, %wh, %bh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xf16>, tensor<16x16x3x3xf16>, tensor<16xf16>) -> tensor<8x16x8x8xf16>
  %f3 = tcc.cast %y3 to f32 {tcc.channels_last} : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %n3, %a3, %b3, %c3, %d3 = tcc.batch_norm %f3 running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y4 = tcc.conv2d %xh, %wh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<8x16x8x8xf16>
  %f4 = tcc.cast %y4 to f32 {tcc.channels_last} : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %r4 = tcc.relu %f4 {tcc.channels_last} : tensor<8x16x8x8xf32>
  %n4, %a4, %b4, %c4, %d4 = tcc.batch_norm %r4 running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y5 = tcc.conv2d %xh, %wh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<8x16x8x8xf16>
  %f5 = tcc.cast %y5 to f32 : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %n5, %a5, %b5, %c5, %d5 = tcc.batch_norm %f5 running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %n0, %n1, %n2, %n3, %n4, %n5 : tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>
}

// -----

// A grouped fp16 convolution: cuDNN 9.19 has no conv + genstats engine for
// it on the h100, so the norm keeps its own statistics (decided here, at
// compile time) and the report names the conv.
// CHECK: tcc.pass_report = {"cuda-conv-statistics" = {no_engine = 1 : i64, no_engine_nodes = ["grouped"], norms = 0 : i64}}
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: tcc.batch_norm_sums
// CHECK: tcc.batch_norm %{{.*}} running %arg2, %arg3 {
func.func @train_step(%x: tensor<8x16x8x8xf16> {tcc.role = "input"}, %w: tensor<16x4x3x3xf16>, %m: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<8x16x8x8xf32> {
  %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xf16>, tensor<16x4x3x3xf16>) -> tensor<8x16x8x8xf16> loc("grouped")
  %f = tcc.cast %y to f32 {tcc.channels_last} : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %n, %a, %b, %c, %d = tcc.batch_norm %f running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x8x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %n : tensor<8x16x8x8xf32>
}

// -----

// The evaluation step's norms normalise with their running statistics
// (tcc.batch_norm_inference): nothing to gather. (The @train_step is for
// tcc-fusion, which wants one.)
// CHECK: tcc.pass_report = {"cuda-conv-statistics" = {no_engine = 0 : i64, norms = 0 : i64}}
// CHECK-LABEL: func.func @eval_step
// CHECK-NOT: tcc.batch_norm_sums
// CHECK: tcc.batch_norm_inference
func.func @eval_step(%x: tensor<8x16x8x8xf16> {tcc.role = "input"}, %w: tensor<16x16x3x3xf16>, %m: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<8x16x8x8xf32> {
  %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<8x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<8x16x8x8xf16>
  %f = tcc.cast %y to f32 {tcc.channels_last} : (tensor<8x16x8x8xf16>) -> tensor<8x16x8x8xf32>
  %n = tcc.batch_norm_inference %f running %m, %v {eps = 1.0e-05 : f64, tcc.channels_last} : (tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x8x8xf32>
  return %n : tensor<8x16x8x8xf32>
}
func.func @train_step(%x: tensor<8x16xf32> {tcc.role = "input"}) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}
