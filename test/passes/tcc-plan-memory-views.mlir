// RUN: tcc-opt %s -split-input-file -tcc-plan-memory | FileCheck %s

// tcc.flatten and tcc.reshape are views: when their input has scratch
// bytes of the same block, the result takes the same offset (a code
// generator that sees equal offsets copies nothing) and the input's bytes
// stay live until the view's last use.

// %f views %a and %r views %f (so %a): all three at 0. %a's bytes stay
// live through %f's readers and %r's, so %c, which reads %f, cannot write
// over them although nothing reads %a itself after %f: it goes over %b
// (an elementwise op over the operand it reads last). %d, the last reader
// of %r, goes over %a's bytes: element i of a view is element i of %a.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>}
// CHECK: %[[A:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<2x2x4xf32>
// CHECK: %[[F:.*]] = tcc.flatten %[[A]] {tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[B:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [64]>} : tensor<2x8xf32>
// CHECK: %[[C:.*]] = tcc.add %[[F]], %[[B]] {tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK: %[[R:.*]] = tcc.reshape %[[F]] {shape = array<i64: 2, 2, 4>, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: tcc.relu %[[R]] {tcc.placement = #tcc.placement<scratch = [0]>}
func.func @train_step(%x: tensor<2x2x4xf32> {tcc.role = "input"}, %y: tensor<2x8xf32> {tcc.role = "input2"},
                      %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<2x2x4xf32> {tcc.role = "output"}, tensor<2x8xf32> {tcc.role = "output2"},
        tensor<i64> {tcc.state = "step"}) {
  %a = tcc.relu %x : tensor<2x2x4xf32>
  %f = tcc.flatten %a : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
  %b = tcc.relu %y : tensor<2x8xf32>
  %c = tcc.add %f, %b : tensor<2x8xf32>, tensor<2x8xf32>
  %r = tcc.reshape %f {shape = array<i64: 2, 2, 4>} : (tensor<2x8xf32>) -> tensor<2x2x4xf32>
  %d = tcc.relu %r : tensor<2x2x4xf32>
  %next = tcc.increment %step : tensor<i64>
  return %d, %c, %next : tensor<2x2x4xf32>, tensor<2x8xf32>, tensor<i64>
}

// -----

// A view that replaces a state tensor (reshape has no InPlaceStateUpdate
// trait) is copied into the state at the end of the step: %a's bytes, which
// it shares, stay live until then, so neither %t nor %u (over %t) reuses 0.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>}
// CHECK: %[[A:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<2x2x4xf32>
// CHECK: %[[NEW:.*]] = tcc.reshape %[[A]] {shape = array<i64: 2, 8>, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[T:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [64]>} : tensor<2x8xf32>
// CHECK: tcc.relu %[[T]] {tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK-NOT: state = [
// CHECK: return %[[NEW]],
func.func @train_step(%x: tensor<2x2x4xf32> {tcc.role = "input"}, %y: tensor<2x8xf32> {tcc.role = "input2"},
                      %w: tensor<2x8xf32> {tcc.state = "w"})
    -> (tensor<2x8xf32> {tcc.state = "w"}, tensor<2x8xf32> {tcc.role = "output"}) {
  %a = tcc.relu %x : tensor<2x2x4xf32>
  %new = tcc.reshape %a {shape = array<i64: 2, 8>} : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
  %t = tcc.relu %y : tensor<2x8xf32>
  %u = tcc.relu %t : tensor<2x8xf32>
  return %new, %u : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Not a view of scratch, so bytes of their own: the input is a function
// argument (the batch, or a state tensor that an in-place update may
// overwrite later), a constant (no scratch), or a result updated in place
// in a state slot (a later update of that slot would overwrite it). All
// four are returned, so each keeps its bytes to the end.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: tcc.flatten %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
// CHECK: tcc.reshape %{{.*}} {shape = array<i64: 3, 2>, tcc.placement = #tcc.placement<scratch = [64]>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: tcc.reshape %{{.*}} {shape = array<i64: 4>, tcc.placement = #tcc.placement<scratch = [128]>} : (tensor<2x2xf32>) -> tensor<4xf32>
// CHECK: %[[NEW_W:.*]] = tcc.sgd_update {{.*}}tcc.placement = #tcc.placement<scratch = [-1], state = [1]>
// CHECK: tcc.reshape %[[NEW_W]] {shape = array<i64: 3, 2>, tcc.placement = #tcc.placement<scratch = [192]>}
func.func @train_step(%x: tensor<2x2x4xf32> {tcc.role = "input"}, %g: tensor<2x3xf32> {tcc.role = "grad"},
                      %lr: tensor<f32> {tcc.role = "lr"},
                      %step: tensor<i64> {tcc.state = "step"}, %w: tensor<2x3xf32> {tcc.state = "w"})
    -> (tensor<2x8xf32> {tcc.role = "o1"}, tensor<3x2xf32> {tcc.role = "o2"}, tensor<4xf32> {tcc.role = "o3"},
        tensor<3x2xf32> {tcc.role = "o4"}, tensor<i64> {tcc.state = "step"}, tensor<2x3xf32> {tcc.state = "w"}) {
  %cst = arith.constant dense<1.0> : tensor<2x2xf32>
  %fx = tcc.flatten %x : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
  %rw = tcc.reshape %w {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %rc = tcc.reshape %cst {shape = array<i64: 4>} : (tensor<2x2xf32>) -> tensor<4xf32>
  %new_w = tcc.sgd_update %w, %g, %lr, %step
      {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
      : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i64>) -> tensor<2x3xf32>
  %rn = tcc.reshape %new_w {shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %next = tcc.increment %step : tensor<i64>
  return %fx, %rw, %rc, %rn, %next, %new_w
      : tensor<2x8xf32>, tensor<3x2xf32>, tensor<4xf32>, tensor<3x2xf32>, tensor<i64>, tensor<2x3xf32>
}

// -----

// In a tcc.micro_batches body: a view of a body value shares its bytes
// (%fa, at the body region's 192 like %a); views of a batch slice (%fs) and
// of a value of the step's block (%fo) get bytes of their own. The adds go
// over the operand they read last (%t over %fs, %u over %t).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 320>}
// CHECK: %[[O:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: tcc.micro_batches 2({{.*}}) {dropout_streams = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK: %[[FS:.*]] = tcc.flatten %{{.*}} {tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: %[[A:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [192]>}
// CHECK: %[[FA:.*]] = tcc.flatten %[[A]] {tcc.placement = #tcc.placement<scratch = [192]>}
// CHECK: %[[FO:.*]] = tcc.flatten %[[O]] {tcc.placement = #tcc.placement<scratch = [256]>}
// CHECK: %[[T:.*]] = tcc.add %[[FS]], %[[FA]] {tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: tcc.add %[[T]], %[[FO]] {tcc.placement = #tcc.placement<scratch = [128]>}
func.func @train_step(%x: tensor<4x2x4xf32> {tcc.role = "input"}, %v: tensor<2x2x4xf32> {tcc.role = "other"},
                      %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<2x8xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %o = tcc.relu %v : tensor<2x2x4xf32>
  %sum = tcc.micro_batches 2(%x : tensor<4x2x4xf32>) {dropout_streams = 0 : i64} -> (tensor<2x8xf32>) {
  ^bb0(%s: tensor<2x2x4xf32>):
    %fs = tcc.flatten %s : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
    %a = tcc.relu %s : tensor<2x2x4xf32>
    %fa = tcc.flatten %a : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
    %fo = tcc.flatten %o : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
    %t = tcc.add %fs, %fa : tensor<2x8xf32>, tensor<2x8xf32>
    %u = tcc.add %t, %fo : tensor<2x8xf32>, tensor<2x8xf32>
    tcc.yield %u : tensor<2x8xf32>
  }
  %next = tcc.increment %step : tensor<i64>
  return %sum, %next : tensor<2x8xf32>, tensor<i64>
}
