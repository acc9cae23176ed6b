// RUN: not tcc-translate --emit-cuda %s 2>&1 | FileCheck %s

// An op the cuda target cannot run yet is an error naming it (and the model
// node it comes from), never a silent fallback to the host.
// CHECK: error: {{.*}}the cuda target cannot run tcc.transpose (model node 'perm') yet (docs/cuda.md lists what it runs); compile with --target=cpu
func.func @transpose(%x: tensor<2x3x4x5xf32>) {
  %y = tcc.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32> loc("perm")
  return
}
