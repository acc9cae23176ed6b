// RUN: tcc-opt %s -split-input-file -tcc-widen-16bit | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-widen-16bit='keep=library,exact' | FileCheck %s --check-prefix=KEEP
// RUN: tcc-opt %s -split-input-file -tcc-widen-16bit='keep=library' | FileCheck %s --check-prefix=LIBRARY
// RUN: not tcc-opt %s -split-input-file -tcc-widen-16bit='keep=tcc.conv2d' 2>&1 | FileCheck %s --check-prefix=BAD-KIND
// BAD-KIND: tcc-widen-16bit: keep=tcc.conv2d is not a kind of 16-bit op; expected update, library or exact

// A bf16 convolution and activation run on f32 copies: the 16-bit operands
// cast up right before the op, its result computed in f32 and cast down
// right after it, so the stored values stay bf16. The casts themselves and
// the f32 ops are left as they are.
// CHECK: "widen-16bit" = {casts = 5 : i64, ops = 2 : i64}
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[W:.*]] = tcc.cast %arg1 to bf16
// CHECK-NEXT: %[[X32:.*]] = tcc.cast %arg0 to f32 : (tensor<2x3x4x4xbf16>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[W32:.*]] = tcc.cast %[[W]] to f32 : (tensor<3x3x1x1xbf16>) -> tensor<3x3x1x1xf32>
// CHECK-NEXT: %[[C:.*]] = tcc.conv2d %[[X32]], %[[W32]] {{.*}} -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[C16:.*]] = tcc.cast %[[C]] to bf16
// CHECK-NEXT: %[[A32:.*]] = tcc.cast %[[C16]] to f32
// CHECK-NEXT: %[[A:.*]] = tcc.celu %[[A32]] {{.*}} : tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[A16:.*]] = tcc.cast %[[A]] to bf16
// CHECK-NEXT: %[[OUT:.*]] = tcc.cast %[[A16]] to f32
// CHECK-NEXT: %[[S:.*]] = tcc.scale %[[OUT]] {{.*}} : tensor<2x3x4x4xf32>
// CHECK-NEXT: return %[[S]]
func.func @train_step(%x: tensor<2x3x4x4xbf16>, %w: tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %wl = tcc.cast %w to bf16 : (tensor<3x3x1x1xf32>) -> tensor<3x3x1x1xbf16>
  %c = tcc.conv2d %x, %wl {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<2x3x4x4xbf16>, tensor<3x3x1x1xbf16>) -> tensor<2x3x4x4xbf16>
  %a = tcc.celu %c {alpha = 1.0 : f64} : tensor<2x3x4x4xbf16>
  %o = tcc.cast %a to f32 : (tensor<2x3x4x4xbf16>) -> tensor<2x3x4x4xf32>
  %s = tcc.scale %o {factor = 2.0 : f64} : tensor<2x3x4x4xf32>
  return %s : tensor<2x3x4x4xf32>
}

// -----

// An f32 step is left as it is.
// CHECK: "widen-16bit" = {casts = 0 : i64, ops = 0 : i64}
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: tcc.cast
// CHECK: return
func.func @train_step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %l = tcc.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %l : tensor<4x8xf32>
}

// -----

// With the cuda target's kinds (library, exact), the bf16 convolution
// (Tcc_SixteenBitLibrary) and the flatten (Tcc_SixteenBitExact) stay on
// 16-bit tensors; the activation, which declares no kind, does not. With
// library alone the flatten runs on an f32 copy too.
// LIBRARY: "widen-16bit" = {casts = 0 : i64, ops = 0 : i64}
// LIBRARY: "widen-16bit" = {casts = 4 : i64, ops = 2 : i64}
// LIBRARY-NEXT: func.func @keep_step(
// LIBRARY: tcc.conv2d %arg0, %{{.*}} : (tensor<2x3x4x4xbf16>, tensor<3x3x1x1xbf16>) -> tensor<2x3x4x4xbf16>
// LIBRARY: tcc.celu
// LIBRARY: %[[F32:.*]] = tcc.cast %{{.*}} to f32 : (tensor<2x3x4x4xbf16>)
// LIBRARY-NEXT: %[[F:.*]] = tcc.flatten %[[F32]] {{.*}}-> tensor<2x48xf32>
// LIBRARY-NEXT: tcc.cast %[[F]] to bf16
// KEEP: "widen-16bit" = {casts = 0 : i64, ops = 0 : i64}
// KEEP: "widen-16bit" = {casts = 2 : i64, ops = 1 : i64}
// KEEP-NEXT: func.func @keep_step(
// KEEP: %[[C:.*]] = tcc.conv2d %arg0, %{{.*}} : (tensor<2x3x4x4xbf16>, tensor<3x3x1x1xbf16>) -> tensor<2x3x4x4xbf16>
// KEEP-NEXT: %[[C32:.*]] = tcc.cast %[[C]] to f32
// KEEP-NEXT: %[[A:.*]] = tcc.celu %[[C32]] {{.*}} : tensor<2x3x4x4xf32>
// KEEP-NEXT: %[[A16:.*]] = tcc.cast %[[A]] to bf16
// KEEP-NEXT: tcc.flatten %[[A16]] {{.*}}-> tensor<2x48xbf16>
func.func @keep_step(%x: tensor<2x3x4x4xbf16>, %w: tensor<3x3x1x1xf32>) -> tensor<2x48xbf16> {
  %wl = tcc.cast %w to bf16 : (tensor<3x3x1x1xf32>) -> tensor<3x3x1x1xbf16>
  %c = tcc.conv2d %x, %wl {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<2x3x4x4xbf16>, tensor<3x3x1x1xbf16>) -> tensor<2x3x4x4xbf16>
  %a = tcc.celu %c {alpha = 1.0 : f64} : tensor<2x3x4x4xbf16>
  %f = tcc.flatten %a : (tensor<2x3x4x4xbf16>) -> tensor<2x48xbf16>
  return %f : tensor<2x48xbf16>
}

// -----

// The sharded state's collectives: a chunk and a gather copy stored bits,
// so they keep their 16-bit tensors whatever the target keeps; a
// reduce-scatter sums, as an all-reduce: on f32 copies (the cpu target)
// unless the target keeps "library" (NCCL sums 16 bits in f32).
// CHECK: "widen-16bit" = {casts = 2 : i64, ops = 1 : i64}
// CHECK-LABEL: func.func @shard_step(
// CHECK: %[[S:.*]] = tcc.shard %arg0 {{.*}} : tensor<10x3xf16> -> tensor<8xf16>
// CHECK-NEXT: %[[A:.*]] = tcc.all_gather %[[S]] {{.*}} : tensor<8xf16> -> tensor<10x3xf16>
// CHECK-NEXT: %[[G:.*]] = tcc.cast %arg1 to f32 : (tensor<10x3xf16>) -> tensor<10x3xf32>
// CHECK-NEXT: %[[R:.*]] = tcc.reduce_scatter %[[G]] {{.*}} : tensor<10x3xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[R16:.*]] = tcc.cast %[[R]] to f16 : (tensor<8xf32>) -> tensor<8xf16>
// CHECK-NEXT: return %[[S]], %[[A]], %[[R16]]
// LIBRARY: "widen-16bit" = {casts = 0 : i64, ops = 0 : i64}
// LIBRARY-NEXT: func.func @shard_step(
// LIBRARY: tcc.reduce_scatter %arg1 {{.*}} : tensor<10x3xf16> -> tensor<8xf16>
func.func @shard_step(%w: tensor<10x3xf16>, %g: tensor<10x3xf16>)
    -> (tensor<8xf16>, tensor<10x3xf16>, tensor<8xf16>) {
  %s = tcc.shard %w {ranks = 4 : i64} : tensor<10x3xf16> -> tensor<8xf16>
  %a = tcc.all_gather %s {ranks = 4 : i64} : tensor<8xf16> -> tensor<10x3xf16>
  %r = tcc.reduce_scatter %g {ranks = 4 : i64} : tensor<10x3xf16> -> tensor<8xf16>
  return %s, %a, %r : tensor<8xf16>, tensor<10x3xf16>, tensor<8xf16>
}
