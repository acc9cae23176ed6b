// RUN: tcc-opt %s -tcc-pool-activation-reorder -split-input-file | FileCheck %s
// RUN: tcc-opt %s -tcc-pool-activation-reorder -split-input-file | FileCheck %s --check-prefix=REPORT

// Fires: a ReLU whose only user is a max pool; the ReLU then runs on the
// pooled (4x smaller) tensor.
// What the pass did, per module (docs/passes.md):
// REPORT: module attributes {tcc.pass_report = {"pool-activation-reorder" = {moved = 1 : i64}}}
// REPORT: module attributes {tcc.pass_report = {"pool-activation-reorder" = {moved = 1 : i64}}}
// REPORT: module attributes {tcc.pass_report = {"pool-activation-reorder" = {moved = 0 : i64}}}
// REPORT: module attributes {tcc.pass_report = {"pool-activation-reorder" = {moved = 0 : i64}}}
// REPORT: module attributes {tcc.pass_report = {"pool-activation-reorder" = {moved = 0 : i64}}}
// REPORT: module attributes {tcc.pass_report = {"pool-activation-reorder" = {moved = 0 : i64}}}

// CHECK-LABEL: func.func @relu_max_pool
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>)
// CHECK-NEXT: %[[P:.*]] = tcc.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[R:.*]] = tcc.relu %[[P]] : tensor<2x3x4x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @relu_max_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %r = tcc.relu %x : tensor<2x3x8x8xf32>
  %p = tcc.max_pool2d %r {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  return %p : tensor<2x3x4x4xf32>
}

// -----

// Fires: global max pooling.
// CHECK-LABEL: func.func @relu_global_max_pool
// CHECK-NEXT: %[[P:.*]] = tcc.global_max_pool %{{.*}} : (tensor<2x3x8x8xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = tcc.relu %[[P]] : tensor<2x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @relu_global_max_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3xf32> {
  %r = tcc.relu %x : tensor<2x3x8x8xf32>
  %p = tcc.global_max_pool %r : (tensor<2x3x8x8xf32>) -> tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}

// -----

// Must not fire: the ReLU has another user (it would run twice).
// CHECK-LABEL: func.func @relu_two_users
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.max_pool2d
func.func @relu_two_users(%x: tensor<2x3x8x8xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) {
  %r = tcc.relu %x : tensor<2x3x8x8xf32>
  %p = tcc.max_pool2d %r {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  return %p, %r : tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>
}

// -----

// Must not fire: average pooling does not commute with a non-linear f.
// CHECK-LABEL: func.func @relu_avg_pool
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.avg_pool2d
func.func @relu_avg_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %r = tcc.relu %x : tensor<2x3x8x8xf32>
  %p = tcc.avg_pool2d %r {count_include_pad = true, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  return %p : tensor<2x3x4x4xf32>
}

// -----

// Must not fire: GELU and SiLU are not monotone.
// CHECK-LABEL: func.func @not_monotone
// CHECK-NEXT: tcc.gelu
// CHECK-NEXT: tcc.max_pool2d
// CHECK-NEXT: tcc.silu
// CHECK-NEXT: tcc.global_max_pool
func.func @not_monotone(%x: tensor<2x3x8x8xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3xf32>) {
  %g = tcc.gelu %x : tensor<2x3x8x8xf32>
  %p = tcc.max_pool2d %g {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %s = tcc.silu %x : tensor<2x3x8x8xf32>
  %q = tcc.global_max_pool %s : (tensor<2x3x8x8xf32>) -> tensor<2x3xf32>
  return %p, %q : tensor<2x3x4x4xf32>, tensor<2x3xf32>
}

// -----

// Must not fire: monotone, but they round neighbouring inputs to one output
// where their slope is not zero, so a near-tie in a window would send the
// gradient to another element (docs/passes.md): leaky ReLU, ELU, CELU,
// sigmoid, tanh.
// CHECK-LABEL: func.func @monotone_with_new_ties
// CHECK-NEXT: tcc.leaky_relu
// CHECK-NEXT: tcc.max_pool2d
// CHECK-NEXT: tcc.celu
// CHECK-NEXT: tcc.max_pool2d
// CHECK-NEXT: tcc.tanh
// CHECK-NEXT: tcc.global_max_pool
func.func @monotone_with_new_ties(%x: tensor<2x3x8x8xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3xf32>) {
  %l = tcc.leaky_relu %x {negative_slope = 0.1 : f64} : tensor<2x3x8x8xf32>
  %p = tcc.max_pool2d %l {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %c = tcc.celu %x {alpha = 0.3 : f64} : tensor<2x3x8x8xf32>
  %q = tcc.max_pool2d %c {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %t = tcc.tanh %x : tensor<2x3x8x8xf32>
  %u = tcc.global_max_pool %t : (tensor<2x3x8x8xf32>) -> tensor<2x3xf32>
  return %p, %q, %u : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3xf32>
}
