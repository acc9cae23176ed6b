// RUN: not tcc-translate --emit-cuda --split-input-file %s 2>&1 | FileCheck %s

// A malformed tcc.cuda_target (hand-written IR; tcc compile writes it
// whole) is an error naming what a row lacks, not a crash or a table with
// holes (codegen/cuda/CudaTarget.cpp).

// CHECK: error: tcc.cuda_target: each conv needs problem, plan, workspace_bytes and nodes (a list of names), got {nodes = ["conv"], problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", workspace_bytes = 0 : i64}
module attributes {tcc.cuda_target = {convs = [
    {problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", workspace_bytes = 0 : i64, nodes = ["conv"]}]}} {
}

// -----

// CHECK: error: tcc.cuda_target: each matmul needs problem, algo, workspace_bytes and nodes (a list of names), got {algo = "algo1_tile1_stages1_splitk1_reduction0_swizzle0_custom0_inner0_cluster0", problem = "gemm f32 tn m4 n2 k3 lda3 ldb3 ldc4 epilogue=bias", workspace_bytes = 0 : i64}
module attributes {tcc.cuda_target = {matmuls = [
    {problem = "gemm f32 tn m4 n2 k3 lda3 ldb3 ldc4 epilogue=bias", algo = "algo1_tile1_stages1_splitk1_reduction0_swizzle0_custom0_inner0_cluster0", workspace_bytes = 0 : i64}]}} {
}

// -----

// The nodes are a list of model node names (tcc-cuda-select-algorithms
// writes them so), not text.
// CHECK: error: tcc.cuda_target: each conv needs problem, plan, workspace_bytes and nodes (a list of names), got {nodes = "'conv'", plan = "eng0", problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", workspace_bytes = 0 : i64}
module attributes {tcc.cuda_target = {convs = [
    {problem = "fwd f32 nchw n2 c3 h8 w8 k4 r3 s3 p4 q4 pad1,1 stride2,2 dil1,1 g1", plan = "eng0", workspace_bytes = 0 : i64, nodes = "'conv'"}]}} {
}
