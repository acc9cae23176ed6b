// RUN: tcc-opt %s -split-input-file -tcc-cuda-select-algorithms='gpu=a100' | FileCheck %s
// RUN: tcc-opt %s -split-input-file -tcc-cuda-select-algorithms='gpu=h100 allow-fallback=true' | FileCheck %s --check-prefix=H100
// RUN: not tcc-opt %s -split-input-file -tcc-cuda-select-algorithms='gpu=v100' 2>&1 | FileCheck %s --check-prefix=BAD-GPU
// REQUIRES: cuda

// The cuda target's algorithm selection (codegen/cuda/Passes.td): one row
// per distinct convolution problem of the two steps (the forward conv of
// @train_step and @eval_step is one problem, of node 'conv'), its engine
// chosen by cuDNN's heuristics for the described GPU; every matmul problem,
// chosen at the trainer's first step without a tuning file; the workspace
// of each op that needs one (cuBLASLt's for a linear on an A100) for the
// memory plan.
// CHECK: module attributes {tcc.cuda_target = {allow_fallback = false, convs = [{candidates = {{[1-9][0-9]*}} : i64, chosen_by = "heuristics", direction = "forward", engine = {{[0-9]+}} : i64, knobs = {{{.*}}}, nodes = ["conv"], numeric_notes = [{{.*}}], plan = "eng{{[0-9]+.*}}", problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p8 q8 pad1,1 stride1,1 dil1,1 g1", rank = {{[0-9]+}} : i64, source = "cudnn", workspace_bytes = {{[0-9]+}} : i64}], cublaslt_version = 0 : i64, cudnn_version = {{[0-9]+}} : i64, gpu = "a100", gpu_description = "NVIDIA A100 80GB (SXM4)", matmul_workspace_limit_bytes = {{[0-9]+}} : i64, matmuls = [{chosen_by = "heuristic at the first step", nodes = ["fc"], problem = "gemm f32 tn m10 n2 k256 lda256 ldb256 ldc10 epilogue=default"}], sm = 80 : i64, workspace_limit_bytes = 268435456 : i64}}
// CHECK-LABEL: func.func @train_step(
// CHECK: tcc.linear {{.*}} {tcc.workspace = #tcc.workspace<bytes = 4194304>}
// H100: tcc.cuda_target = {allow_fallback = true, {{.*}} gpu = "h100", {{.*}}, sm = 90
// BAD-GPU: error: unknown GPU 'v100'; tcc has descriptions of h100 | h200 | a100 | sm_80 | sm_90 | sm_90a
module {
  func.func @train_step(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %fw: tensor<10x256xf32>) -> tensor<2x10xf32> {
    %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("conv")
    %f = tcc.flatten %y : (tensor<2x4x8x8xf32>) -> tensor<2x256xf32>
    %l = tcc.linear %f, %fw : (tensor<2x256xf32>, tensor<10x256xf32>) -> tensor<2x10xf32> loc("fc")
    return %l : tensor<2x10xf32>
  }
  func.func @eval_step(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
    %y = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> loc("conv")
    return %y : tensor<2x4x8x8xf32>
  }
}

// -----

// Where it must not choose anything: a step without convolutions and
// matmuls gets empty lists and no workspace.
// CHECK: module attributes {tcc.cuda_target = {allow_fallback = false, convs = [], {{.*}}matmuls = [], sm = 80
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: tcc.workspace
// CHECK: return
module {
  func.func @train_step(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %r = tcc.relu %x : tensor<2x8xf32>
    return %r : tensor<2x8xf32>
  }
}
