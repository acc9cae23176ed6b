// RUN: tcc-translate --emit-cuda %s | FileCheck %s

// A whole-batch norm's backward as the synchronised norm's for one rank
// (tcc-cuda-dgrad-statistics' form) on fp16 dy, x and dx: the sums and dx
// kernels (runtime/cuda/device/SyncNorm.cuh) take the 16-bit tensors as
// F16 and widen as they load; the statistics and sums stay f32 and f64.

// CHECK-LABEL: // @sums16
// CHECK: // tcc.batch_norm_backward_sums
// CHECK-NEXT: cuda::batch_norm_backward_sums<float>(args.stream, args.scratch + 0, 512, BatchNormShape{{.*}}, reinterpret_cast<tcc::rt::half::F16 *>(a0), reinterpret_cast<tcc::rt::half::F16 *>(a1), a2, a3, [[S:r[0-9]+]], [[DW:r[0-9]+]], [[DB:r[0-9]+]]);
// CHECK: // tcc.batch_norm_backward_input
// CHECK-NEXT: cuda::batch_norm_backward_input<float>(args.stream, BatchNormShape{{.*}}, 1, reinterpret_cast<tcc::rt::half::F16 *>(a0), reinterpret_cast<tcc::rt::half::F16 *>(a1), a4, a2, a3, [[S]], reinterpret_cast<tcc::rt::half::F16 *>({{r[0-9]+}}));
func.func @sums16(%dy: tensor<2x8x4x4xf16>, %x: tensor<2x8x4x4xf16>, %mean: tensor<1x8xf32>, %inv: tensor<1x8xf32>, %g: tensor<8xf32>) -> (tensor<2x8x4x4xf16>, tensor<8xf32>, tensor<8xf32>) attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 1024>} {
  %s, %dw, %db = tcc.batch_norm_backward_sums %dy, %x saved %mean, %inv {tcc.workspace = #tcc.workspace<bytes = 512, offset = 0>} : (tensor<2x8x4x4xf16>, tensor<2x8x4x4xf16>, tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<2x8xf64>, tensor<8xf32>, tensor<8xf32>)
  %dx = tcc.batch_norm_backward_input %dy, %x weight %g saved %mean, %inv sums %s {ranks = 1 : i64} : (tensor<2x8x4x4xf16>, tensor<2x8x4x4xf16>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<2x8xf64>) -> tensor<2x8x4x4xf16>
  return %dx, %dw, %db : tensor<2x8x4x4xf16>, tensor<8xf32>, tensor<8xf32>
}
