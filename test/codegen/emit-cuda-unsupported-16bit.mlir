// RUN: not tcc-translate --emit-cuda %s -split-input-file 2>&1 | FileCheck %s

// 16-bit tensors reach only convolutions, linear layers, max pools, views,
// channel paddings, slices, bias gradients' sums (reduce_sum), casts from or
// to f32 and the optimizer updates on the cuda target
// (tcc-widen-16bit puts every other op on f32 copies): any other op on them
// or a cast between two 16-bit types is an error rather than a kernel on
// the stored bits.
// CHECK: error: {{.*}}the cuda target cannot run tcc.relu on bf16 tensors (16-bit tensors reach only its convolutions, linear layers, max pools, views, channel paddings, slices, bias gradients' sums, casts, optimizer updates and collectives: tcc-widen-16bit puts the other ops on f32 copies)
func.func @relu(%x: tensor<8xf32>) {
  %down = tcc.cast %x to bf16 : (tensor<8xf32>) -> tensor<8xbf16>
  %r = tcc.relu %down : tensor<8xbf16>
  return
}

// -----

// CHECK: error: {{.*}}the cuda target cannot run tcc.cast from bf16 to f16
func.func @cast(%x: tensor<8xbf16>) {
  %h = tcc.cast %x to f16 : (tensor<8xbf16>) -> tensor<8xf16>
  return
}

// -----

// An average pool sums and divides: it runs on f32 copies, never on bf16.
// CHECK: error: {{.*}}the cuda target cannot run tcc.avg_pool2d on bf16 tensors
func.func @avg_pool(%x: tensor<2x3x4x4xbf16>) {
  %p = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x4x4xbf16>) -> tensor<2x3x2x2xbf16>
  return
}

// -----

// Attention runs on f32 copies of 16-bit tensors (its kernels' scores are
// f32): on bf16 ones it is refused.
// CHECK: error: {{.*}}the cuda target cannot run tcc.scaled_dot_product_attention on bf16 tensors
func.func @attention(%q: tensor<2x4x8xbf16>) {
  %o, %lse = tcc.scaled_dot_product_attention %q, %q, %q
      {causal = false, dropout = 0.0 : f64, heads = 2 : i64, scale = 0.5 : f64, stream = 0 : i64}
      : (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x2x4xf32>)
  return
}

// -----

// An embedding table runs in f32, as on the cpu target (under bf16-mixed
// its f32 parameter): a bf16 one is refused.
// CHECK: error: {{.*}}the cuda target cannot run tcc.embedding on bf16 tensors
func.func @embedding(%ids: tensor<2x4xf32>, %w: tensor<10x8xbf16>) {
  %e = tcc.embedding %ids, %w {padding_idx = -1 : i64}
       : (tensor<2x4xf32>, tensor<10x8xbf16>) -> tensor<2x4x8xbf16>
  return
}
