// RUN: tcc-translate --emit-cpu %s | FileCheck %s

// A tcc.fusion_group is one loop nest (codegen/cpu/CpuGroups.cpp around
// codegen/common/ElementBody.cpp): each op an element functor of
// runtime/kernels or a float operator, each value that goes on to another
// op through as_stored() (no FMA across two ops), the group's results
// stored at element i after every read of element i (the memory plan may
// put a result over an operand the group reads last); a value read only
// inside the group is a local and never stored.

// CHECK-LABEL: // @elementwise
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: const auto f0 = Celu<float>(0.29999999999999999);
// CHECK-NEXT: #pragma omp parallel for schedule(static)
// CHECK-NEXT: for (int64_t i = 0; i < 8; ++i) {
// CHECK-NEXT: const float t0 = as_stored(f0(a0[i]));
// CHECK-NEXT: const float t1 = as_stored(t0 + a1[i]);
// CHECK-NEXT: const float t2 = as_stored(float(0.5) * t1);
// CHECK-NEXT: r0[i] = t1;
// CHECK-NEXT: r1[i] = t2;
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @elementwise(%x: tensor<8xf32>, %r: tensor<8xf32>) {
  %0:2 = tcc.fusion_group "elementwise" -> (tensor<8xf32>, tensor<8xf32>) {
    %a = tcc.celu %x {alpha = 0.3 : f64} : tensor<8xf32>
    %b = tcc.add %a, %r : tensor<8xf32>, tensor<8xf32>
    %c = tcc.scale %b {factor = 0.5 : f64} : tensor<8xf32>
    tcc.yield %b, %c : tensor<8xf32>, tensor<8xf32>
  }
  return
}

// The batch norm's kernel stores each normalised element through the
// epilogue: the normalised value (r0) and the activation's (r5).
// CHECK-LABEL: // @norm_epilogue
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: const auto f0 = Relu<float>{};
// CHECK-NEXT: copy<float>(2, a1, r3);
// CHECK-NEXT: copy<float>(2, a2, r4);
// CHECK-NEXT: batch_norm_forward_train_with<float>(BatchNormShape{4, 2, 1, 0}, a0, static_cast<float *>(nullptr), static_cast<float *>(nullptr), 1.0000000000000001e-05, 0.10000000000000001, [&](int64_t i, float y) {
// CHECK-NEXT: r0[i] = y;
// CHECK-NEXT: const float t0 = as_stored(f0(y));
// CHECK-NEXT: r5[i] = t0;
// CHECK-NEXT: }, r1, r2, r3, r4);
func.func @norm_epilogue(%x: tensor<4x2xf32>, %rm: tensor<2xf32>, %rv: tensor<2xf32>) {
  %0:6 = tcc.fusion_group "norm_epilogue" -> (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2xf32>) {
    %y, %m, %i, %nrm, %nrv = tcc.batch_norm %x running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
    %a = tcc.relu %y : tensor<4x2xf32>
    tcc.yield %y, %m, %i, %nrm, %nrv, %a : tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2xf32>
  }
  return
}

// The backward kernel reads its upstream gradient from the prologue: the
// activation's backward (value a1, gradient a0), never stored.
// CHECK-LABEL: // @norm_backward_prologue
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: const auto f0 = CeluBackward<float>(1);
// CHECK-NEXT: batch_norm_backward_with<float>(BatchNormShape{4, 2, 1, 0}, [&](int64_t i, {{\[\[maybe_unused\]\]}} int64_t gc) {
// CHECK-NEXT: const float t0 = as_stored(f0(a1[i], a0[i]));
// CHECK-NEXT: return t0;
// CHECK-NEXT: }, a1, static_cast<float *>(nullptr), a2, a3, r0, r1, r2);
func.func @norm_backward_prologue(%g: tensor<4x2xf32>, %x: tensor<4x2xf32>, %mean: tensor<1x2xf32>, %invstd: tensor<1x2xf32>) {
  %0:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %dy = tcc.celu_backward %g, %x {alpha = 1.0 : f64} : tensor<4x2xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %dy, %x saved %mean, %invstd {ghost_batch = 0 : i64}
        : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return
}

// A normalised value recomputed in the prologue (tcc-recompute): the
// batch norm's affine map at element i, with `gc` the (ghost batch,
// channel) row of the statistics the backward kernel is on.
// CHECK-LABEL: // @prologue_recomputes
// CHECK: batch_norm_backward_with<float>(BatchNormShape{4, 2, 1, 2}, [&](int64_t i, {{\[\[maybe_unused\]\]}} int64_t gc) {
// CHECK-NEXT: const float t0 = as_stored(batch_norm_apply_at<float>(a1[i], a3[gc], a4[gc], a2, static_cast<float *>(nullptr), gc % 2));
// CHECK-NEXT: const float t1 = as_stored(f1(t0, a0[i]));
// CHECK-NEXT: return t1;
// CHECK-NEXT: }, a1, a2, a3, a4, r0, r1, r2);
func.func @prologue_recomputes(%g: tensor<4x2xf32>, %x: tensor<4x2xf32>, %w: tensor<2xf32>, %mean: tensor<2x2xf32>, %invstd: tensor<2x2xf32>) {
  %0:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %y = tcc.batch_norm_apply %x weight %w saved %mean, %invstd {ghost_batch = 2 : i64}
        : (tensor<4x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
    %dy = tcc.celu_backward %g, %y {alpha = 1.0 : f64} : tensor<4x2xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %dy, %x weight %w saved %mean, %invstd {ghost_batch = 2 : i64}
        : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return
}

// A norm_epilogue recomputed under a memory budget: the apply's kernel with
// the activation as its store.
// CHECK-LABEL: // @apply_epilogue
// CHECK: batch_norm_apply_with<float>(BatchNormShape{4, 2, 1, 0}, a0, static_cast<float *>(nullptr), a1, a2, a3, [&](int64_t i, float y) {
// CHECK-NEXT: const float t0 = as_stored(f0(y));
// CHECK-NEXT: r0[i] = t0;
func.func @apply_epilogue(%x: tensor<4x2xf32>, %b: tensor<2xf32>, %mean: tensor<1x2xf32>, %invstd: tensor<1x2xf32>) -> tensor<4x2xf32> {
  %0 = tcc.fusion_group "norm_epilogue" -> (tensor<4x2xf32>) {
    %y = tcc.batch_norm_apply %x bias %b saved %mean, %invstd {ghost_batch = 0 : i64}
        : (tensor<4x2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
    %a = tcc.relu %y : tensor<4x2xf32>
    tcc.yield %a : tensor<4x2xf32>
  }
  return %0 : tensor<4x2xf32>
}

// The multi-tensor update: one table of stages per tensor chain, a stage
// reading what an earlier stage of its chain wrote (Lookahead after SGD)
// preceded by a copy at element i; the learning rate and the step counter
// passed as pointers (read by the kernel, never here).
// CHECK-LABEL: // @multi_tensor_update
// CHECK: // tcc.fusion_group
// CHECK-NEXT: copy<float>(4, a0, r0);
// CHECK-NEXT: copy<float>(4, a5, r2);
// CHECK-NEXT: copy<float>(8, a6, r3);
// CHECK-NEXT: {
// CHECK-NEXT: const cpu::UpdateStage<float> stages[] = {
// CHECK-NEXT: cpu::sgd_stage<float>(r0, a1, static_cast<float *>(nullptr), a2, a3, static_cast<float *>(nullptr), 1, 0, 0, 0, false),
// CHECK-NEXT: cpu::copy_stage<float>(r1, r0),
// CHECK-NEXT: cpu::lookahead_stage<float>(r1, r2, a3, a4, 0.5, false, 2),
// CHECK-NEXT: cpu::ema_stage<float>(r3, a6, a3, 0.25, 2),
// CHECK-NEXT: };
// CHECK-NEXT: const cpu::UpdateChain chains[] = {
// CHECK-NEXT: {4, 0, 3},
// CHECK-NEXT: {8, 3, 1},
// CHECK-NEXT: };
// CHECK-NEXT: cpu::multi_tensor_update<float>(chains, 2, stages);
func.func @multi_tensor_update(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>,
                               %total: tensor<i64>, %slow: tensor<4xf32>, %value: tensor<8xf32>) {
  %0:4 = tcc.fusion_group "multi_tensor_update" -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) {
    %p1 = tcc.sgd_update %p, %g, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
        : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
    %p2, %s2 = tcc.lookahead_update %p1, %slow, %step, %total {alpha = 0.5 : f64, alpha_schedule = "constant", every = 2 : i64}
        : (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
    %e = tcc.ema_update %value, %value, %step {decay = 0.5 : f64, every = 2 : i64} : (tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> tensor<8xf32>
    tcc.yield %p1, %p2, %s2, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>
  }
  return
}

// 16-bit storage (the cpu target's casts around it, tcc-widen-16bit) is
// converted where the casts are: down with the cast kernel's rounding, into
// a uint16_t local, and up exactly (neither needs as_stored: a conversion
// is no product to contract); the 16-bit value the group yields is stored
// as such.
// CHECK-LABEL: // @sixteen_bit
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: const auto [[GELU:f[0-9]+]] = Gelu<float>{};
// CHECK-NEXT: #pragma omp parallel for schedule(static)
// CHECK-NEXT: for (int64_t i = 0; i < 8; ++i) {
// CHECK-NEXT: const uint16_t t0 = float_to_bf16(a0[i]);
// CHECK-NEXT: const float t1 = bf16_to_float(t0);
// CHECK-NEXT: const float t2 = as_stored([[GELU]](t1));
// CHECK-NEXT: const uint16_t t3 = float_to_f16(t2);
// CHECK-NEXT: const float t4 = f16_to_float(t3);
// CHECK-NEXT: r0[i] = t0;
// CHECK-NEXT: r1[i] = t4;
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @sixteen_bit(%x: tensor<8xf32>) {
  %0:2 = tcc.fusion_group "elementwise" -> (tensor<8xbf16>, tensor<8xf32>) {
    %down = tcc.cast %x to bf16 : (tensor<8xf32>) -> tensor<8xbf16>
    %up = tcc.cast %down to f32 : (tensor<8xbf16>) -> tensor<8xf32>
    %g = tcc.gelu %up : tensor<8xf32>
    %h = tcc.cast %g to f16 : (tensor<8xf32>) -> tensor<8xf16>
    %back = tcc.cast %h to f32 : (tensor<8xf16>) -> tensor<8xf32>
    tcc.yield %down, %back : tensor<8xbf16>, tensor<8xf32>
  }
  return
}

// A layer norm's group: the kernel reads its input through xAt (the
// widening and the residual add, computed again at each read) and hands
// each normalised element with its input to store, which stores the sum
// the group yields (x, not computed again) and the narrowed output.
// CHECK-LABEL: // @layer_norm_epilogue
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: layer_norm_forward_with<float>(4, 8, [&](int64_t i) -> float {
// CHECK-NEXT: const float t0 = bf16_to_float(a1[i]);
// CHECK-NEXT: const float t1 = as_stored(a0[i] + t0);
// CHECK-NEXT: return t1;
// CHECK-NEXT: }, a2, static_cast<float *>(nullptr), 1.0000000000000001e-05, [&](int64_t i, {{\[\[maybe_unused\]\]}} float x, float y) {
// CHECK-NEXT: const uint16_t t0 = float_to_bf16(y);
// CHECK-NEXT: r0[i] = x;
// CHECK-NEXT: r3[i] = t0;
// CHECK-NEXT: }, r1, r2);
func.func @layer_norm_epilogue(%x: tensor<4x8xf32>, %r: tensor<4x8xbf16>, %g: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xbf16>) {
  %0:4 = tcc.fusion_group "norm_epilogue" -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xbf16>) {
    %rw = tcc.cast %r to f32 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
    %x1 = tcc.add %x, %rw : tensor<4x8xf32>, tensor<4x8xf32>
    %y, %m, %i = tcc.layer_norm %x1 weight %g {eps = 1.0e-05 : f64, normalized_dims = 1 : i64}
        : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
    %yn = tcc.cast %y to bf16 : (tensor<4x8xf32>) -> tensor<4x8xbf16>
    tcc.yield %x1, %m, %i, %yn : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xbf16>
  }
  return %0#0, %0#1, %0#2, %0#3 : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xbf16>
}

// The layer norm backward reads its gradient through dyAt: the widening of
// the 16-bit gradient, never stored.
// CHECK-LABEL: // @layer_norm_backward_prologue
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: layer_norm_backward_with<float>(4, 8, [&](int64_t i) -> float {
// CHECK-NEXT: const float t0 = bf16_to_float(a0[i]);
// CHECK-NEXT: return t0;
// CHECK-NEXT: }, a1, static_cast<float *>(nullptr), a2, a3, r0, r1, r2);
func.func @layer_norm_backward_prologue(%g: tensor<4x8xbf16>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %invstd: tensor<4xf32>)
    -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %dy = tcc.cast %g to f32 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
    %dx, %dw, %db = tcc.layer_norm_backward %dy, %x saved %mean, %invstd {normalized_dims = 1 : i64}
        : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  }
  return %0#0, %0#1, %0#2 : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}
