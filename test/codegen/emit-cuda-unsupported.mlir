// RUN: not tcc-translate --emit-cuda %s 2>&1 | FileCheck %s

// An op the cuda target cannot run yet is an error naming it (and the model
// node it comes from), never a silent fallback to the host.
// CHECK: error: {{.*}}the cuda target cannot run tcc.batch_norm (model node 'bn') yet (docs/cuda.md lists what it runs); compile with --target=cpu
func.func @norm(%x: tensor<8x16x4x4xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) loc("bn")
  return
}
