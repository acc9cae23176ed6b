// RUN: tcc-opt %s -split-input-file -tcc-fusion=multi-tensor-casts=true | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-fusion | FileCheck %s --check-prefix=OFF

// tcc-fusion's multi-tensor-casts option (the cuda target's, where each
// launch costs microseconds): a run of casts that no other group took, one
// launch for all. A bf16-mixed step's parameter copies at its start: one
// multi_tensor_cast group yielding every copy; the constant between them
// launches nothing. The cast that changes the layout (the batch, gathered to
// NHWC) stays alone, and so does the relu's, which a chain took. Without
// the option (the cpu target): no group.
// CHECK: groups_by_kind = {elementwise = 1 : i64, multi_tensor_cast = 1 : i64}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]]:3 = tcc.fusion_group "multi_tensor_cast" -> (tensor<16x4xbf16>, tensor<16xbf16>, tensor<8x16xbf16>) {
// CHECK-NEXT: tcc.cast %arg1 to bf16
// CHECK-NEXT: tcc.cast %arg2 to bf16
// CHECK-NEXT: tcc.cast %arg3 to bf16
// CHECK-NEXT: tcc.yield
// CHECK-NEXT: }
// CHECK-NEXT: tcc.cast %arg4 to bf16 {tcc.channels_last}
// OFF-NOT: multi_tensor_cast
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %w: tensor<16x4xf32>,
                      %b: tensor<16xf32>, %w2: tensor<8x16xf32>, %img: tensor<2x3x4x4xf32>)
    -> (tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<2x3x4x4xbf16>) {
  %wh = tcc.cast %w to bf16 : (tensor<16x4xf32>) -> tensor<16x4xbf16>
  %one = arith.constant dense<1.0> : tensor<f32>
  %bh = tcc.cast %b to bf16 : (tensor<16xf32>) -> tensor<16xbf16>
  %w2h = tcc.cast %w2 to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  %imgh = tcc.cast %img to bf16 {tcc.channels_last} : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xbf16>
  %xh = tcc.cast %x to bf16 : (tensor<8x4xf32>) -> tensor<8x4xbf16>
  %y = tcc.linear %xh, %wh, %bh : (tensor<8x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
  %yf = tcc.cast %y to f32 : (tensor<8x16xbf16>) -> tensor<8x16xf32>
  %r = tcc.relu %yf : tensor<8x16xf32>
  %rh = tcc.cast %r to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  return %rh, %w2h, %imgh : tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<2x3x4x4xbf16>
}

// -----

// An op that launches a kernel between two casts ends the run: the group
// sits where its last cast was, so only consecutive casts join one.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[A:.*]]:2 = tcc.fusion_group "multi_tensor_cast"
// CHECK-NEXT: tcc.cast %arg0 to f32
// CHECK-NEXT: tcc.cast %arg1 to f32
// CHECK: tcc.relu
// CHECK: %[[B:.*]]:2 = tcc.fusion_group "multi_tensor_cast"
// CHECK-NEXT: tcc.cast %arg2 to f32
// CHECK-NEXT: tcc.cast %arg3 to bf16
func.func @train_step(%g1: tensor<16xbf16>, %g2: tensor<32xbf16>, %g3: tensor<8xbf16>,
                      %p: tensor<4xf32>, %q: tensor<4xf32>)
    -> (tensor<16xf32>, tensor<32xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xbf16>) {
  %a = tcc.cast %g1 to f32 : (tensor<16xbf16>) -> tensor<16xf32>
  %b = tcc.cast %g2 to f32 : (tensor<32xbf16>) -> tensor<32xf32>
  %r = tcc.relu %q : tensor<4xf32>
  %c = tcc.cast %g3 to f32 : (tensor<8xbf16>) -> tensor<8xf32>
  %d = tcc.cast %p to bf16 : (tensor<4xf32>) -> tensor<4xbf16>
  return %a, %b, %r, %c, %d : tensor<16xf32>, tensor<32xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xbf16>
}
