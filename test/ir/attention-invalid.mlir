// Attention ops the verifier refuses, each with the shape rule's message.
// RUN: tcc-opt %s -split-input-file -verify-diagnostics

func.func @heads_not_dividing(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error @+2 {{heads 3 must be positive and divide the width 8 of query and key and the width 8 of value}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v {causal = false, dropout = 0.0 : f64, heads = 3 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x3x5xf32>)
  return
}

// -----

func.func @width_mismatch(%q: tensor<2x5x8xf32>, %k: tensor<2x5x6xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error @+2 {{query [2, 5, 8] and key [2, 5, 6] need the same width (heads * head_dim)}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x6xf32>, tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @token_mismatch(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x4x8xf32>) {
  // expected-error @+2 {{key [2, 5, 8] and value [2, 4, 8] need the same number of tokens}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @batch_mismatch(%q: tensor<2x5x8xf32>, %k: tensor<3x5x8xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error @+2 {{query [2, 5, 8], key [3, 5, 8] and value [2, 5, 8] need one batch size}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<3x5x8xf32>, tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @rank(%q: tensor<2x40xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error @+2 {{query must be [N, T, heads * head_dim], got [2, 40]}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x40xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @dropout_without_seed(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error @+2 {{dropout > 0 needs a seed operand}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v {causal = false, dropout = 0.1 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @seed_without_dropout(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>, %seed: tensor<i64>) {
  // expected-error @+2 {{a seed operand needs dropout > 0}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v seed %seed {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<i64>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @dropout_one(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>, %seed: tensor<i64>) {
  // expected-error @+2 {{dropout must be in [0, 1), got 1}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention' op failed to infer returned types}}
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v seed %seed {causal = false, dropout = 1.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<i64>) -> (tensor<2x5x8xf32>, tensor<2x2x5xf32>)
  return
}

// -----

// The backward op checks the forward's logsumexp.
func.func @backward_lse_shape(%q: tensor<2x5x8xf32>, %lse: tensor<2x5xf32>) {
  // expected-error @+2 {{logsumexp must be [2, 2, 5] of f32, got 'tensor<2x5xf32>'}}
  // expected-error @+1 {{'tcc.scaled_dot_product_attention_backward' op failed to infer returned types}}
  %dq, %dk, %dv = tcc.scaled_dot_product_attention_backward %q, %q, %q, %q saved %q, %lse {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>)
  return
}
