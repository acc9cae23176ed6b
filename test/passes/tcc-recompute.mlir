// RUN: tcc-opt %s -split-input-file -tcc-recompute | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-recompute -tcc-plan-memory | FileCheck %s --check-prefix=PLAN
// The groups are as tcc-fusion forms them.

// Free: the normalised value that only its own norm's backward prologue
// reads (CELU's backward takes the activation's input) is computed again
// inside that prologue from the norm's input, which the backward reads
// anyway. The epilogue group no longer yields it: it never reaches memory.
// CHECK: tcc.pass_report = {recompute = {bytes_saved = 320 : i64, for_budget = [], free = ["bn (batch_norm)"], kernels_added = 0 : i64, peak_bytes_after = 1728 : i64, peak_bytes_before = 2048 : i64, values = 1 : i64}}
// CHECK: %[[G:.*]]:5 = tcc.fusion_group "norm_epilogue" -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>) {
// CHECK: tcc.yield %saved_mean, %saved_invstd, %new_running_mean, %new_running_var, %{{.*}} :
// CHECK: tcc.fusion_group "norm_backward_prologue"
// CHECK-NEXT: %[[Y:.*]] = tcc.batch_norm_apply %arg0 weight %arg2 bias %arg3 saved %[[G]]#0, %[[G]]#1 {ghost_batch = 0 : i64}
// CHECK-NEXT: tcc.celu_backward %arg1, %[[Y]]
// CHECK-NEXT: tcc.batch_norm_backward
// PLAN-LABEL: func.func @train_step(
// PLAN: tcc.fusion_group "norm_epilogue" {tcc.placement = #tcc.placement<scratch = [0, 64, -1, -1, 128]
#loc_bn = loc("bn")
func.func @train_step(%x: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %dy: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %w: tensor<2xf32> {tcc.state = "bn.weight"},
                      %b: tensor<2xf32> {tcc.state = "bn.bias"},
                      %rm: tensor<2xf32> {tcc.state = "bn.running_mean"},
                      %rv: tensor<2xf32> {tcc.state = "bn.running_var"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>,
        tensor<2xf32> {tcc.state = "bn.running_mean"}, tensor<2xf32> {tcc.state = "bn.running_var"}) {
  %g:6 = tcc.fusion_group "norm_epilogue" -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>) {
    %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %x weight %w bias %b running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
        -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) loc(#loc_bn)
    %a = tcc.celu %y {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    tcc.yield %y, %mean, %invstd, %nrm, %nrv, %a : tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>
  }
  %p:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) {
    %d = tcc.celu_backward %dy, %g#0 {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %d, %x weight %w saved %g#1, %g#2 {ghost_batch = 0 : i64}
        : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %g#5, %p#0, %p#1, %g#3, %g#4 : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Free under 16-bit storage (the cpu target's widened form: each reader of
// a bf16 value has its own f32 copy). The norm stores its normalised value
// as bf16 (%y16), which CELU's backward reads through a copy. The prologue
// computes it again from the f32 copy of the norm's input that the norm
// backward reads (the same numbers as the forward's copy: both are casts of
// %c16) and rounds it to bf16 again where the forward did; the epilogue no
// longer yields %y16.
// CHECK: {{^}}// {{-----}}
// CHECK: free = ["bn16 (batch_norm)"]
// CHECK: %[[C:.*]]:2 = tcc.fusion_group "elementwise"
// CHECK: %[[G:.*]]:5 = tcc.fusion_group "norm_epilogue" -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xbf16>) {
// CHECK: %[[XB:.*]] = tcc.cast %[[C]]#0 to f32
// CHECK: tcc.fusion_group "norm_backward_prologue"
// CHECK-NEXT: %[[Y:.*]] = tcc.batch_norm_apply %[[XB]] saved %[[G]]#0, %[[G]]#1 {ghost_batch = 0 : i64}
// CHECK-NEXT: %[[Y16:.*]] = tcc.cast %[[Y]] to bf16
// CHECK-NEXT: %[[YUP:.*]] = tcc.cast %[[Y16]] to f32
// CHECK-NEXT: tcc.celu_backward %{{.*}}, %[[YUP]]
// CHECK-NEXT: tcc.batch_norm_backward {{.*}}, %[[XB]]
#loc_bn16 = loc("bn16")
func.func @train_step(%conv: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %dy: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %rm: tensor<2xf32> {tcc.state = "bn.running_mean"},
                      %rv: tensor<2xf32> {tcc.state = "bn.running_var"})
    -> (tensor<4x2x3x3xbf16>, tensor<4x2x3x3xf32>, tensor<2xf32> {tcc.state = "bn.running_mean"},
        tensor<2xf32> {tcc.state = "bn.running_var"}) {
  %c:2 = tcc.fusion_group "elementwise" -> (tensor<4x2x3x3xbf16>, tensor<4x2x3x3xf32>) {
    %c16 = tcc.cast %conv to bf16 : (tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xbf16>
    %x = tcc.cast %c16 to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
    tcc.yield %c16, %x : tensor<4x2x3x3xbf16>, tensor<4x2x3x3xf32>
  }
  %g:6 = tcc.fusion_group "norm_epilogue" -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xbf16>, tensor<4x2x3x3xbf16>) {
    %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %c#1 running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
        -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) loc(#loc_bn16)
    %y16 = tcc.cast %y to bf16 : (tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xbf16>
    %yup = tcc.cast %y16 to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
    %a = tcc.celu %yup {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    %a16 = tcc.cast %a to bf16 : (tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xbf16>
    tcc.yield %mean, %invstd, %nrm, %nrv, %y16, %a16 : tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xbf16>, tensor<4x2x3x3xbf16>
  }
  %xb = tcc.cast %c#0 to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
  %p:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) {
    %yb = tcc.cast %g#4 to f32 : (tensor<4x2x3x3xbf16>) -> tensor<4x2x3x3xf32>
    %d = tcc.celu_backward %dy, %yb {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %d, %xb saved %g#0, %g#1 {ghost_batch = 0 : i64}
        : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %g#5, %p#0, %g#2, %g#3 : tensor<4x2x3x3xbf16>, tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Not free: the normalised value is also read outside the prologue (here
// returned), so it stays in memory and the prologue reads it.
// CHECK: {{^}}// {{-----}}
// CHECK: recompute = {bytes_saved = 0 : i64, for_budget = [], free = [], kernels_added = 0 : i64
// CHECK-NOT: tcc.batch_norm_apply
// CHECK: return
func.func @train_step(%x: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %dy: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %rm: tensor<2xf32> {tcc.state = "bn.running_mean"},
                      %rv: tensor<2xf32> {tcc.state = "bn.running_var"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) {
  %g:6 = tcc.fusion_group "norm_epilogue" -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>) {
    %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %x running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
        -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
    %a = tcc.celu %y {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    tcc.yield %y, %mean, %invstd, %nrm, %nrv, %a : tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>
  }
  %p:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) {
    %d = tcc.celu_backward %dy, %g#0 {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %d, %x saved %g#1, %g#2 {ghost_batch = 0 : i64}
        : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %g#5, %p#0, %g#0 : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>
}

// -----

// Not free: the prologue belongs to the backward of another norm (of
// another input), which does not read this norm's input.
// CHECK: {{^}}// {{-----}}
// CHECK: free = []
// CHECK-NOT: tcc.batch_norm_apply
// CHECK: return
func.func @train_step(%x: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %x2: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %dy: tensor<4x2x3x3xf32> {tcc.role = "input"},
                      %rm: tensor<2xf32> {tcc.state = "bn.running_mean"},
                      %rv: tensor<2xf32> {tcc.state = "bn.running_var"})
    -> (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) {
  %g:6 = tcc.fusion_group "norm_epilogue" -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>) {
    %y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm %x running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
        -> (tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
    %a = tcc.celu %y {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    tcc.yield %y, %mean, %invstd, %nrm, %nrv, %a : tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>
  }
  %p:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) {
    %d = tcc.celu_backward %dy, %g#0 {alpha = 1.0 : f64} : tensor<4x2x3x3xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %d, %x2 saved %g#1, %g#2 {ghost_batch = 0 : i64}
        : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %g#5, %p#0 : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>
}

// -----

// Under a budget: %a (16 KiB) is read at once and again at the end; keeping
// it holds three tensors of scratch at the peak (a, b, c; d, e and f go in
// place of an operand they read last), recomputing it before the late add
// two (b goes in place of a, which is no longer read later). With the
// 16 KiB input that is 64 KiB against 48 KiB, and the budget (50000 bytes)
// is between the two: the CELU runs twice.
// CHECK: {{^}}// {{-----}}
// CHECK: recompute = {bytes_saved = 16384 : i64, for_budget = ["celu (celu)"], free = [], kernels_added = 1 : i64, peak_bytes_after = 49152 : i64, peak_bytes_before = 65536 : i64, values = 1 : i64}
// CHECK: %[[A:.*]] = tcc.celu %arg0
// CHECK: tcc.scale %[[A]]
// CHECK: tcc.mul
// CHECK-NEXT: %[[E:.*]] = tcc.scale
// CHECK-NEXT: %[[A2:.*]] = tcc.celu %arg0
// CHECK-NEXT: tcc.add %[[E]], %[[A2]]
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, memory_budget = 50000>} {
  func.func @train_step(%x: tensor<64x64xf32> {tcc.role = "input"}) -> tensor<64x64xf32> {
    %a = tcc.celu %x {alpha = 1.0 : f64} : tensor<64x64xf32> loc("celu")
    %b = tcc.scale %a {factor = 2.0 : f64} : tensor<64x64xf32>
    %c = tcc.scale %b {factor = 3.0 : f64} : tensor<64x64xf32>
    %d = tcc.mul %b, %c : tensor<64x64xf32>, tensor<64x64xf32>
    %e = tcc.scale %d {factor = 4.0 : f64} : tensor<64x64xf32>
    %f = tcc.add %e, %a : tensor<64x64xf32>, tensor<64x64xf32>
    return %f : tensor<64x64xf32>
  }
}

// -----

// The same step under a budget it meets already (65536 bytes): nothing is
// recomputed.
// CHECK: {{^}}// {{-----}}
// CHECK: recompute = {bytes_saved = 0 : i64, for_budget = [], free = [], kernels_added = 0 : i64
// CHECK-COUNT-1: tcc.celu
// CHECK-NOT: tcc.celu
// CHECK: return
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, memory_budget = 65536>} {
  func.func @train_step(%x: tensor<64x64xf32> {tcc.role = "input"}) -> tensor<64x64xf32> {
    %a = tcc.celu %x {alpha = 1.0 : f64} : tensor<64x64xf32>
    %b = tcc.scale %a {factor = 2.0 : f64} : tensor<64x64xf32>
    %c = tcc.scale %b {factor = 3.0 : f64} : tensor<64x64xf32>
    %d = tcc.mul %b, %c : tensor<64x64xf32>, tensor<64x64xf32>
    %e = tcc.scale %d {factor = 4.0 : f64} : tensor<64x64xf32>
    %f = tcc.add %e, %a : tensor<64x64xf32>, tensor<64x64xf32>
    return %f : tensor<64x64xf32>
  }
}

// -----

// Under a budget, 16-bit storage (the cpu target's widened form). %g#0, the
// bf16 value the late add reads through a copy, is held through the middle
// of the step, where the peak is (b, m, q and the two bf16 values); its
// group's f32 input %c#1 is dead by the late add. It is computed again
// there from %c#0, which the step keeps anyway, widened again (the same
// numbers as %c#1: both are casts of %c16), and the first group no longer
// yields it: 80 KiB -> 72 KiB, under the budget of 75000 bytes. %c#0 itself
// is not recomputed: that would keep %p (f32) alive instead.
// CHECK: {{^}}// {{-----}}
// CHECK: recompute = {bytes_saved = 8192 : i64, for_budget = ["act (elementwise)"], free = [], kernels_added = 2 : i64, peak_bytes_after = 73728 : i64, peak_bytes_before = 81920 : i64, values = 1 : i64}
// CHECK: %[[C:.*]]:2 = tcc.fusion_group "elementwise" -> (tensor<64x64xbf16>, tensor<64x64xf32>)
// CHECK: tcc.fusion_group "elementwise" -> (tensor<64x64xf32>) {
// CHECK-NEXT: tcc.celu %[[C]]#1
// CHECK: %[[W:.*]] = tcc.cast %[[C]]#0 to f32
// CHECK-NEXT: %[[G:.*]] = tcc.fusion_group "elementwise" -> (tensor<64x64xbf16>) {
// CHECK-NEXT: tcc.celu %[[W]]
// CHECK-NEXT: %[[H:.*]] = tcc.cast %{{.*}} to bf16
// CHECK-NEXT: tcc.yield %[[H]]
// CHECK: tcc.cast %[[G]] to f32
module attributes {tcc.train = #tcc.train<batch_size = 1, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, memory_budget = 75000>} {
  func.func @train_step(%x: tensor<64x64xf32> {tcc.role = "input"}) -> tensor<64x64xf32> {
    %p = tcc.scale %x {factor = 3.0 : f64} : tensor<64x64xf32>
    %c:2 = tcc.fusion_group "elementwise" -> (tensor<64x64xbf16>, tensor<64x64xf32>) {
      %c16 = tcc.cast %p to bf16 : (tensor<64x64xf32>) -> tensor<64x64xbf16>
      %cf = tcc.cast %c16 to f32 : (tensor<64x64xbf16>) -> tensor<64x64xf32>
      tcc.yield %c16, %cf : tensor<64x64xbf16>, tensor<64x64xf32>
    }
    %g:2 = tcc.fusion_group "elementwise" -> (tensor<64x64xbf16>, tensor<64x64xf32>) {
      %h = tcc.celu %c#1 {alpha = 1.0 : f64} : tensor<64x64xf32>
      %h16 = tcc.cast %h to bf16 : (tensor<64x64xf32>) -> tensor<64x64xbf16>
      %hf = tcc.cast %h16 to f32 : (tensor<64x64xbf16>) -> tensor<64x64xf32>
      tcc.yield %h16, %hf : tensor<64x64xbf16>, tensor<64x64xf32>
    } loc("act")
    %b = tcc.scale %g#1 {factor = 2.0 : f64} : tensor<64x64xf32>
    %m = tcc.scale %b {factor = 3.0 : f64} : tensor<64x64xf32>
    %q = tcc.scale %m {factor = 5.0 : f64} : tensor<64x64xf32>
    %d = tcc.mul %b, %m : tensor<64x64xf32>, tensor<64x64xf32>
    %e = tcc.mul %d, %q : tensor<64x64xf32>, tensor<64x64xf32>
    %u = tcc.cast %g#0 to f32 : (tensor<64x64xbf16>) -> tensor<64x64xf32>
    %f = tcc.add %e, %u : tensor<64x64xf32>, tensor<64x64xf32>
    %w = tcc.cast %c#0 to f32 : (tensor<64x64xbf16>) -> tensor<64x64xf32>
    %z = tcc.mul %f, %w : tensor<64x64xf32>, tensor<64x64xf32>
    return %z : tensor<64x64xf32>
  }
}
