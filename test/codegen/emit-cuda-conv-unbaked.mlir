// RUN: not tcc-translate --emit-cuda %s 2>&1 | FileCheck %s

// A convolution runs the cuDNN engine tcc compile baked for it (the
// module's tcc.cuda_target attribute); without one it is an error, never a
// choice made at run time.
// CHECK: error: {{.*}}the convolution [fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p8 q8 pad1,1 stride1,1 dil1,1 g1] has no baked cuDNN engine; tcc compile --target=cuda chooses them (the module's tcc.cuda_target attribute)
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("conv")
  return
}
