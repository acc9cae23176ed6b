// The optimizer is a typed part of #tcc.train: a recipe with an optimizer
// type tcc does not build, or without an optimizer, is refused when the IR
// is read (tcc-build-train-step used to crash on both).
// RUN: not tcc-opt %s -split-input-file -tcc-build-train-step 2>&1 | FileCheck %s

// CHECK: error: expected ::mlir::tcc::OptimizerType to be one of: sgd, adam, adamw, lamb
module attributes {tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     optimizer = <type = rmsprop, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
                       beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
}

// -----

// CHECK: error: struct is missing required parameter: optimizer
module attributes {tcc.train = #tcc.train<batch_size = 4, epochs = 1.0, seed = 0, drop_last = true,
                     schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
                     precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false>} {
}
