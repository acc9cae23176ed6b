// The memory plan's attributes (ir/TccPlanAttrs.td) print and parse back,
// and a consistent plan verifies.
// RUN: tcc-opt %s | tcc-opt | FileCheck %s

// CHECK: module attributes {tcc.state_arena = #tcc.state_arena<bytes = 192, offsets = [0, 64, 128]>}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>, tcc.workspace = #tcc.workspace<bytes = 100, offset = 128>}
// CHECK: tcc.sgd_update {{.*}}tcc.placement = #tcc.placement<scratch = [64, -1], state = [-1, 2]>
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>, tcc.workspace = #tcc.workspace<bytes = 0>}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 192, offsets = [0, 64, 128]>} {
func.func @train_step(%step: tensor<i64> {tcc.state = "step"}, %w: tensor<4xf32> {tcc.state = "w"},
                      %buf: tensor<4xf32> {tcc.state = "w.momentum"}, %g: tensor<4xf32> {tcc.role = "input"},
                      %lr: tensor<f32> {tcc.role = "input"})
    -> (tensor<4xf32> {tcc.role = "output"}, tensor<4xf32> {tcc.state = "w"}, tensor<4xf32> {tcc.state = "w.momentum"},
        tensor<i64> {tcc.state = "step"})
    attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>} {
  %s = tcc.softmax %g {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>,
                       tcc.workspace = #tcc.workspace<bytes = 100, offset = 128>} : (tensor<4xf32>) -> tensor<4xf32>
  %new_w, %new_buf = tcc.sgd_update %w, %s, %lr, %step momentum_buffer %buf
      {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.9 : f64, nesterov = false, weight_decay = 0.0 : f64,
       tcc.placement = #tcc.placement<scratch = [64, -1], state = [-1, 2]>}
      : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %next = tcc.increment %step {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>,
                               tcc.workspace = #tcc.workspace<bytes = 0>} : tensor<i64>
  return %s, %new_w, %new_buf, %next : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}
}
