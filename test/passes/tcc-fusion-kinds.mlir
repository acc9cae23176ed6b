// RUN: tcc-opt %s -split-input-file -tcc-fusion | FileCheck %s

// tcc-fusion groups by what ops declare (FusionOpInterface), not by their
// names. A multi_tensor_update takes every Broadcast op that updates state
// in place (InPlaceStateUpdate): AdamW's and SGD's updates. LAMB's update,
// a Reduction (its trust ratio needs whole-tensor norms), and scale_by, a
// Broadcast op with no state, stay out.
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.scale_by
// CHECK: tcc.lamb_update
// CHECK: tcc.fusion_group "multi_tensor_update"
// CHECK-NEXT: tcc.adamw_update
// CHECK-NEXT: tcc.sgd_update
// CHECK-NEXT: tcc.yield
// CHECK-NOT: tcc.fusion_group
func.func @train_step(%p: tensor<4xf32> {tcc.state = "p"}, %m: tensor<4xf32> {tcc.state = "m"},
                      %v: tensor<4xf32> {tcc.state = "v"}, %q: tensor<4xf32> {tcc.state = "q"},
                      %qm: tensor<4xf32> {tcc.state = "qm"}, %qv: tensor<4xf32> {tcc.state = "qv"},
                      %s: tensor<4xf32> {tcc.state = "s"},
                      %g: tensor<4xf32> {tcc.role = "input"}, %c: tensor<f32> {tcc.role = "input"},
                      %lr: tensor<f32> {tcc.role = "input"}, %step: tensor<i64> {tcc.role = "input"})
    -> (tensor<4xf32> {tcc.state = "p"}, tensor<4xf32> {tcc.state = "m"},
        tensor<4xf32> {tcc.state = "v"}, tensor<4xf32> {tcc.state = "q"},
        tensor<4xf32> {tcc.state = "qm"}, tensor<4xf32> {tcc.state = "qv"},
        tensor<4xf32> {tcc.state = "s"}) {
  %g2 = tcc.scale_by %g, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %p1, %m1, %v1 = tcc.adamw_update %p, %g2, %lr, %step, %m, %v {beta1 = 9.0e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.0e-08 : f64, lr_scale = 1.0 : f64, weight_decay = 1.0e-02 : f64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %q1, %qm1, %qv1 = tcc.lamb_update %q, %g2, %lr, %step, %qm, %qv {beta1 = 9.0e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.0e-08 : f64, lr_scale = 1.0 : f64, weight_decay = 1.0e-02 : f64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %s1 = tcc.sgd_update %s, %g2, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
  return %p1, %m1, %v1, %q1, %qm1, %qv1, %s1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The Reduction kind alone anchors no epilogue: batch_norm declares the
// result whose consumers its kernel applies (getEpilogueResult) and takes
// its ReLU in; cross_entropy, a Reduction too, declares none, so the scale
// of the loss it computes stays a kernel of its own.
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.fusion_group "norm_epilogue"
// CHECK-NEXT: tcc.batch_norm
// CHECK-NEXT: tcc.relu
// CHECK-NEXT: tcc.yield
// CHECK: tcc.cross_entropy
// CHECK-NEXT: tcc.scale
// CHECK-NOT: tcc.fusion_group
func.func @train_step(%x: tensor<4x2xf32> {tcc.role = "input"}, %m: tensor<2xf32> {tcc.state = "m"},
                      %v: tensor<2xf32> {tcc.state = "v"}, %labels: tensor<4xi64> {tcc.role = "input"})
    -> (tensor<f32>, tensor<4x2xf32>, tensor<2xf32> {tcc.state = "m"}, tensor<2xf32> {tcc.state = "v"}) {
  %y, %mean, %invstd, %rm, %rv = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
      : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = tcc.relu %y : tensor<4x2xf32>
  %loss = tcc.cross_entropy %r, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
  %l2 = tcc.scale %loss {factor = 2.0 : f64} : tensor<f32>
  return %l2, %r, %rm, %rv : tensor<f32>, tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
}
