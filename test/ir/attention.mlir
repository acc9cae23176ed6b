// Round trip of the attention ops: parse, verify, print, parse the printout again.
// RUN: tcc-opt %s | tcc-opt | FileCheck %s
// RUN: tcc-opt %s -mlir-print-op-generic | tcc-opt | FileCheck %s

// CHECK-LABEL: func.func @self_attention
func.func @self_attention(%q: tensor<8x5x8xf32>, %k: tensor<8x5x8xf32>, %v: tensor<8x5x8xf32>,
                          %do: tensor<8x5x8xf32>)
    -> (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>) {
  // CHECK: %[[O:.*]], %[[LSE:.*]] = tcc.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, dropout = 0.000000e+00 : f64, heads = 2 : i64, scale = 5.000000e-01 : f64, stream = 0 : i64} : (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>) -> (tensor<8x5x8xf32>, tensor<8x2x5xf32>)
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v
      {causal = true, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64}
      : (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>) -> (tensor<8x5x8xf32>, tensor<8x2x5xf32>)
  // CHECK: tcc.scaled_dot_product_attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} saved %[[O]], %[[LSE]] {causal = true
  %dq, %dk, %dv = tcc.scaled_dot_product_attention_backward %do, %q, %k, %v saved %o, %lse
      {causal = true, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64}
      : (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>,
         tensor<8x5x8xf32>, tensor<8x2x5xf32>)
      -> (tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>)
  return %dq, %dk, %dv : tensor<8x5x8xf32>, tensor<8x5x8xf32>, tensor<8x5x8xf32>
}

// Cross-attention (3 queries, 7 keys) with a value head width of its own and
// dropout, which reads the seed.
// CHECK-LABEL: func.func @cross_attention_dropout
func.func @cross_attention_dropout(%q: tensor<2x3x12xf32>, %k: tensor<2x7x12xf32>,
                                   %v: tensor<2x7x6xf32>, %seed: tensor<i64>)
    -> tensor<2x3x6xf32> {
  // CHECK: tcc.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} seed %{{.*}} {{.*}} : (tensor<2x3x12xf32>, tensor<2x7x12xf32>, tensor<2x7x6xf32>, tensor<i64>) -> (tensor<2x3x6xf32>, tensor<2x3x3xf32>)
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v seed %seed
      {causal = false, dropout = 0.1 : f64, heads = 3 : i64, scale = 0.5 : f64, stream = 4 : i64}
      : (tensor<2x3x12xf32>, tensor<2x7x12xf32>, tensor<2x7x6xf32>, tensor<i64>)
      -> (tensor<2x3x6xf32>, tensor<2x3x3xf32>)
  return %o : tensor<2x3x6xf32>
}
