// RUN: tcc-translate --emit-cpu %s | FileCheck %s

// The step contract (docs/step-contract.md): an op whose operand is a value
// of the step (learning rate, step counter, seed, loss gradient, norm, valid
// count, run constant) hands the kernel a pointer; the kernel reads it. No
// statement the cpu target prints reads such a value on the host.
// CHECK-NOT: [0]

// CHECK-LABEL: // @schedule_and_counter
func.func @schedule_and_counter(%step: tensor<i64>, %per_epoch: tensor<i64>,
                                %total: tensor<i64>, %seed: tensor<i64>) {
  // CHECK: // tcc.lr_schedule
  // CHECK-NEXT: static const ScheduleDesc schedule =
  // CHECK-NEXT: cpu::lr_schedule(schedule, 0.5, a0, a1, a2, r0); }
  %lr = tcc.lr_schedule %step, %per_epoch, %total {base_lr = 0.5 : f64, schedule = #tcc.schedule<type = constant, unit = step, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<f32>
  // CHECK: // tcc.increment
  // CHECK-NEXT: cpu::increment(a0, static_cast<float *>(nullptr), r1);
  %next = tcc.increment %step : tensor<i64>
  // CHECK: // tcc.mix_seed
  // CHECK-NEXT: cpu::mix_seed(a3, a0, r2);
  %mixed = tcc.mix_seed %seed, %step : tensor<i64>
  return
}

// CHECK-LABEL: // @optimizer
func.func @optimizer(%w: tensor<24xf32>, %g: tensor<24xf32>, %lr: tensor<f32>,
                     %step: tensor<i64>, %buf: tensor<24xf32>, %ema: tensor<24xf32>,
                     %slow: tensor<24xf32>, %total: tensor<i64>) {
  // The update works in place on its results: the state is copied into them
  // first, then the kernel reads lr (a2) and the counter (a3) itself.
  // CHECK: // tcc.sgd_update
  // CHECK-NEXT: copy<float>(24, a0, r0);
  // CHECK-NEXT: copy<float>(24, a4, r1);
  // CHECK-NEXT: cpu::sgd_update<float>(24, r0, a1, r1, a2, 1, 0.84999999999999998, 0, 0.5, true, a3, static_cast<float *>(nullptr));
  %p, %m = tcc.sgd_update %w, %g, %lr, %step momentum_buffer %buf {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.85 : f64, nesterov = true, weight_decay = 0.5 : f64} : (tensor<24xf32>, tensor<24xf32>, tensor<f32>, tensor<i64>, tensor<24xf32>) -> (tensor<24xf32>, tensor<24xf32>)
  // The EMA cadence is decided by the kernel from the counter: decay^every.
  // CHECK: // tcc.ema_update
  // CHECK-NEXT: copy<float>(24, a5, r2);
  // CHECK-NEXT: cpu::ema_update<float>(24, 0.81000000000000005, 2, a3, r0, r2);
  %e = tcc.ema_update %ema, %p, %step {decay = 0.9 : f64, every = 2 : i64} : (tensor<24xf32>, tensor<24xf32>, tensor<i64>) -> tensor<24xf32>
  // CHECK: // tcc.lookahead_update
  // CHECK: cpu::lookahead_update<float>(24, 0.5, true, 5, a3, a7, r3, r4);
  %f, %s = tcc.lookahead_update %p, %slow, %step, %total {alpha = 0.5 : f64, alpha_schedule = "cubic", every = 5 : i64} : (tensor<24xf32>, tensor<24xf32>, tensor<i64>, tensor<i64>) -> (tensor<24xf32>, tensor<24xf32>)
  return
}

// CHECK-LABEL: // @clipping
func.func @clipping(%g1: tensor<16x3xf32>, %g2: tensor<16xf32>) {
  // CHECK: // tcc.global_norm
  // CHECK-NEXT: { const float *tensors[] = {a0, a1}; const int64_t sizes[] = {48, 16};
  // CHECK-NEXT: cpu::global_norm<float>(2, tensors, sizes, r0); }
  %n = tcc.global_norm %g1, %g2 : (tensor<16x3xf32>, tensor<16xf32>) -> tensor<f32>
  // CHECK: // tcc.clip_coefficient
  // CHECK-NEXT: cpu::clip_coefficient<float>(0.25, r0, r1);
  %c = tcc.clip_coefficient %n {max_norm = 0.25 : f64} : tensor<f32>
  // CHECK: // tcc.scale_by
  // CHECK-NEXT: cpu::scale_by<float>(16, r1, a1, r2);
  %s = tcc.scale_by %g2, %c : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  return
}

// CHECK-LABEL: // @loss_and_metrics
func.func @loss_and_metrics(%logits: tensor<8x10xf32>, %labels: tensor<8xi64>,
                            %valid: tensor<i64>, %seed: tensor<i64>) {
  // A constant is a one-element buffer the kernel reads.
  // CHECK: float c0[1] = {float(1)};
  %one = arith.constant dense<1.0> : tensor<f32>
  // CHECK: // tcc.cross_entropy_backward
  // CHECK-NEXT: cpu::cross_entropy_backward<float>(8, 10, a0, a1, 0.20000000000000001, Reduction::Sum, c0, r0);
  %d = tcc.cross_entropy_backward %one, %logits, %labels {label_smoothing = 0.2 : f64, reduction = "sum"} : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
  // CHECK: // tcc.count_correct
  // CHECK-NEXT: cpu::count_correct<float>(8, 10, a0, a1, a2, r1);
  %correct = tcc.count_correct %logits, %labels, %valid : (tensor<8x10xf32>, tensor<8xi64>, tensor<i64>) -> tensor<i64>
  // CHECK: // tcc.dropout
  // CHECK-NEXT: cpu::dropout_forward<float>(80, 0.5, a3, 3, args.control, a0, r2);
  %dropped = tcc.dropout %logits, %seed {p = 0.5 : f64, stream = 3 : i64} : (tensor<8x10xf32>, tensor<i64>) -> tensor<8x10xf32>
  return
}

// fp16 loss scaling: the scale, the found-inf flag and the counters are
// values of the step too; the updates skip on the flag in the kernel.
// CHECK-LABEL: // @loss_scaling
func.func @loss_scaling(%scale: tensor<f32>, %tracker: tensor<i64>, %applied: tensor<i64>,
                        %g: tensor<24xf32>, %w: tensor<24xf32>, %lr: tensor<f32>) {
  // CHECK: // tcc.reciprocal
  // CHECK-NEXT: cpu::reciprocal(a0, r0);
  %inv = tcc.reciprocal %scale : tensor<f32>
  // CHECK: // tcc.found_non_finite
  // CHECK-NEXT: { const float *tensors[] = {a3}; const int64_t sizes[] = {24};
  // CHECK-NEXT: cpu::found_non_finite<float>(1, tensors, sizes, r1); }
  %found = tcc.found_non_finite %g : (tensor<24xf32>) -> tensor<f32>
  // CHECK: // tcc.sgd_update
  // CHECK: cpu::sgd_update<float>(24, r2, a3, static_cast<float *>(nullptr), a5, 1, 0, 0, 0, false, a2, r1);
  %p = tcc.sgd_update %w, %g, %lr, %applied skip %found {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64} : (tensor<24xf32>, tensor<24xf32>, tensor<f32>, tensor<i64>, tensor<f32>) -> tensor<24xf32>
  // CHECK: // tcc.update_loss_scale
  // CHECK-NEXT: cpu::update_loss_scale(2, 0.5, 2000, a0, a1, r1, r3, r4);
  %s, %t = tcc.update_loss_scale %scale, %tracker, %found {backoff_factor = 0.5 : f64, growth_factor = 2.0 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  // CHECK: // tcc.increment
  // CHECK-NEXT: cpu::increment(a2, r1, r5);
  %n = tcc.increment %applied skip %found : tensor<i64>
  return
}
