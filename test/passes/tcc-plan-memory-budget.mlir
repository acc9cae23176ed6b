// RUN: tcc-opt %s -split-input-file -tcc-plan-memory -verify-diagnostics | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-recompute -tcc-plan-memory -verify-diagnostics | FileCheck %s

// train.memory_budget is checked once, by tcc-plan-memory on the plan it
// records: state 64 B (the counter), scratch 128 B (the two relus), batch
// 64 B (the input): 256 bytes.

// A budget the step meets says nothing.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>}
module attributes {tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, memory_budget = 256>} {
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %a = tcc.relu %x : tensor<16xf32>
  %b = tcc.relu %a : tensor<16xf32>
  %c = tcc.add %a, %b : tensor<16xf32>, tensor<16xf32>
  %next = tcc.increment %step : tensor<i64>
  return %c, %next : tensor<16xf32>, tensor<i64>
}
}

// -----

// One byte less: refused, with the sizes.
// expected-error @+1 {{the memory budget 0.0 MiB is below the smallest step tcc plans}}
module attributes {tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, memory_budget = 255>} {
func.func @train_step(%x: tensor<16xf32> {tcc.role = "input"}, %step: tensor<i64> {tcc.state = "step"})
    -> (tensor<16xf32> {tcc.role = "output"}, tensor<i64> {tcc.state = "step"}) {
  %a = tcc.relu %x : tensor<16xf32>
  %b = tcc.relu %a : tensor<16xf32>
  %c = tcc.add %a, %b : tensor<16xf32>, tensor<16xf32>
  %next = tcc.increment %step : tensor<i64>
  return %c, %next : tensor<16xf32>, tensor<i64>
}
}
