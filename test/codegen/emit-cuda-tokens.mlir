// RUN: tcc-translate --emit-cuda %s | FileCheck %s

// The cuda target's token ops (runtime/cuda/device/Embedding.cuh,
// TokenLoss.cuh): the stream, the op's workspace where it has one (the
// embedding backward's positions sorted by id, the token loss backward's
// scale; unplanned here: none), the sizes ([N, T, K] logits as N * T rows),
// the attributes as signed integers (ignore_index -100, padding_idx -1),
// then the tensors.

// CHECK-LABEL: // @tokens
func.func @tokens(%ids: tensor<2x4xf32>, %w: tensor<10x8xf32>, %dy: tensor<2x4x8xf32>,
                  %logits: tensor<2x4x10xf32>, %labels: tensor<2x4xi64>, %g: tensor<f32>) {
  // CHECK: // tcc.embedding
  // CHECK-NEXT: cuda::embedding_forward<float, float>(args.stream, 8, 10, 8, a0, a1, r0);
  %e = tcc.embedding %ids, %w {padding_idx = 3 : i64}
       : (tensor<2x4xf32>, tensor<10x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: // tcc.embedding_backward
  // CHECK-NEXT: cuda::embedding_backward<float, float>(args.stream, nullptr, 0, 8, 10, 8, -1, a2, a0, r1);
  %dw = tcc.embedding_backward %dy, %ids {num_embeddings = 10 : i64, padding_idx = -1 : i64}
        : (tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<10x8xf32>
  // CHECK: // tcc.token_cross_entropy
  // CHECK-NEXT: cuda::token_cross_entropy_forward(args.stream, 8, 10, a3, a4, -100, 0.10000000000000001, Reduction::Sum, r2);
  %l = tcc.token_cross_entropy %logits, %labels {ignore_index = -100 : i64, label_smoothing = 0.1 : f64, reduction = "sum"}
       : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
  // CHECK: // tcc.token_cross_entropy_backward
  // CHECK-NEXT: cuda::token_cross_entropy_backward(args.stream, nullptr, 0, 8, 10, a3, a4, -100, 0, Reduction::Mean, a5, r3);
  %dl = tcc.token_cross_entropy_backward %g, %logits, %labels {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<f32>, tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<2x4x10xf32>
  // CHECK: // tcc.count_correct_tokens
  // CHECK-NEXT: cuda::count_correct_tokens(args.stream, 8, 10, a3, a4, 7, r4);
  %n = tcc.count_correct_tokens %logits, %labels {ignore_index = 7 : i64}
       : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<i64>
  return
}
