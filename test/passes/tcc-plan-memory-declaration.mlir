// A declaration (no body) has nothing to plan: the pass skips it, and
// plans the step functions beside it as usual (it once crashed on
// fn.front()).
// RUN: tcc-opt %s -tcc-plan-memory | FileCheck %s

// CHECK: func.func private @external(tensor<16xf32>) -> tensor<16xf32>
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>}
func.func private @external(tensor<16xf32>) -> tensor<16xf32>
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %y = tcc.relu %x : tensor<16xf32>
  %next = tcc.increment %step : tensor<i64>
  return %y, %next : tensor<16xf32>, tensor<i64>
}
