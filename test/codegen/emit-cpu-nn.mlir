// RUN: tcc-translate --emit-cpu %s | FileCheck %s

// The cpu target's calls for the network ops: shapes and geometry as
// literals (make_conv2d_shape: N, C, H, W, K, R, S, strides, paddings,
// dilations, groups), optional operands as typed null pointers.

// CHECK-LABEL: // @layers
func.func @layers(%x: tensor<8x3x32x32xf32>, %w: tensor<24x3x2x2xf32>,
                  %b: tensor<24xf32>, %scale: tensor<24xf32>, %shift: tensor<24xf32>,
                  %mean: tensor<24xf32>, %var: tensor<24xf32>, %fc: tensor<10x5400xf32>) {
  // CHECK: // tcc.conv2d
  // CHECK-NEXT: conv2d_forward<float>(make_conv2d_shape(8, 3, 32, 32, 24, 2, 2, 1, 1, 0, 0, 1, 1, 1), a0, a1, a2, r0);
  %c = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<24x3x2x2xf32>, tensor<24xf32>) -> tensor<8x24x31x31xf32>
  // Batch norm updates the running statistics in place: it starts the new
  // ones (r4, r5) from the old.
  // CHECK: // tcc.batch_norm
  // CHECK-NEXT: copy<float>(24, a5, r4);
  // CHECK-NEXT: copy<float>(24, a6, r5);
  // CHECK-NEXT: batch_norm_forward_train<float>(BatchNormShape{8, 24, 961, 0}, r0, a3, a4, 1.0000000000000001e-05, 0.10000000000000001, r1, r2, r3, r4, r5);
  %y, %sm, %si, %rm, %rv = tcc.batch_norm %c weight %scale bias %shift running %mean, %var {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<8x24x31x31xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) -> (tensor<8x24x31x31xf32>, tensor<1x24xf32>, tensor<1x24xf32>, tensor<24xf32>, tensor<24xf32>)
  // CHECK: // tcc.max_pool2d
  // CHECK-NEXT: max_pool2d_forward<float>(make_pool2d_shape(8, 24, 31, 31, 2, 2, 2, 2, 0, 0), r1, r6);
  %p = tcc.max_pool2d %y {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x24x31x31xf32>) -> tensor<8x24x15x15xf32>
  // CHECK: // tcc.flatten
  // CHECK-NEXT: copy<float>(43200, r6, r7);
  %f = tcc.flatten %p : (tensor<8x24x15x15xf32>) -> tensor<8x5400xf32>
  // No bias: a typed null pointer.
  // CHECK: // tcc.linear
  // CHECK-NEXT: linear_forward<float>(8, 5400, 10, r7, a7, static_cast<float *>(nullptr), r8);
  %l = tcc.linear %f, %fc : (tensor<8x5400xf32>, tensor<10x5400xf32>) -> tensor<8x10xf32>
  return
}

// Casts between f32 and the 16-bit floats (mixed precision): the runtime's
// conversions, rounding to nearest even; a cast to the same type copies.
// CHECK-LABEL: // @casts
// CHECK: cast_f32_to_bf16(6, a0, r0);
// CHECK: cast_bf16_to_f32(6, r0, r1);
// CHECK: cast_f32_to_f16(6, r1, r2);
// CHECK: cast_f16_to_f32(6, r2, r3);
func.func @casts(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %b = tcc.cast %x to bf16 : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %f = tcc.cast %b to f32 : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  %h = tcc.cast %f to f16 : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %g = tcc.cast %h to f32 : (tensor<2x3xf16>) -> tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}
