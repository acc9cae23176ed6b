// RUN: tcc-opt %s -tcc-pad-channels -split-input-file | FileCheck %s
// RUN: tcc-opt %s -tcc-pad-channels -split-input-file | FileCheck %s --check-prefix=REPORT
// RUN: tcc-opt %s -tcc-pad-channels=channels=4 -split-input-file | FileCheck %s --check-prefix=FOUR
// RUN: tcc-opt %s -tcc-pad-channels -tcc-channels-last -split-input-file | FileCheck %s --check-prefix=LAYOUT

// Fires: a 16-bit convolution of 3 channels (an RGB batch) reads its input
// and its weight padded with zero channels to 8; its result keeps its type.
// With channels=4, to 4. Under tcc-channels-last the padded input is NHWC
// with the conv (the pad joins its operand's class, the cast converts) and
// the padded weight stays KCRS.
// CHECK-LABEL: func.func @rgb
// CHECK: %[[X:.*]] = tcc.cast %arg0 to bf16
// CHECK-NEXT: %[[XP:.*]] = tcc.pad_channels %[[X]] {channels = 8 : i64} : (tensor<4x3x8x8xbf16>) -> tensor<4x8x8x8xbf16>
// CHECK-NEXT: %[[WP:.*]] = tcc.pad_channels %arg1 {channels = 8 : i64} : (tensor<16x3x3x3xbf16>) -> tensor<16x8x3x3xbf16>
// CHECK-NEXT: tcc.conv2d %[[XP]], %[[WP]], %arg2 {{.*}} : (tensor<4x8x8x8xbf16>, tensor<16x8x3x3xbf16>, tensor<16xbf16>) -> tensor<4x16x8x8xbf16>
// REPORT: "pad-channels" = {padded = 1 : i64}
// FOUR: tcc.pad_channels {{.*}} {channels = 4 : i64} : (tensor<4x3x8x8xbf16>) -> tensor<4x4x8x8xbf16>
// LAYOUT: tcc.cast %arg0 to bf16 {tcc.channels_last}
// LAYOUT-NEXT: tcc.pad_channels {{.*}}tcc.channels_last
// LAYOUT-NEXT: tcc.pad_channels
// LAYOUT-NOT: tcc.channels_last
// LAYOUT-SAME: -> tensor<16x8x3x3xbf16>
// LAYOUT-NEXT: tcc.conv2d {{.*}}tcc.channels_last
func.func @rgb(%x: tensor<4x3x8x8xf32>, %w: tensor<16x3x3x3xbf16>, %b: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = tcc.cast %x to bf16 : (tensor<4x3x8x8xf32>) -> tensor<4x3x8x8xbf16>
  %1 = tcc.conv2d %0, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x3x8x8xbf16>, tensor<16x3x3x3xbf16>, tensor<16xbf16>) -> tensor<4x16x8x8xbf16>
  %2 = tcc.max_pool2d %1 {kernel = array<i64: 8, 8>, padding = array<i64: 0, 0>, stride = array<i64: 8, 8>} : (tensor<4x16x8x8xbf16>) -> tensor<4x16x1x1xbf16>
  %3 = tcc.flatten %2 : (tensor<4x16x1x1xbf16>) -> tensor<4x16xbf16>
  return %3 : tensor<4x16xbf16>
}

// -----

// Must not fire: an f32 convolution (cuDNN's f32 engines read a channel at
// a time), 8 and 27 input channels (tensor-core engines ran both), and a
// grouped convolution (each group would need its own padding).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tcc.pad_channels
// CHECK: return
// REPORT: "pad-channels" = {padded = 0 : i64}
func.func @left_alone(%x: tensor<4x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %h: tensor<4x8x8x8xf16>, %w8: tensor<8x8x1x1xf16>, %g: tensor<4x27x8x8xf16>, %w27: tensor<8x27x1x1xf16>, %q: tensor<4x6x8x8xf16>, %wq: tensor<6x3x1x1xf16>) -> (tensor<4x8x8x8xf32>, tensor<4x8x8x8xf16>, tensor<4x8x8x8xf16>, tensor<4x6x8x8xf16>) {
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x8x8xf32>
  %1 = tcc.conv2d %h, %w8 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<4x8x8x8xf16>, tensor<8x8x1x1xf16>) -> tensor<4x8x8x8xf16>
  %2 = tcc.conv2d %g, %w27 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<4x27x8x8xf16>, tensor<8x27x1x1xf16>) -> tensor<4x8x8x8xf16>
  %3 = tcc.conv2d %q, %wq {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<4x6x8x8xf16>, tensor<6x3x1x1xf16>) -> tensor<4x6x8x8xf16>
  return %0, %1, %2, %3 : tensor<4x8x8x8xf32>, tensor<4x8x8x8xf16>, tensor<4x8x8x8xf16>, tensor<4x6x8x8xf16>
}
