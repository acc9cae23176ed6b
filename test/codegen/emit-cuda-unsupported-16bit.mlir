// RUN: not tcc-translate --emit-cuda %s 2>&1 | FileCheck %s

// 16-bit values pass only through casts from or to f32 on the cuda target so
// far: any other op on them, or a cast between two 16-bit types, is an error
// rather than a kernel on the stored bits.
// CHECK: error: {{.*}}the cuda target cannot run tcc.relu on bf16 tensors yet (16-bit steps: issue 10); compile with --precision=fp32
func.func @relu(%x: tensor<8xf32>) {
  %down = tcc.cast %x to bf16 : (tensor<8xf32>) -> tensor<8xbf16>
  %r = tcc.relu %down : tensor<8xbf16>
  return
}
