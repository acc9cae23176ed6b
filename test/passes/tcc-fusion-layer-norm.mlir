// RUN: tcc-opt %s -split-input-file -tcc-fusion | FileCheck %s

// A pre-LN transformer block's residual: x1 = x + widen(r), then
// layer_norm(x1) narrowed for the next linear. One norm_epilogue group: the
// kernel computes x1 as it reads it and yields it for the next residual add
// (read later), the normalised value is narrowed as it is stored and never
// leaves as f32; the widening of r, read by the add only, joins too.
// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[G:.*]]:4 = tcc.fusion_group "norm_epilogue" -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xbf16>) {
// CHECK-NEXT: %[[W:.*]] = tcc.cast %arg1 to f32
// CHECK-NEXT: %[[X1:.*]] = tcc.add %arg0, %[[W]]
// CHECK-NEXT: %[[Y:.*]], %[[M:.*]], %[[I:.*]] = tcc.layer_norm %[[X1]] weight %arg2 bias %arg3
// CHECK-NEXT: %[[N:.*]] = tcc.cast %[[Y]] to bf16
// CHECK-NEXT: tcc.yield %[[X1]], %[[M]], %[[I]], %[[N]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[L:.*]] = tcc.linear %[[G]]#3
// CHECK-NEXT: tcc.fusion_group "elementwise"
// CHECK-NEXT: %[[LW:.*]] = tcc.cast %[[L]] to f32
// CHECK-NEXT: tcc.add %[[G]]#0, %[[LW]]
func.func @train_step(%x: tensor<4x8xf32> {tcc.role = "input"}, %r: tensor<4x8xbf16> {tcc.role = "input"},
                      %g: tensor<8xf32> {tcc.role = "input"}, %b: tensor<8xf32> {tcc.role = "input"},
                      %w: tensor<8x8xbf16> {tcc.role = "input"})
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %rw = tcc.cast %r to f32 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %x1 = tcc.add %x, %rw : tensor<4x8xf32>, tensor<4x8xf32>
  %y, %mean, %invstd = tcc.layer_norm %x1 weight %g bias %b {eps = 1.0e-05 : f64, normalized_dims = 1 : i64}
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %yn = tcc.cast %y to bf16 : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %l = tcc.linear %yn, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %lw = tcc.cast %l to f32 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %x2 = tcc.add %x1, %lw : tensor<4x8xf32>, tensor<4x8xf32>
  return %x2, %mean, %invstd : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An f32 block: the residual add only the norm reads stays inside (not
// yielded), and the GELU of the normalised value is its epilogue.
// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[G:.*]]:3 = tcc.fusion_group "norm_epilogue" -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %[[X1:.*]] = tcc.add %arg0, %arg1
// CHECK-NEXT: %[[Y:.*]], %[[M:.*]], %[[I:.*]] = tcc.layer_norm %[[X1]]
// CHECK-NEXT: %[[A:.*]] = tcc.gelu %[[Y]]
// CHECK-NEXT: tcc.yield %[[M]], %[[I]], %[[A]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#2
func.func @train_step(%x: tensor<4x8xf32> {tcc.role = "input"}, %r: tensor<4x8xf32> {tcc.role = "input"})
    -> tensor<4x8xf32> {
  %x1 = tcc.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32>
  %y, %mean, %invstd = tcc.layer_norm %x1 {eps = 1.0e-05 : f64, normalized_dims = 1 : i64}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %a = tcc.gelu %y : tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// Must not take the add: its sum is read by an op (the linear) that comes
// before the norm's consumer, where the group would sit. The norm and its
// activation still form a group; the add stays alone.
// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[X1:.*]] = tcc.add %arg0, %arg1
// CHECK-NEXT: %[[L:.*]] = tcc.linear %[[X1]]
// CHECK-NEXT: %[[G:.*]]:3 = tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: tcc.layer_norm %[[X1]]
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.yield
// CHECK-NEXT: }
func.func @train_step(%x: tensor<4x8xf32> {tcc.role = "input"}, %r: tensor<4x8xf32> {tcc.role = "input"},
                      %w: tensor<8x8xf32> {tcc.role = "input"})
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %x1 = tcc.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32>
  %y, %mean, %invstd = tcc.layer_norm %x1 {eps = 1.0e-05 : f64, normalized_dims = 1 : i64}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %l = tcc.linear %x1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a = tcc.relu %y : tensor<4x8xf32>
  return %a, %l : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Must not fire: the add has another shape than the norm's input (a reshape,
// not elementwise, sits between them), and nothing elementwise reads the
// normalised value.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: tcc.fusion_group
// CHECK: return
func.func @train_step(%x: tensor<4x2x4xf32> {tcc.role = "input"}, %r: tensor<4x2x4xf32> {tcc.role = "input"})
    -> tensor<4x8xf32> {
  %x1 = tcc.add %x, %r : tensor<4x2x4xf32>, tensor<4x2x4xf32>
  %f = tcc.reshape %x1 {shape = array<i64: 4, 8>} : (tensor<4x2x4xf32>) -> tensor<4x8xf32>
  %y, %mean, %invstd = tcc.layer_norm %f {eps = 1.0e-05 : f64, normalized_dims = 1 : i64}
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// The backward: the widening of the 16-bit upstream gradient and the
// residual gradient's add, read only by the layer_norm_backward, form its
// norm_backward_prologue; the gradient never reaches memory.
// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[G:.*]]:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
// CHECK-NEXT: %[[W:.*]] = tcc.cast %arg0 to f32
// CHECK-NEXT: %[[DY:.*]] = tcc.add %[[W]], %arg1
// CHECK-NEXT: tcc.layer_norm_backward %[[DY]], %arg2
// CHECK-NEXT: tcc.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#0, %[[G]]#1, %[[G]]#2
func.func @train_step(%g16: tensor<4x8xbf16> {tcc.role = "input"}, %gr: tensor<4x8xf32> {tcc.role = "input"},
                      %x: tensor<4x8xf32> {tcc.role = "input"}, %gamma: tensor<8xf32> {tcc.role = "input"},
                      %mean: tensor<4xf32> {tcc.role = "input"}, %invstd: tensor<4xf32> {tcc.role = "input"})
    -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %gw = tcc.cast %g16 to f32 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %dy = tcc.add %gw, %gr : tensor<4x8xf32>, tensor<4x8xf32>
  %dx, %dw, %db = tcc.layer_norm_backward %dy, %x weight %gamma saved %mean, %invstd {normalized_dims = 1 : i64}
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %dw, %db : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Must not fire: the upstream gradient's add is read by another op too (the
// backward's kernel computes it where it reads it and stores nothing), so
// it stays an op of its own and the backward reads it from memory.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: tcc.fusion_group
// CHECK: return
func.func @train_step(%g: tensor<4x8xf32> {tcc.role = "input"}, %gr: tensor<4x8xf32> {tcc.role = "input"},
                      %x: tensor<4x8xf32> {tcc.role = "input"},
                      %mean: tensor<4xf32> {tcc.role = "input"}, %invstd: tensor<4xf32> {tcc.role = "input"})
    -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %dy = tcc.add %g, %gr : tensor<4x8xf32>, tensor<4x8xf32>
  %dx, %dw, %db = tcc.layer_norm_backward %dy, %x saved %mean, %invstd {normalized_dims = 1 : i64}
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %db, %dy : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>
}
