// RUN: tcc-opt %s -split-input-file -verify-diagnostics

// The tcc.fusion_group verifier: its kind says which ops it may hold.

func.func @unknown_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be "elementwise", "norm_epilogue", "norm_backward_prologue", "multi_tensor_update", "matmul_epilogue", "conv_epilogue", "conv_statistics" or "multi_tensor_cast", got "softmax"}}
  %0 = tcc.fusion_group "softmax" -> (tensor<4xf32>) {
    %a = tcc.relu %x : tensor<4xf32>
    tcc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A conv_epilogue's conv has a bias the library adds with the ReLU.
func.func @conv_epilogue_without_bias(%x: tensor<2x3x4x4xf32>, %w: tensor<5x3x1x1xf32>) -> tensor<2x5x4x4xf32> {
  // expected-error @+1 {{of kind conv_epilogue must hold a conv2d with a bias, then the relu of its result (under 16-bit storage: the cast that widens it to f32, the relu, the cast back), each result read by the next op only, and yield the last}}
  %0 = tcc.fusion_group "conv_epilogue" -> (tensor<2x5x4x4xf32>) {
    %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x1x1xf32>) -> tensor<2x5x4x4xf32>
    %a = tcc.relu %y : tensor<2x5x4x4xf32>
    tcc.yield %a : tensor<2x5x4x4xf32>
  }
  return %0 : tensor<2x5x4x4xf32>
}

// -----

// The sums never reach memory: a group that yields them is not an epilogue.
func.func @conv_epilogue_yields_sums(%x: tensor<2x3x4x4xf32>, %w: tensor<5x3x1x1xf32>, %b: tensor<5xf32>) -> tensor<2x5x4x4xf32> {
  // expected-error @+1 {{of kind conv_epilogue must hold}}
  %0:2 = tcc.fusion_group "conv_epilogue" -> (tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>) {
    %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x1x1xf32>, tensor<5xf32>) -> tensor<2x5x4x4xf32>
    %a = tcc.relu %y : tensor<2x5x4x4xf32>
    tcc.yield %y, %a : tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32>
  }
  return %0#1 : tensor<2x5x4x4xf32>
}

// -----

// Under 16-bit storage the ReLU's result goes back to the conv's type.
func.func @conv_epilogue_narrows_elsewhere(%x: tensor<2x3x4x4xbf16>, %w: tensor<5x3x1x1xbf16>, %b: tensor<5xbf16>) -> tensor<2x5x4x4xf16> {
  // expected-error @+1 {{of kind conv_epilogue must hold}}
  %0 = tcc.fusion_group "conv_epilogue" -> (tensor<2x5x4x4xf16>) {
    %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xbf16>, tensor<5x3x1x1xbf16>, tensor<5xbf16>) -> tensor<2x5x4x4xbf16>
    %f = tcc.cast %y to f32 : (tensor<2x5x4x4xbf16>) -> tensor<2x5x4x4xf32>
    %a = tcc.relu %f : tensor<2x5x4x4xf32>
    %n = tcc.cast %a to f16 : (tensor<2x5x4x4xf32>) -> tensor<2x5x4x4xf16>
    tcc.yield %n : tensor<2x5x4x4xf16>
  }
  return %0 : tensor<2x5x4x4xf16>
}

// -----

// A multi_tensor_cast converts each tensor independently, element i to
// element i: no cast of it reads another's result or changes the layout.
func.func @multi_tensor_cast_chained(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind multi_tensor_cast must hold two or more casts between f32 and a 16-bit type that keep their layout, none reading another's result}}
  %0 = tcc.fusion_group "multi_tensor_cast" -> (tensor<4xf32>) {
    %h = tcc.cast %x to bf16 : (tensor<4xf32>) -> tensor<4xbf16>
    %f = tcc.cast %h to f32 : (tensor<4xbf16>) -> tensor<4xf32>
    tcc.yield %f : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @multi_tensor_cast_relayout(%x: tensor<2x3x4x4xf32>, %y: tensor<4xf32>) -> tensor<2x3x4x4xbf16> {
  // expected-error @+1 {{of kind multi_tensor_cast must hold}}
  %0:2 = tcc.fusion_group "multi_tensor_cast" -> (tensor<2x3x4x4xbf16>, tensor<4xbf16>) {
    %a = tcc.cast %x to bf16 {tcc.channels_last} : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xbf16>
    %b = tcc.cast %y to bf16 : (tensor<4xf32>) -> tensor<4xbf16>
    tcc.yield %a, %b : tensor<2x3x4x4xbf16>, tensor<4xbf16>
  }
  return %0#0 : tensor<2x3x4x4xbf16>
}

// -----

func.func @not_elementwise(%x: tensor<2x3x4x4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{of kind elementwise holds a non-elementwise op}}
  %0 = tcc.fusion_group "elementwise" -> (tensor<2x3xf32>) {
    %a = tcc.relu %x : tensor<2x3x4x4xf32>
    %p = tcc.global_max_pool %a : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
    tcc.yield %p : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

func.func @epilogue_without_norm(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind norm_epilogue must hold one batch norm, its input read from outside the group (or widened from there), and elementwise ops}}
  %0 = tcc.fusion_group "norm_epilogue" -> (tensor<4xf32>) {
    %a = tcc.relu %x : tensor<4xf32>
    tcc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// The norm reads its input from memory: no op of the group computes it but
// the widening of a 16-bit value from outside.
func.func @epilogue_op_before_norm(%x: tensor<2x3xbf16>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{of kind norm_epilogue must hold one batch norm, its input read from outside the group (or widened from there), and elementwise ops}}
  %0 = tcc.fusion_group "norm_epilogue" -> (tensor<2x3xf32>) {
    %c = tcc.cast %x to f32 : (tensor<2x3xbf16>) -> tensor<2x3xf32>
    %r = tcc.relu %c : tensor<2x3xf32>
    %y, %m, %i, %nm, %nv = tcc.batch_norm %r weight %w bias %w running %w, %w {eps = 1.0e-5 : f64, ghost_batch = 0 : i64, momentum = 0.1 : f64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>)
    tcc.yield %y : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

func.func @prologue_without_norm(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind norm_backward_prologue must hold elementwise ops and batch_norm_apply, then a batch_norm_backward}}
  %0 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4xf32>) {
    %a = tcc.relu %x : tensor<4xf32>
    tcc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_types(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{yields 'tensor<4xf32>' but its results are 'tensor<8xf32>'}}
  %0 = tcc.fusion_group "elementwise" -> (tensor<8xf32>) {
    %a = tcc.relu %x : tensor<4xf32>
    tcc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<8xf32>
}

// -----

func.func @empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body holds no op}}
  %0 = tcc.fusion_group "elementwise" -> (tensor<4xf32>) {
    tcc.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @multi_tensor_not_update(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind multi_tensor_update must hold sgd, adamw, ema and lookahead updates only}}
  %0 = tcc.fusion_group "multi_tensor_update" -> (tensor<4xf32>) {
    %a = tcc.relu %x : tensor<4xf32>
    tcc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// After the backward, only the cast that alone reads its dx (narrowing it).
func.func @prologue_cast_of_another_result(%dy: tensor<4x2xf32>, %x: tensor<4x2xf32>, %m: tensor<1x2xf32>) -> tensor<2xbf16> {
  // expected-error @+1 {{then at most the cast that alone reads its grad_input}}
  %0 = tcc.fusion_group "norm_backward_prologue" -> (tensor<2xbf16>) {
    %a = tcc.relu %dy : tensor<4x2xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %a, %x saved %m, %m {ghost_batch = 0 : i64}
        : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
    %c = tcc.cast %dw to bf16 : (tensor<2xf32>) -> tensor<2xbf16>
    tcc.yield %c : tensor<2xbf16>
  }
  return %0 : tensor<2xbf16>
}
