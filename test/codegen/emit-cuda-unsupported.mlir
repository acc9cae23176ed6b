// RUN: not tcc-translate --emit-cuda %s 2>&1 | FileCheck %s

// An op the cuda target cannot run yet is an error naming it (and the model
// node it comes from), never a silent fallback to the host.
// CHECK: error: {{.*}}the cuda target cannot run tcc.conv2d (model node 'conv') yet (docs/cuda.md lists what it runs); compile with --target=cpu
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("conv")
  return
}
