// RUN: not tcc-translate --emit-cpu %s 2>&1 | FileCheck %s

// The cpu kernels index NCHW: an op that tcc-channels-last marked (the cuda
// target's pass) is refused, not run on bytes in another order.
// CHECK: error: the cpu target stores every tensor NCHW, but this op is marked tcc.channels_last (tcc-channels-last is for the cuda target only)
func.func @marked(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %h = tcc.relu %x {tcc.channels_last} : tensor<2x3x4x4xf32>
  return %h : tensor<2x3x4x4xf32>
}
