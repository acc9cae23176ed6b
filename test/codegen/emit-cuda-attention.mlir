// RUN: tcc-translate --emit-cuda %s | FileCheck %s

// The cuda target's attention calls (runtime/cuda/device/Attention.cuh):
// the matmul runner (its head products are cuBLASLt batched matmuls), the
// stream, the op's workspace (its f32 scores and cuBLASLt's; unplanned
// here: none),
// the shape as AttentionShape{n, heads, tq, tk, d, dv, causal, scale}, then
// the dropout as the cpu target's (p, the seed or a typed null pointer, the
// stream, the control block for the rank), then the tensors.

// CHECK-LABEL: // @attention
func.func @attention(%q: tensor<8x5x12xf32>, %k: tensor<8x7x12xf32>, %v: tensor<8x7x6xf32>,
                     %do: tensor<8x5x6xf32>, %seed: tensor<i64>) {
  // CHECK: // tcc.scaled_dot_product_attention
  // CHECK-NEXT: cuda::attention_forward<float>(*args.matmul, args.stream, nullptr, 0, AttentionShape{8, 3, 5, 7, 4, 2, true, 0.5}, 0, static_cast<const int64_t *>(nullptr), 0, args.control, a0, a1, a2, r0, r1);
  %o, %lse = tcc.scaled_dot_product_attention %q, %k, %v
      {causal = true, dropout = 0.0 : f64, heads = 3 : i64, scale = 0.5 : f64, stream = 0 : i64}
      : (tensor<8x5x12xf32>, tensor<8x7x12xf32>, tensor<8x7x6xf32>) -> (tensor<8x5x6xf32>, tensor<8x3x5xf32>)
  // CHECK: // tcc.scaled_dot_product_attention_backward
  // CHECK-NEXT: cuda::attention_backward<float>(*args.matmul, args.stream, nullptr, 0, AttentionShape{8, 3, 5, 7, 4, 2, true, 0.5}, 0, static_cast<const int64_t *>(nullptr), 0, args.control, a3, a0, a1, a2, r0, r1, r2, r3, r4);
  %dq, %dk, %dv = tcc.scaled_dot_product_attention_backward %do, %q, %k, %v saved %o, %lse
      {causal = true, dropout = 0.0 : f64, heads = 3 : i64, scale = 0.5 : f64, stream = 0 : i64}
      : (tensor<8x5x6xf32>, tensor<8x5x12xf32>, tensor<8x7x12xf32>, tensor<8x7x6xf32>,
         tensor<8x5x6xf32>, tensor<8x3x5xf32>)
      -> (tensor<8x5x12xf32>, tensor<8x7x12xf32>, tensor<8x7x6xf32>)
  // With dropout: p, the seed's pointer and the stream.
  // CHECK: // tcc.scaled_dot_product_attention
  // CHECK-NEXT: cuda::attention_forward<float>(*args.matmul, args.stream, nullptr, 0, AttentionShape{8, 3, 5, 7, 4, 2, false, 0.25}, 0.10000000000000001, a4, 3, args.control, a0, a1, a2, r5, r6);
  %o2, %lse2 = tcc.scaled_dot_product_attention %q, %k, %v seed %seed
      {causal = false, dropout = 0.1 : f64, heads = 3 : i64, scale = 0.25 : f64, stream = 3 : i64}
      : (tensor<8x5x12xf32>, tensor<8x7x12xf32>, tensor<8x7x6xf32>, tensor<i64>) -> (tensor<8x5x6xf32>, tensor<8x3x5xf32>)
  return
}

// tcc.matmul of two activations: one cuBLASLt strided batched matmul
// (Matmul.cuh's batched_matmul: type, batch, M, N, K, the transposes, lhs,
// rhs, the result, the workspace), batch the product of the leading dims.
// CHECK-LABEL: // @matmul
func.func @matmul(%a: tensor<2x3x5x4xf32>, %b: tensor<2x3x6x4xf32>, %c: tensor<6x4x5xf32>) {
  // CHECK: args.matmul->batched_matmul(args.stream, cuda::Matmul::Type::f32, 6, 5, 6, 4, false, true, a0, a1, r0, nullptr, 0);
  %s = tcc.matmul %a, %b {transpose_a = false, transpose_b = true}
      : (tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>) -> tensor<2x3x5x6xf32>
  // CHECK: args.matmul->batched_matmul(args.stream, cuda::Matmul::Type::f32, 6, 5, 5, 4, true, false, a2, a2, r1, nullptr, 0);
  %t = tcc.matmul %c, %c {transpose_a = true, transpose_b = false}
      : (tensor<6x4x5xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  return
}
