// RUN: tcc-opt %s -split-input-file -tcc-plan-memory -verify-diagnostics | FileCheck %s

// tcc-plan-memory on hand-written step functions: the cases that
// tcc-build-train-step does not produce (tcc-plan-memory.mlir runs the
// pipeline on small models).

// The state arena: the tcc.state arguments of @train_step in order, each at
// a 64-byte boundary (i64: 8 B, 5 x f32: 20 B, 17 x f32: 68 B -> 128,
// 1 x f16: 2 B, 16 x bf16: 32 B); other arguments take no state memory.
// @eval_step takes the same state and gets its own scratch plan.
// CHECK: module attributes {tcc.state_arena = #tcc.state_arena<bytes = 384, offsets = [0, 64, 128, 256, 320]>}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 64>}
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>}
// CHECK: tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<5xf32>
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>}
// CHECK: tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<17xf32>
// CHECK-NOT: state = [
// CHECK: return
func.func @train_step(%x: tensor<5xf32> {tcc.role = "input"},
                      %step: tensor<i64> {tcc.state = "step"},
                      %a: tensor<5xf32> {tcc.state = "a"},
                      %b: tensor<17xf32> {tcc.state = "b"},
                      %seed: tensor<i64> {tcc.role = "seed"},
                      %c: tensor<1xf16> {tcc.state = "c"},
                      %d: tensor<16xbf16> {tcc.state = "d"})
    -> (tensor<i64> {tcc.state = "step"}, tensor<5xf32> {tcc.role = "output"}) {
  %next = tcc.increment %step : tensor<i64>
  %y = tcc.relu %x : tensor<5xf32>
  return %next, %y : tensor<i64>, tensor<5xf32>
}
func.func @eval_step(%x: tensor<17xf32> {tcc.role = "input"},
                     %step: tensor<i64> {tcc.state = "step"},
                     %a: tensor<5xf32> {tcc.state = "a"},
                     %b: tensor<17xf32> {tcc.state = "b"},
                     %c: tensor<1xf16> {tcc.state = "c"},
                     %d: tensor<16xbf16> {tcc.state = "d"}) -> tensor<17xf32> {
  %0 = tcc.relu %x : tensor<17xf32>
  return %0 : tensor<17xf32>
}

// -----

// Scratch reuse (softmax: not elementwise, so no result goes in place of
// an operand; the case after next has those). %a dies at %b, so %c (its
// live range disjoint from %a's) takes %a's offset; %b and %c are both live
// at %d, so %d (128 B) goes above them. The 20-byte %s is rounded up to
// the next 64-byte boundary for %t.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: %[[A:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[B:.*]] = tcc.softmax %[[A]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK: %[[C:.*]] = tcc.softmax %[[B]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[D:.*]] = tcc.concat %[[B]], %[[C]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: %[[S:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>} : (tensor<5xf32>)
// CHECK: %[[T:.*]] = tcc.softmax %[[S]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>} : (tensor<5xf32>)
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %v: tensor<5xf32> {tcc.role = "input2"},
                      %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<32xf32> {tcc.role = "output"}, tensor<5xf32> {tcc.role = "output2"},
        tensor<i64> {tcc.state = "step"}) {
  %a = tcc.softmax %x {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %b = tcc.softmax %a {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %c = tcc.softmax %b {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %d = tcc.concat %b, %c {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
  %s = tcc.softmax %v {axis = 0 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  %t = tcc.softmax %s {axis = 0 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  %next = tcc.increment %step : tensor<i64>
  return %d, %t, %next : tensor<32xf32>, tensor<5xf32>, tensor<i64>
}

// -----

// Packing: the better of first fit in the order values are computed and
// largest first. Here largest first wins: the 128-byte values first (%big
// at 0; %sum, live with %big at its op, at 128; %both, after %big died,
// at 0 again), then the 64-byte ones above them (%small at 256, %late at
// 320): 384 bytes, where first fit by start leaves %both no room below 320
// and needs 448.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 384>}
// CHECK: %[[BIG:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>} : (tensor<32xf32>)
// CHECK: %[[SMALL:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [256]>} : (tensor<16xf32>)
// CHECK: %[[SUM:.*]] = tcc.softmax %[[BIG]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [128]>} : (tensor<32xf32>)
// CHECK: %[[LATE:.*]] = tcc.softmax %[[SMALL]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [320]>} : (tensor<16xf32>)
// CHECK: tcc.concat %[[SMALL]], %[[LATE]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>} : (tensor<16xf32>, tensor<16xf32>)
func.func @train_step(%x: tensor<32xf32> {tcc.role = "input"}, %y: tensor<16xf32> {tcc.role = "input2"},
                      %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<32xf32> {tcc.role = "output"}, tensor<32xf32> {tcc.role = "output2"},
        tensor<i64> {tcc.state = "step"}) {
  %big = tcc.softmax %x {axis = 0 : i64} : (tensor<32xf32>) -> tensor<32xf32>
  %small = tcc.softmax %y {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %sum = tcc.softmax %big {axis = 0 : i64} : (tensor<32xf32>) -> tensor<32xf32>
  %late = tcc.softmax %small {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %both = tcc.concat %small, %late {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
  %next = tcc.increment %step : tensor<i64>
  return %sum, %both, %next : tensor<32xf32>, tensor<32xf32>, tensor<i64>
}

// -----

// In place: an elementwise op (or elementwise fusion group) writes element
// i after reading element i, so its result takes the bytes of an operand of
// the same size that it is the last to read: %b over %a, %d over %c (both
// operands die there; the first is taken), and the group's f32 result over
// %d. Not where the operand is read later (%c, read again by %d), nor for
// a result of another size (the group's bf16 one), nor for an op that is
// not elementwise (the softmax %e, which goes above the group's results).
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[A:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [[[X:[0-9]+]]]>}
// CHECK: %[[B:.*]] = tcc.relu %[[A]] {tcc.placement = #tcc.placement<scratch = [[[X]]]>}
// CHECK: %[[C:.*]] = tcc.relu %[[B]] {tcc.placement = #tcc.placement<scratch = [[[Y:[0-9]+]]]>}
// CHECK: %[[D:.*]] = tcc.add %[[B]], %[[C]] {tcc.placement = #tcc.placement<scratch = [[[X]]]>}
// CHECK: %[[G:.*]]:2 = tcc.fusion_group "elementwise" {tcc.placement = #tcc.placement<scratch = [{{[0-9]+}}, [[X]]]>}
// CHECK: tcc.softmax %[[G]]#1 {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [128]>}
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<16xbf16> {tcc.role = "output2"},
        tensor<i64> {tcc.state = "step"}) {
  %a = tcc.relu %x : tensor<16xf32>
  %b = tcc.relu %a : tensor<16xf32>
  %c = tcc.relu %b : tensor<16xf32>
  %d = tcc.add %b, %c : tensor<16xf32>, tensor<16xf32>
  %g:2 = tcc.fusion_group "elementwise" -> (tensor<16xbf16>, tensor<16xf32>) {
    %down = tcc.cast %d to bf16 : (tensor<16xf32>) -> tensor<16xbf16>
    %up = tcc.cast %down to f32 : (tensor<16xbf16>) -> tensor<16xf32>
    tcc.yield %down, %up : tensor<16xbf16>, tensor<16xf32>
  }
  %e = tcc.softmax %g#1 {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %next = tcc.increment %step : tensor<i64>
  return %e, %g#0, %next : tensor<16xf32>, tensor<16xbf16>, tensor<i64>
}

// -----

// Not in place: the old step counter is read again after the increment
// (by mix_seed), so the increment must not overwrite it. It gets scratch,
// and the code generator copies it into the state at the end.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[NEXT:.*]] = tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<i64>
// CHECK: tcc.mix_seed {{.*}}tcc.placement = #tcc.placement<scratch = [64]>
// CHECK-NOT: state = [
// CHECK: return
func.func @train_step(%seed: tensor<i64> {tcc.role = "seed"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<i64> {tcc.state = "step"}, tensor<i64> {tcc.role = "mixed"}) {
  %next = tcc.increment %step : tensor<i64>
  %mixed = tcc.mix_seed %seed, %step : tensor<i64>
  return %next, %mixed : tensor<i64>, tensor<i64>
}

// -----

// Not in place: the update does not read the slot it replaces (the counter
// comes from another value).
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.mix_seed {{.*}}tcc.placement = #tcc.placement<scratch = [0]>
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [64]>} : tensor<i64>
// CHECK-NOT: state = [
// CHECK: return
func.func @train_step(%seed: tensor<i64> {tcc.role = "seed"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<i64> {tcc.state = "step"}) {
  %mixed = tcc.mix_seed %seed, %step : tensor<i64>
  %next = tcc.increment %mixed : tensor<i64>
  return %next : tensor<i64>
}

// -----

// Not in place: relu and scale have no InPlaceStateUpdate trait, though they
// read the slot they replace. A state update in scratch stays live until the
// end of the step (where it is copied), so neither %tmp nor %out reuses
// its offset even though nothing reads %new after it (%out takes %tmp's:
// an elementwise op over the operand it reads last).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>}
// CHECK: %[[NEW:.*]] = tcc.scale %{{.*}} {factor = 5.000000e-01 : f64, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[TMP:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK: %[[OUT:.*]] = tcc.relu %[[TMP]] {tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK-NOT: state = [
// CHECK: return %[[NEW]], %[[OUT]]
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %w: tensor<16xf32> {tcc.state = "w"})
    -> (tensor<16xf32> {tcc.state = "w"}, tensor<16xf32> {tcc.role = "output"}) {
  %new = tcc.scale %w {factor = 0.5 : f64} : tensor<16xf32>
  %tmp = tcc.relu %x : tensor<16xf32>
  %out = tcc.relu %tmp : tensor<16xf32>
  return %new, %out : tensor<16xf32>, tensor<16xf32>
}

// -----

// An optimizer update whose parameter is read again after it (a forward pass
// with the old weights): the new parameter goes to scratch, while the
// momentum buffer, read last by the update, is still written in place.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {tcc.state = "w"}
// CHECK: %[[NEW_W:.*]], %[[NEW_BUF:.*]] = tcc.sgd_update %[[W]], {{.*}}tcc.placement = #tcc.placement<scratch = [0, -1], state = [-1, 2]>
// CHECK: tcc.linear %{{.*}}, %[[W]] {tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK: tcc.increment {{.*}}state = [0]>
// CHECK: return %{{.*}}, %[[NEW_W]], %[[NEW_BUF]],
func.func @train_step(%x: tensor<4x3xf32> {tcc.role = "input"}, %g: tensor<2x3xf32> {tcc.role = "grad"},
                      %lr: tensor<f32> {tcc.role = "lr"},
                      %step: tensor<i64> {tcc.state = "step"}, %w: tensor<2x3xf32> {tcc.state = "w"},
                      %buf: tensor<2x3xf32> {tcc.state = "buf"})
    -> (tensor<i64> {tcc.state = "step"}, tensor<2x3xf32> {tcc.state = "w"},
        tensor<2x3xf32> {tcc.state = "buf"}, tensor<4x2xf32> {tcc.role = "output"}) {
  %new_w, %new_buf = tcc.sgd_update %w, %g, %lr, %step momentum_buffer %buf
      {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.9 : f64, nesterov = false, weight_decay = 0.0 : f64}
      : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i64>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %y = tcc.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %next = tcc.increment %step : tensor<i64>
  return %next, %new_w, %new_buf, %y : tensor<i64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2xf32>
}

// -----

// Not in place: the old value is also returned (for another result), so
// the function still needs it at the end.
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<i64>
// CHECK-NOT: state = [
// CHECK: return
func.func @train_step(%step: tensor<i64> {tcc.state = "step"})
    -> (tensor<i64> {tcc.state = "step"}, tensor<i64> {tcc.role = "previous"}) {
  %next = tcc.increment %step : tensor<i64>
  return %next, %step : tensor<i64>, tensor<i64>
}

// -----

// No @train_step: the pass needs tcc-build-train-step's output.
// expected-error @+1 {{tcc-plan-memory needs @train_step; run tcc-build-train-step first}}
module {
  func.func @eval_step(%x: tensor<16xf32> {tcc.role = "input"}) -> tensor<16xf32> {
    %0 = tcc.relu %x : tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}

// -----

// A cast that converts the layout (tcc-channels-last: its operand stored
// NHWC, its result NCHW) gathers: its result never goes in place of its
// operand, though they have the same size; the same cast between two NCHW
// tensors does.
// CHECK: func.func @train_step(%arg0: tensor<2x3x4x4xf16> {tcc.role = "input"}
// CHECK: tcc.relu %arg0 {tcc.channels_last, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK-NEXT: tcc.cast %{{.*}} to bf16 {tcc.placement = #tcc.placement<scratch = [192]>}
// CHECK-NEXT: tcc.relu %arg0 {tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK-NEXT: tcc.cast %{{.*}} to bf16 {tcc.placement = #tcc.placement<scratch = [0]>}
func.func @train_step(%x: tensor<2x3x4x4xf16> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<2x3x4x4xbf16> {tcc.role = "output"}, tensor<2x3x4x4xbf16> {tcc.role = "output2"},
        tensor<i64> {tcc.state = "step"}) {
  %h = tcc.relu %x {tcc.channels_last} : tensor<2x3x4x4xf16>
  %c = tcc.cast %h to bf16 : (tensor<2x3x4x4xf16>) -> tensor<2x3x4x4xbf16>
  %g = tcc.relu %x : tensor<2x3x4x4xf16>
  %d = tcc.cast %g to bf16 : (tensor<2x3x4x4xf16>) -> tensor<2x3x4x4xbf16>
  %next = tcc.increment %step : tensor<i64>
  return %c, %d, %next : tensor<2x3x4x4xbf16>, tensor<2x3x4x4xbf16>, tensor<i64>
}
