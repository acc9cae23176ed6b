// RUN: tcc-opt %s -split-input-file -tcc-fusion=epilogue-patterns=cudnn-conv-bias-relu | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-fusion | FileCheck %s --check-prefix=OFF

// The cuda target's cudnn-conv-bias-relu fusion pattern (cuDNN's fused
// engines add a convolution's bias and apply a ReLU to its f32 sums before
// storing them). An f32 conv with bias whose result only a ReLU reads: one
// conv_epilogue group that yields the ReLU's output only (its backward
// reads that), so the sums never reach memory. Without the pattern (the
// cpu target): no group.
// CHECK: groups_by_kind = {conv_epilogue = 1 : i64}, kernels_after = 2 : i64, kernels_before = 3 : i64
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = tcc.fusion_group "conv_epilogue" -> (tensor<2x5x4x4xf32>) {
// CHECK-NEXT: %[[Y:.*]] = tcc.conv2d %arg0, %arg1, %arg2
// CHECK-NEXT: %[[R:.*]] = tcc.relu %[[Y]]
// CHECK-NEXT: tcc.yield %[[R]] : tensor<2x5x4x4xf32>
// CHECK-NEXT: }
// CHECK: tcc.relu_backward %{{.*}}, %[[G]]
// OFF-NOT: conv_epilogue
func.func @train_step(%x: tensor<2x3x4x4xf32> {tcc.role = "input"}, %w: tensor<5x3x3x3xf32>,
                      %b: tensor<5xf32>, %dy: tensor<2x5x4x4xf32>) -> tensor<2x5x4x4xf32> {
  %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<2x5x4x4xf32>
  %r = tcc.relu %y : tensor<2x5x4x4xf32>
  %d = tcc.relu_backward %dy, %r : tensor<2x5x4x4xf32>
  return %d : tensor<2x5x4x4xf32>
}

// -----

// Under 16-bit storage the ReLU computes on an f32 copy (tcc-widen-16bit):
// the group holds the widening cast, the ReLU and the cast back to the
// conv's type, each read by the next only, and yields the 16-bit ReLU (the
// ReLU of the rounded sum is the rounded ReLU of the sum). The layout
// stays NHWC through the casts.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = tcc.fusion_group "conv_epilogue" -> (tensor<2x8x4x4xbf16>) {
// CHECK-NEXT: %[[Y:.*]] = tcc.conv2d
// CHECK-NEXT: %[[F:.*]] = tcc.cast %[[Y]] to f32
// CHECK-NEXT: %[[R:.*]] = tcc.relu %[[F]]
// CHECK-NEXT: %[[N:.*]] = tcc.cast %[[R]] to bf16
// CHECK-NEXT: tcc.yield %[[N]] : tensor<2x8x4x4xbf16>
// CHECK-NEXT: }
// CHECK: tcc.cast %[[G]] to f32
func.func @train_step(%x: tensor<2x8x4x4xbf16> {tcc.role = "input"}, %w: tensor<8x8x3x3xbf16>,
                      %b: tensor<8xbf16>, %dy: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<2x8x4x4xbf16>, tensor<8x8x3x3xbf16>, tensor<8xbf16>) -> tensor<2x8x4x4xbf16>
  %f = tcc.cast %y to f32 {tcc.channels_last} : (tensor<2x8x4x4xbf16>) -> tensor<2x8x4x4xf32>
  %r = tcc.relu %f {tcc.channels_last} : tensor<2x8x4x4xf32>
  %n = tcc.cast %r to bf16 {tcc.channels_last} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xbf16>
  %g = tcc.cast %n to f32 {tcc.channels_last} : (tensor<2x8x4x4xbf16>) -> tensor<2x8x4x4xf32>
  %d = tcc.relu_backward %dy, %g {tcc.channels_last} : tensor<2x8x4x4xf32>
  return %d : tensor<2x8x4x4xf32>
}

// -----

// Where it must not fire: a conv without bias (the bias a batch norm
// cancels is gone), a conv whose result something besides the ReLU reads
// (it would have to be stored), an activation cuDNN fuses only by
// compiling on a GPU (SiLU), and a 16-bit chain whose f32 ReLU another op
// reads too. Those ReLUs and casts chain as elementwise groups instead.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: conv_epilogue
// CHECK: return
func.func @train_step(%x: tensor<2x3x4x4xf32> {tcc.role = "input"}, %w: tensor<5x3x3x3xf32>,
                      %b: tensor<5xf32>, %xh: tensor<2x8x4x4xbf16>, %wh: tensor<8x8x3x3xbf16>,
                      %bh: tensor<8xbf16>) -> (tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>, tensor<2x8x4x4xbf16>, tensor<2x8x4x4xf32>) {
  %y0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x3x3xf32>) -> tensor<2x5x4x4xf32>
  %r0 = tcc.relu %y0 : tensor<2x5x4x4xf32>
  %y1 = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<2x5x4x4xf32>
  %r1 = tcc.relu %y1 : tensor<2x5x4x4xf32>
  %y2 = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<2x5x4x4xf32>
  %s2 = tcc.silu %y2 : tensor<2x5x4x4xf32>
  %yh = tcc.conv2d %xh, %wh, %bh {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x8x4x4xbf16>, tensor<8x8x3x3xbf16>, tensor<8xbf16>) -> tensor<2x8x4x4xbf16>
  %fh = tcc.cast %yh to f32 : (tensor<2x8x4x4xbf16>) -> tensor<2x8x4x4xf32>
  %rh = tcc.relu %fh : tensor<2x8x4x4xf32>
  %nh = tcc.cast %rh to bf16 : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xbf16>
  return %r0, %r1, %y1, %s2, %nh, %rh : tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>, tensor<2x8x4x4xbf16>, tensor<2x8x4x4xf32>
}
