// RUN: tcc-opt %s -split-input-file -tcc-plan-memory -verify-diagnostics | FileCheck %s

// Per-op workspace: an op with #tcc.workspace<bytes = N> (set by a target,
// e.g. for cuDNN or cuBLASLt) gets that many scratch bytes, live during the
// op only, at the offset the plan adds. (The cases use softmax, which is not
// elementwise, so that no result goes in place of an operand.)

// Each 64-byte value lives from its op to its last reader. %a's workspace
// (128 B) must avoid %a (0) and goes to 64; it is dead after %a, so %b
// reuses 64. %b's workspace avoids %a and %b (both live at %b): 128. At %c,
// %a is dead: %c takes 0 and its workspace reuses %b's bytes at 128 (%b at
// 64 is still live, so not lower).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: %[[A:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>, tcc.workspace = #tcc.workspace<bytes = 128, offset = 64>}
// CHECK: %[[B:.*]] = tcc.softmax %[[A]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>, tcc.workspace = #tcc.workspace<bytes = 128, offset = 128>}
// CHECK: tcc.softmax %[[B]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>, tcc.workspace = #tcc.workspace<bytes = 128, offset = 128>}
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %a = tcc.softmax %x {axis = 0 : i64, tcc.workspace = #tcc.workspace<bytes = 128>} : (tensor<16xf32>) -> tensor<16xf32>
  %b = tcc.softmax %a {axis = 0 : i64, tcc.workspace = #tcc.workspace<bytes = 128>} : (tensor<16xf32>) -> tensor<16xf32>
  %c = tcc.softmax %b {axis = 0 : i64, tcc.workspace = #tcc.workspace<bytes = 128>} : (tensor<16xf32>) -> tensor<16xf32>
  %next = tcc.increment %step : tensor<i64>
  return %c, %next : tensor<16xf32>, tensor<i64>
}

// -----

// A workspace may take the bytes of values dead at its op, never those of
// values live at it. At %u, %keep (0, read at the end), %t (64) and %u
// (128) are live: the 100-byte workspace goes above them, to 192 (300 bytes
// in all, rounded up to 320). At the increment (in place: no scratch
// result), %t is dead and its 8-byte workspace takes 64. The last add goes
// over %keep, the first operand it reads last.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 320>}
// CHECK: %[[KEEP:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>} : (tensor<16xf32>)
// CHECK: %[[T:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>} : (tensor<16xf32>)
// CHECK: %[[U:.*]] = tcc.softmax %[[T]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [128]>, tcc.workspace = #tcc.workspace<bytes = 100, offset = 192>}
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [-1], state = [0]>, tcc.workspace = #tcc.workspace<bytes = 8, offset = 64>}
// CHECK: tcc.add %[[KEEP]], %[[U]] {tcc.placement = #tcc.placement<scratch = [0]>}
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %keep = tcc.softmax %x {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %t = tcc.softmax %x {axis = 0 : i64} : (tensor<16xf32>) -> tensor<16xf32>
  %u = tcc.softmax %t {axis = 0 : i64, tcc.workspace = #tcc.workspace<bytes = 100>} : (tensor<16xf32>) -> tensor<16xf32>
  %next = tcc.increment %step {tcc.workspace = #tcc.workspace<bytes = 8>} : tensor<i64>
  %out = tcc.add %keep, %u : tensor<16xf32>, tensor<16xf32>
  return %out, %next : tensor<16xf32>, tensor<i64>
}

// -----

// Inside a tcc.micro_batches body: planned with the body's values (%b
// reuses the bytes of %a's workspace), then moved with them to the body
// region's offset (64, above the loop's result).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>}
// CHECK: tcc.micro_batches 2({{.*}}) {dropout_streams = 0 : i64, tcc.placement = #tcc.placement<scratch = [0]>}
// CHECK: %[[A:.*]] = tcc.softmax %{{.*}} {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>, tcc.workspace = #tcc.workspace<bytes = 100, offset = 128>}
// CHECK: tcc.softmax %[[A]] {axis = 0 : i64, tcc.placement = #tcc.placement<scratch = [128]>, tcc.workspace = #tcc.workspace<bytes = 16, offset = 192>}
// CHECK: tcc.yield
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<4x4xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %sum = tcc.micro_batches 2(%x : tensor<8x4xf32>) {dropout_streams = 0 : i64} -> (tensor<4x4xf32>) {
  ^bb0(%s: tensor<4x4xf32>):
    %a = tcc.softmax %s {axis = 0 : i64, tcc.workspace = #tcc.workspace<bytes = 100>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %b = tcc.softmax %a {axis = 0 : i64, tcc.workspace = #tcc.workspace<bytes = 16>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    tcc.yield %b : tensor<4x4xf32>
  }
  %next = tcc.increment %step : tensor<i64>
  return %sum, %next : tensor<4x4xf32>, tensor<i64>
}

// -----

// No op asks for a workspace (or one asks for 0 bytes): no workspace
// offset anywhere, and the plan is as without the attribute (%c over %a).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>}
// CHECK-NOT: offset =
// CHECK: tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [64]>, tcc.workspace = #tcc.workspace<bytes = 0>}
// CHECK-NOT: offset =
// CHECK: return
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %a = tcc.relu %x : tensor<16xf32>
  %b = tcc.relu %a {tcc.workspace = #tcc.workspace<bytes = 0>} : tensor<16xf32>
  %c = tcc.add %a, %b : tensor<16xf32>, tensor<16xf32>
  %next = tcc.increment %step : tensor<i64>
  return %c, %next : tensor<16xf32>, tensor<i64>
}

// -----

func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}) -> (tensor<16xf32> {tcc.role = "output"}) {
  // expected-error @+1 {{bytes must be in [0, 2^48], got -1}}
  %a = tcc.relu %x {tcc.workspace = #tcc.workspace<bytes = -1>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}) -> (tensor<16xf32> {tcc.role = "output"}) {
  // expected-error @+1 {{'tcc.workspace' must be a #tcc.workspace, got "big"}}
  %a = tcc.relu %x {tcc.workspace = "big"} : tensor<16xf32>
  return %a : tensor<16xf32>
}
