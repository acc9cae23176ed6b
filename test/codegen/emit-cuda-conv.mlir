// RUN: tcc-translate --emit-cuda %s | FileCheck %s

// Convolutions (codegen/cuda/ops/ContractionOps.cpp): each op runs the row of the baked
// cuDNN table (tcc.cuda_target, set by tcc compile) whose problem it poses,
// with the problem's x, weight and y whatever the direction. A forward
// conv's bias (and its conv_epilogue group's ReLU) runs in cuDNN's epilogue
// where the table has the problem with it ("+bias", "+bias+relu"), else in
// kernels after the conv. The table is printed for the trainer,
// with the matmul algorithms a tuning file measured (runtime/cuda/BakedTarget.h).

// CHECK: const tcc::cuda::BakedConv kConvs[] = {
// CHECK-NEXT: {"fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", "eng1_k2=3", 64, "'conv'"},
// CHECK-NEXT: {"bwd-data f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", "eng2", 0, "'conv'"},
// CHECK-NEXT: {"bwd-filter f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", "eng3_k5=1", 0, "'conv'"},
// CHECK-NEXT: {"fwd bf16 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", "eng4", 0, "'conv16'"},
// CHECK-NEXT: {"fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p8 q8 pad1,1 stride1,1 dil1,1 g1 +bias", "eng5", 0, "'fused'"},
// CHECK-NEXT: {"fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p8 q8 pad1,1 stride1,1 dil1,1 g1 +bias+relu", "eng6", 0, "'relu'"},
// CHECK-NEXT: };
// CHECK-NEXT: const tcc::cuda::BakedMatmul kMatmuls[] = {
// CHECK-NEXT: {"gemm f32 tn m4 n2 k3 lda3 ldb3 ldc4 epilogue=bias", "algo21_tile18_stages8_splitk1_reduction0_swizzle0_custom0_inner0_cluster0", 1024, "'fc'"},
// CHECK-NEXT: };
// CHECK: const tcc::cuda::BakedTarget kTarget = {"a100", 80, 91900, true, kConvs, 6, 130100, kMatmuls, 1};
module attributes {tcc.cuda_target = {allow_fallback = true, cudnn_version = 91900 : i64, gpu = "a100", sm = 80 : i64,
  cublaslt_version = 130100 : i64, matmuls = [
    {problem = "gemm f32 tn m4 n2 k3 lda3 ldb3 ldc4 epilogue=bias", algo = "algo21_tile18_stages8_splitk1_reduction0_swizzle0_custom0_inner0_cluster0", workspace_bytes = 1024 : i64, nodes = ["fc"]}],
  convs = [
    {problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", plan = "eng1_k2=3", workspace_bytes = 64 : i64, nodes = ["conv"]},
    {problem = "bwd-data f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", plan = "eng2", workspace_bytes = 0 : i64, nodes = ["conv"]},
    {problem = "bwd-filter f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", plan = "eng3_k5=1", workspace_bytes = 0 : i64, nodes = ["conv"]},
    {problem = "fwd bf16 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", plan = "eng4", workspace_bytes = 0 : i64, nodes = ["conv16"]},
    {problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p8 q8 pad1,1 stride1,1 dil1,1 g1 +bias", plan = "eng5", workspace_bytes = 0 : i64, nodes = ["fused"]},
    {problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p8 q8 pad1,1 stride1,1 dil1,1 g1 +bias+relu", plan = "eng6", workspace_bytes = 0 : i64, nodes = ["relu"]}]}} {

// CHECK-LABEL: // @conv
// CHECK: // tcc.conv2d
// CHECK-NEXT: args.convs->run(0, a0, a1, r0, nullptr, 0); // forward
// CHECK-NEXT: cuda::add_channel_bias(args.stream, 2, 4, 16, a2, r0);
// CHECK: // tcc.conv2d_backward_data
// CHECK-NEXT: args.convs->run(1, r1, a1, a3, nullptr, 0); // backward-data
// CHECK: // tcc.conv2d_backward_filter
// CHECK-NEXT: args.convs->run(2, a0, r2, a3, nullptr, 0); // backward-filter
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %dy: tensor<2x4x4x4xf32>) {
  %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32> loc("conv")
  %dx = tcc.conv2d_backward_data %dy, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, input_shape = array<i64: 2, 3, 8, 8>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x8x8xf32> loc("conv")
  %dw = tcc.conv2d_backward_filter %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<4x3x3x3xf32> loc("conv")
  return
}

// A bf16 convolution is its own problem (cuDNN reads and writes bf16,
// accumulating in f32); its bf16 bias is added to the stored bf16 result.
// The op's workspace is where the memory plan put it.
// CHECK-LABEL: // @conv16
// CHECK: // tcc.conv2d
// CHECK-NEXT: args.convs->run(3, a0, a1, r0, args.scratch + 256, 128); // forward
// CHECK-NEXT: cuda::for_each_chunk(args.stream, 128, [=] __device__(int64_t i0, int count) {
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r0)> c0;
// CHECK-NEXT: cuda::load_chunk(r0, i0, count, c0);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r0)> s0;
// CHECK: const int64_t i = i0 + k;
// CHECK-NEXT: s0[k] = float_to_bf16(bf16_to_float(c0[k]) + bf16_to_float(a2[i / 16 % 4]));
// CHECK-NEXT: }
// CHECK-NEXT: cuda::store_chunk(r0, i0, count, s0);
func.func @conv16(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>) attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 1024>} {
  %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, tcc.workspace = #tcc.workspace<bytes = 128, offset = 256>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x4x4xbf16> loc("conv16")
  return
}


// The bias in cuDNN's epilogue: one call, given the bias; no kernel after.
// CHECK-LABEL: // @fused
// CHECK: // tcc.conv2d
// CHECK-NEXT: args.convs->run(4, a0, a1, r0, nullptr, 0, a2); // forward + bias
// CHECK-NOT: add_channel_bias
func.func @fused(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32> loc("fused")
  return
}

// A conv_epilogue group: the conv stores the ReLU of its biased sums where
// the group's result lives, with the group's workspace.
// CHECK-LABEL: // @relu
// CHECK: // tcc.fusion_group
// CHECK-NEXT: args.convs->run(5, a0, a1, r0, args.scratch + 512, 64, a2); // forward + bias, ReLU
// CHECK-NOT: Relu
func.func @relu(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 1024>} {
  %r = tcc.fusion_group "conv_epilogue" {tcc.workspace = #tcc.workspace<bytes = 64, offset = 512>} -> (tensor<2x4x8x8xf32>) {
    %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32> loc("relu")
    %a = tcc.relu %y : tensor<2x4x8x8xf32>
    tcc.yield %a : tensor<2x4x8x8xf32>
  }
  return
}

// A conv_epilogue group on 16-bit tensors whose problem the table has only
// without the epilogue (cuDNN had no fused engine): the conv, then one
// kernel adding the bias and applying the ReLU to the stored result.
// CHECK-LABEL: // @relu16
// CHECK: // tcc.fusion_group
// CHECK-NEXT: args.convs->run(3, a0, a1, r0, nullptr, 0); // forward
// CHECK: s0[k] = float_to_bf16(Relu<float>{}(bf16_to_float(c0[k]) + bf16_to_float(a2[i / 16 % 4])));
func.func @relu16(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>) {
  %r = tcc.fusion_group "conv_epilogue" -> (tensor<2x4x4x4xbf16>) {
    %y = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x4x4xbf16> loc("conv16")
    %f = tcc.cast %y to f32 : (tensor<2x4x4x4xbf16>) -> tensor<2x4x4x4xf32>
    %a = tcc.relu %f : tensor<2x4x4x4xf32>
    %n = tcc.cast %a to bf16 : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xbf16>
    tcc.yield %n : tensor<2x4x4x4xbf16>
  }
  return
}

}
