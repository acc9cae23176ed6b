// RUN: tcc-translate --emit-cpu %s | FileCheck %s

// The cpu target's token ops (runtime/kernels/Embedding.h, TokenLoss.h): the
// sizes ([N, T, K] logits as N * T rows), the attributes as signed integers
// (ignore_index -100, padding_idx -1: printed unsigned they were literals
// too large for int64_t, which the C++ compiler warned of), then the tensors.

// CHECK-LABEL: // @tokens
func.func @tokens(%ids: tensor<2x4xf32>, %dy: tensor<2x4x8xf32>,
                  %logits: tensor<2x4x10xf32>, %labels: tensor<2x4xi64>, %g: tensor<f32>) {
  // CHECK: // tcc.embedding_backward
  // CHECK-NEXT: embedding_backward<float, float>(8, 10, 8, -1, a1, a0, r0);
  %dw = tcc.embedding_backward %dy, %ids {num_embeddings = 10 : i64, padding_idx = -1 : i64}
        : (tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<10x8xf32>
  // CHECK: // tcc.token_cross_entropy
  // CHECK-NEXT: token_cross_entropy_forward<float>(8, 10, a2, a3, -100, 0.10000000000000001, Reduction::Sum, r1);
  %l = tcc.token_cross_entropy %logits, %labels {ignore_index = -100 : i64, label_smoothing = 0.1 : f64, reduction = "sum"}
       : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
  // CHECK: // tcc.token_cross_entropy_backward
  // CHECK-NEXT: cpu::token_cross_entropy_backward<float>(8, 10, a2, a3, -100, 0, Reduction::Mean, a4, r2);
  %dl = tcc.token_cross_entropy_backward %g, %logits, %labels {ignore_index = -100 : i64, label_smoothing = 0.0 : f64, reduction = "mean"}
        : (tensor<f32>, tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<2x4x10xf32>
  // CHECK: // tcc.count_correct_tokens
  // CHECK-NEXT: cpu::count_correct_tokens<float>(8, 10, a2, a3, -100, r3);
  %n = tcc.count_correct_tokens %logits, %labels {ignore_index = -100 : i64}
       : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<i64>
  return
}
