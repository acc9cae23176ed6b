// RUN: tcc-translate --emit-cuda %s | FileCheck %s

// A conv_statistics group (codegen/cuda/ops/ContractionOps.cpp): where the
// baked table has the convolution with its statistics (" +genstats"), the
// weight is transposed to KRSC at the start of the group's workspace, one
// cuDNN graph writes y and the f32 sums after it, the engine's bytes last,
// and one thread per channel turns the sums into the norm's statistics.
// Where the table has the convolution only, it runs plain and the two sums
// are their own kernels, with the group's workspace. The norm that reads
// them normalises from them, widening its 16-bit input as it loads it.

// CHECK: {"fwd f16 nhwc n2 c8 h4 w4 k16 r3 s3 p4 q4 pad1,1 stride1,1 dil1,1 g1 +genstats", "eng9", 512, "'conv'"},
// CHECK-NEXT: {"fwd f16 nhwc n2 c8 h4 w4 k8 r3 s3 p4 q4 pad1,1 stride1,1 dil1,1 g1", "eng7", 0, "'plain'"},
module attributes {tcc.cuda_target = {allow_fallback = false, cudnn_version = 91900 : i64, gpu = "h100", sm = 90 : i64,
  convs = [
    {problem = "fwd f16 nhwc n2 c8 h4 w4 k16 r3 s3 p4 q4 pad1,1 stride1,1 dil1,1 g1 +genstats", plan = "eng9", workspace_bytes = 512 : i64, nodes = ["conv"]},
    {problem = "fwd f16 nhwc n2 c8 h4 w4 k8 r3 s3 p4 q4 pad1,1 stride1,1 dil1,1 g1", plan = "eng7", workspace_bytes = 0 : i64, nodes = ["plain"]}]}} {

// 16x8x3x3 2-byte weights: 2304 bytes (a multiple of 256); the sums' 128
// bytes take 256; the engine's 512 from 2560 on.
// CHECK-LABEL: // @fused
// CHECK: // tcc.fusion_group
// CHECK-NEXT: cuda::weight_to_krsc(args.stream, 16, 8, 9, a1, reinterpret_cast<uint16_t *>(args.scratch + 1024));
// CHECK-NEXT: args.convs->runWithStatistics(0, a0, reinterpret_cast<uint16_t *>(args.scratch + 1024), [[Y:r[0-9]+]], reinterpret_cast<float *>(args.scratch + 1024 + 2304), reinterpret_cast<float *>(args.scratch + 1024 + 2304) + 16, args.scratch + 1024 + 2560, 512); // forward + statistics
// CHECK-NEXT: cuda::statistics_from_sums(args.stream, {{.*}}, reinterpret_cast<float *>(args.scratch + 1024 + 2304), reinterpret_cast<float *>(args.scratch + 1024 + 2304) + 16, [[S:r[0-9]+]], [[Q:r[0-9]+]]);
// CHECK: cuda::batch_norm_forward_synced<float>(args.stream, {{.*}}, 1, reinterpret_cast<const tcc::rt::half::F16 *>([[Y]]), {{.*}}, [[S]], [[Q]], [=] __device__
func.func @fused(%x: tensor<2x8x4x4xf16>, %w: tensor<16x8x3x3xf16>, %m: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<2x16x4x4xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 8192>} {
  %g:3 = tcc.fusion_group "conv_statistics" {tcc.workspace = #tcc.workspace<bytes = 3072, offset = 1024>} -> (tensor<2x16x4x4xf16>, tensor<16xf64>, tensor<16xf64>) {
    %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<2x8x4x4xf16>, tensor<16x8x3x3xf16>) -> tensor<2x16x4x4xf16> loc("conv")
    %s = tcc.batch_norm_sums %y {ranks = 1 : i64} : (tensor<2x16x4x4xf16>) -> tensor<16xf64>
    %q = tcc.batch_norm_sums %y centered %s {ranks = 1 : i64} : (tensor<2x16x4x4xf16>, tensor<16xf64>) -> tensor<16xf64>
    tcc.yield %y, %s, %q : tensor<2x16x4x4xf16>, tensor<16xf64>, tensor<16xf64>
  }
  %n:5 = tcc.fusion_group "norm_epilogue" -> (tensor<2x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) {
    %f = tcc.cast %g#0 to f32 {tcc.channels_last} : (tensor<2x16x4x4xf16>) -> tensor<2x16x4x4xf32>
    %o, %mean, %invstd, %rm, %rv = tcc.batch_norm %f running %m, %v statistics %g#1, %g#2 {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, tcc.channels_last} : (tensor<2x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf64>, tensor<16xf64>) -> (tensor<2x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
    tcc.yield %o, %mean, %invstd, %rm, %rv : tensor<2x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>
  }
  return %n#0 : tensor<2x16x4x4xf32>
}

// CHECK-LABEL: // @fallback
// CHECK: // tcc.fusion_group
// CHECK-NEXT: args.convs->run(1, a0, a1, [[Y:r[0-9]+]], args.scratch + 256, 64); // forward
// CHECK-NEXT: cuda::batch_norm_sums(args.stream, args.scratch + 256, 64, {{.*}}, 1, reinterpret_cast<tcc::rt::half::F16 *>([[Y]]), nullptr, [[S:r[0-9]+]]);
// CHECK-NEXT: cuda::batch_norm_sums(args.stream, args.scratch + 256, 64, {{.*}}, 1, reinterpret_cast<tcc::rt::half::F16 *>([[Y]]), [[S]], {{r[0-9]+}});
// CHECK-NOT: runWithStatistics
func.func @fallback(%x: tensor<2x8x4x4xf16>, %w: tensor<8x8x3x3xf16>) -> (tensor<2x8x4x4xf16>, tensor<8xf64>, tensor<8xf64>) attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 1024>} {
  %g:3 = tcc.fusion_group "conv_statistics" {tcc.workspace = #tcc.workspace<bytes = 64, offset = 256>} -> (tensor<2x8x4x4xf16>, tensor<8xf64>, tensor<8xf64>) {
    %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, tcc.channels_last} : (tensor<2x8x4x4xf16>, tensor<8x8x3x3xf16>) -> tensor<2x8x4x4xf16> loc("plain")
    %s = tcc.batch_norm_sums %y {ranks = 1 : i64} : (tensor<2x8x4x4xf16>) -> tensor<8xf64>
    %q = tcc.batch_norm_sums %y centered %s {ranks = 1 : i64} : (tensor<2x8x4x4xf16>, tensor<8xf64>) -> tensor<8xf64>
    tcc.yield %y, %s, %q : tensor<2x8x4x4xf16>, tensor<8xf64>, tensor<8xf64>
  }
  return %g#0, %g#1, %g#2 : tensor<2x8x4x4xf16>, tensor<8xf64>, tensor<8xf64>
}

}
