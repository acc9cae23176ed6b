// RUN: tcc-opt %s -split-input-file -tcc-plan-memory | FileCheck %s

// Values of the step's block read only inside a tcc.micro_batches body: the
// loop is their last use, so they stay live while it runs, and neither the
// loop's results nor its body region may take their bytes.

// %w (64 B) is read only by the body. It holds 0 until the loop ends: the
// loop's result goes to 64 and the body region to 128 (were the body's read
// ignored, %w would be dead at the loop and the result would reuse 0). After
// the loop %w is dead, so %late reuses 0.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 192>}
// CHECK: %[[W:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<4x4xf32>
// CHECK: %[[SUM:.*]] = tcc.micro_batches 2({{.*}}) {dropout_streams = 0 : i64, tcc.placement = #tcc.placement<scratch = [64]>}
// CHECK: tcc.add %{{.*}}, %[[W]] {tcc.placement = #tcc.placement<scratch = [128]>}
// CHECK: tcc.yield
// CHECK: tcc.softmax %[[SUM]] {axis = 1 : i64, tcc.placement = #tcc.placement<scratch = [0]>}
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %v: tensor<4x4xf32> {tcc.role = "other"},
                      %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<4x4xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %w = tcc.relu %v : tensor<4x4xf32>
  %sum = tcc.micro_batches 2(%x : tensor<8x4xf32>) {dropout_streams = 0 : i64} -> (tensor<4x4xf32>) {
  ^bb0(%s: tensor<4x4xf32>):
    %a = tcc.add %s, %w : tensor<4x4xf32>, tensor<4x4xf32>
    tcc.yield %a : tensor<4x4xf32>
  }
  %late = tcc.softmax %sum {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %next = tcc.increment %step : tensor<i64>
  return %late, %next : tensor<4x4xf32>, tensor<i64>
}

// -----

// %w is read by %m and by the body, %m by the body only: both stay live
// through the loop, so the loop's two results go above them (128, 192) and
// the body region above those (256). Inside the body, %c reuses the bytes of
// %a, which dies at %b, but nothing reuses %w's or %m's.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 384>}
// CHECK: %[[W:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<4x4xf32>
// CHECK: %[[M:.*]] = tcc.relu %{{.*}} {tcc.placement = #tcc.placement<scratch = [64]>} : tensor<4x4xf32>
// CHECK: tcc.micro_batches 2({{.*}}) {dropout_streams = 0 : i64, tcc.placement = #tcc.placement<scratch = [128, 192]>}
// CHECK: %[[A:.*]] = tcc.add %{{.*}}, %[[W]] {tcc.placement = #tcc.placement<scratch = [256]>}
// CHECK: %[[B:.*]] = tcc.softmax %[[A]] {axis = 1 : i64, tcc.placement = #tcc.placement<scratch = [320]>}
// CHECK: %[[C:.*]] = tcc.add %[[B]], %[[M]] {tcc.placement = #tcc.placement<scratch = [256]>}
// CHECK: tcc.yield %[[B]], %[[C]]
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %v: tensor<4x4xf32> {tcc.role = "other"},
                      %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<4x4xf32> {tcc.role = "output"}, tensor<4x4xf32> {tcc.role = "output2"},
        tensor<i64> {tcc.state = "step"}) {
  %w = tcc.relu %v : tensor<4x4xf32>
  %m = tcc.relu %w : tensor<4x4xf32>
  %r:2 = tcc.micro_batches 2(%x : tensor<8x4xf32>) {dropout_streams = 0 : i64}
      -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  ^bb0(%s: tensor<4x4xf32>):
    %a = tcc.add %s, %w : tensor<4x4xf32>, tensor<4x4xf32>
    %b = tcc.softmax %a {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %c = tcc.add %b, %m : tensor<4x4xf32>, tensor<4x4xf32>
    tcc.yield %b, %c : tensor<4x4xf32>, tensor<4x4xf32>
  }
  %next = tcc.increment %step : tensor<i64>
  return %r#0, %r#1, %next : tensor<4x4xf32>, tensor<4x4xf32>, tensor<i64>
}

// -----

// The in-place check sees nested readers too: the old step counter is read
// inside the loop, which runs after the increment, so the increment must
// not overwrite it (scratch, copied at the end).
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.increment %{{.*}} {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<i64>
// CHECK-NOT: state = [
// CHECK: return
func.func @train_step(%x: tensor<8x4xi64> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<i64> {tcc.state = "step"}, tensor<i64> {tcc.role = "mixed"}) {
  %next = tcc.increment %step : tensor<i64>
  %mixed = tcc.micro_batches 2(%x : tensor<8x4xi64>) {dropout_streams = 0 : i64} -> (tensor<i64>) {
  ^bb0(%s: tensor<4x4xi64>):
    %m = tcc.mix_seed %step, %step : tensor<i64>
    tcc.yield %m : tensor<i64>
  }
  return %next, %mixed : tensor<i64>, tensor<i64>
}
