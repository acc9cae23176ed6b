// RUN: tcc-opt %s -split-input-file -tcc-fusion=epilogue-patterns=cublaslt-linear-activation | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-fusion | FileCheck %s --check-prefix=OFF
// RUN: tcc-opt %s -split-input-file -tcc-fusion=epilogue-patterns=cublaslt-linear-activation -tcc-plan-memory | FileCheck %s --check-prefix=PLAN

// The cuda target's cublaslt-linear-activation fusion pattern (cuBLASLt applies
// a ReLU in a matmul's epilogue). An f32 linear whose result only a ReLU
// reads: one matmul_epilogue group that yields the ReLU's output only (its
// backward reads that), and takes over the linear's workspace, which the
// memory plan places for the group. Without the pattern (the cpu target):
// no group.
// CHECK: groups_by_kind = {matmul_epilogue = 1 : i64}, kernels_after = 2 : i64, kernels_before = 3 : i64
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = tcc.fusion_group "matmul_epilogue" {tcc.workspace = #tcc.workspace<bytes = 4096>} -> (tensor<8x16xf32>) {
// CHECK-NEXT: %[[L:.*]] = tcc.linear %arg0, %arg1, %arg2 :
// CHECK-NEXT: %[[R:.*]] = tcc.relu %[[L]]
// CHECK-NEXT: tcc.yield %[[R]] : tensor<8x16xf32>
// CHECK-NEXT: }
// CHECK: tcc.relu_backward %{{.*}}, %[[G]]
// OFF-NOT: matmul_epilogue
// PLAN: tcc.fusion_group "matmul_epilogue" {tcc.placement = #tcc.placement<scratch = [{{[0-9]+}}]>, tcc.workspace = #tcc.workspace<bytes = 4096, offset = {{[0-9]+}}>} -> (tensor<8x16xf32>) {
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %w: tensor<16x4xf32>,
                      %b: tensor<16xf32>, %dy: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %l = tcc.linear %x, %w, %b {tcc.workspace = #tcc.workspace<bytes = 4096>} : (tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = tcc.relu %l : tensor<8x16xf32>
  %d = tcc.relu_backward %dy, %r : tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

// -----

// A tanh-approximated GELU (cuBLASLt's GELU) joins its linear too. Its
// backward reads the linear's result, which the group then yields as well
// (cuBLASLt's GELU_AUX stores it beside the output); in a step without the
// backward only the GELU's output leaves.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]]:2 = tcc.fusion_group "matmul_epilogue" -> (tensor<8x16xf32>, tensor<8x16xf32>) {
// CHECK-NEXT: %[[L:.*]] = tcc.linear %arg0, %arg1, %arg2 :
// CHECK-NEXT: %[[A:.*]] = tcc.gelu %[[L]] {approximate = "tanh"}
// CHECK-NEXT: tcc.yield %[[L]], %[[A]] : tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT: }
// CHECK: tcc.gelu_backward %{{.*}}, %[[G]]#0 {approximate = "tanh"}
// CHECK-LABEL: func.func @eval_step
// CHECK: %[[E:.*]] = tcc.fusion_group "matmul_epilogue" -> (tensor<8x16xf32>) {
// CHECK: tcc.yield %{{.*}} : tensor<8x16xf32>
// CHECK: return %[[E]]
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %w: tensor<16x4xf32>,
                      %b: tensor<16xf32>, %dy: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %l = tcc.linear %x, %w, %b : (tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %g = tcc.gelu %l {approximate = "tanh"} : tensor<8x16xf32>
  %d = tcc.gelu_backward %dy, %l {approximate = "tanh"} : tensor<8x16xf32>
  return %g, %d : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func @eval_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %w: tensor<16x4xf32>,
                     %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %l = tcc.linear %x, %w, %b : (tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %g = tcc.gelu %l {approximate = "tanh"} : tensor<8x16xf32>
  return %g : tensor<8x16xf32>
}

// -----

// Must not fire: the linear's result has another reader (it would have to
// be stored anyway), the activation is an exact GELU (cuBLASLt's is the tanh
// approximation), a tanh GELU whose backward reads the linear's result from
// rows of 10 elements (GELU_AUX stores rows of a multiple of 8), or the
// linear is 16-bit (its activation runs on an f32 copy, after a cast).
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: matmul_epilogue
// CHECK: return
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %w: tensor<16x4xf32>,
                      %x16: tensor<8x4xbf16>, %w16: tensor<16x4xbf16>, %w10: tensor<10x4xf32>,
                      %dy10: tensor<8x10xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x10xf32>, tensor<8x10xf32>) {
  %l = tcc.linear %x, %w : (tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<8x16xf32>
  %r = tcc.relu %l : tensor<8x16xf32>
  %l2 = tcc.linear %x, %w : (tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<8x16xf32>
  %g = tcc.gelu %l2 {approximate = "none"} : tensor<8x16xf32>
  %l3 = tcc.linear %x16, %w16 : (tensor<8x4xbf16>, tensor<16x4xbf16>) -> tensor<8x16xbf16>
  %c = tcc.cast %l3 to f32 : (tensor<8x16xbf16>) -> tensor<8x16xf32>
  %r3 = tcc.relu %c : tensor<8x16xf32>
  %l4 = tcc.linear %x, %w10 : (tensor<8x4xf32>, tensor<10x4xf32>) -> tensor<8x10xf32>
  %g4 = tcc.gelu %l4 {approximate = "tanh"} : tensor<8x10xf32>
  %d4 = tcc.gelu_backward %dy10, %l4 {approximate = "tanh"} : tensor<8x10xf32>
  return %r, %l, %g, %r3, %g4, %d4 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x10xf32>, tensor<8x10xf32>
}
