// The properties passes query are declared on the ops: elementwise, monotone
// non-decreasing (pool/activation reordering), differentiable (autodiff).
// RUN: tcc-opt %s -tcc-test-op-properties | FileCheck %s

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<4x8xf32>) {
  // CHECK: tcc.relu {{.*}}test.differentiable = true, test.elementwise = true, test.monotone = true
  %0 = tcc.relu %x : tensor<4x8xf32>
  // CHECK: tcc.leaky_relu {{.*}}test.monotone = true
  %1 = tcc.leaky_relu %x {negative_slope = 1.0e-02 : f64} : tensor<4x8xf32>
  // A negative slope is not monotone.
  // CHECK: tcc.leaky_relu {{.*}}test.monotone = false
  %2 = tcc.leaky_relu %x {negative_slope = -1.0e-01 : f64} : tensor<4x8xf32>
  // CHECK: tcc.elu {{.*}}test.monotone = true
  %3 = tcc.elu %x {alpha = 1.0 : f64} : tensor<4x8xf32>
  // CHECK: tcc.elu {{.*}}test.monotone = false
  %4 = tcc.elu %x {alpha = -1.0 : f64} : tensor<4x8xf32>
  // CHECK: tcc.celu {{.*}}test.monotone = true
  %5 = tcc.celu %x {alpha = 3.0e-01 : f64} : tensor<4x8xf32>
  // CHECK: tcc.sigmoid {{.*}}test.monotone = true
  %6 = tcc.sigmoid %x : tensor<4x8xf32>
  // CHECK: tcc.tanh {{.*}}test.monotone = true
  %7 = tcc.tanh %x : tensor<4x8xf32>
  // gelu and silu dip below zero: no monotonicity claim at all.
  // CHECK: tcc.gelu
  // CHECK-SAME: test.elementwise = true
  // CHECK-NOT: test.monotone
  %8 = tcc.gelu %x : tensor<4x8xf32>
  // CHECK: tcc.silu
  // CHECK-SAME: test.elementwise = true
  // CHECK-NOT: test.monotone
  %9 = tcc.silu %x : tensor<4x8xf32>
  // CHECK: tcc.scale {{.*}}test.monotone = true
  %10 = tcc.scale %x {factor = 1.25e-01 : f64} : tensor<4x8xf32>
  // CHECK: tcc.scale {{.*}}test.monotone = false
  %11 = tcc.scale %x {factor = -1.0 : f64} : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @others
func.func @others(%x: tensor<4x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %l: tensor<4xi64>) {
  // Not elementwise, differentiable, no monotonicity claim.
  // CHECK: tcc.conv2d {{.*}}test.differentiable = true, test.elementwise = false}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<4x8x6x6xf32>
  // CHECK: tcc.max_pool2d {{.*}}test.differentiable = true, test.elementwise = false}
  %1 = tcc.max_pool2d %0 {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<4x8x6x6xf32>) -> tensor<4x8x3x3xf32>
  // CHECK: tcc.add {{.*}}test.differentiable = true, test.elementwise = true}
  %2 = tcc.add %0, %x : tensor<4x8x6x6xf32>, tensor<4x8x6x6xf32>
  // One-hot has no gradient.
  // CHECK: tcc.one_hot {{.*}}test.differentiable = false
  %3 = tcc.one_hot %l {classes = 10 : i64} : (tensor<4xi64>) -> tensor<4x10xf32>
  return
}
