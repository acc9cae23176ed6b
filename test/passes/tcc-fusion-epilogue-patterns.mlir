// RUN: tcc-opt %s -tcc-fusion=epilogue-patterns=cublaslt-linear-activation,cudnn-conv-bias-relu | FileCheck %s --check-prefix=BOTH
// RUN: tcc-opt %s -tcc-fusion=epilogue-patterns=cublaslt-linear-activation | FileCheck %s --check-prefix=MATMUL
// RUN: tcc-opt %s -tcc-fusion=epilogue-patterns=cudnn-conv-bias-relu | FileCheck %s --check-prefix=CONV
// RUN: tcc-opt %s -tcc-fusion | FileCheck %s --check-prefix=NONE
// RUN: not tcc-opt %s -tcc-fusion=epilogue-patterns=cudnn-conv-bias-gelu 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// tcc-fusion forms the library epilogues its epilogue-patterns option
// names, from the tables the targets declare (the cuda target's:
// codegen/cuda/CudaFusionPatterns.cpp), and no other: where the table
// lacks an entry, its epilogue does not form, and the ReLU stays an op of
// its own. A name no target declares is an error.

// BOTH: groups_by_kind = {conv_epilogue = 1 : i64, matmul_epilogue = 1 : i64}
// BOTH-LABEL: func.func @train_step
// BOTH: tcc.fusion_group "matmul_epilogue"
// BOTH-NEXT: tcc.linear
// BOTH-NEXT: tcc.relu
// BOTH: tcc.fusion_group "conv_epilogue"
// BOTH-NEXT: tcc.conv2d
// BOTH-NEXT: tcc.relu

// Without cuDNN's pattern, the conv's ReLU goes with its backward as an
// elementwise chain.
// MATMUL: groups_by_kind = {elementwise = 1 : i64, matmul_epilogue = 1 : i64}
// MATMUL-LABEL: func.func @train_step
// MATMUL: tcc.fusion_group "matmul_epilogue"
// MATMUL: tcc.conv2d
// MATMUL-NEXT: tcc.fusion_group "elementwise"
// MATMUL-NEXT: tcc.relu
// MATMUL-NEXT: tcc.relu_backward

// CONV: groups_by_kind = {conv_epilogue = 1 : i64, elementwise = 1 : i64}
// CONV-LABEL: func.func @train_step
// CONV: tcc.linear
// CONV-NEXT: tcc.fusion_group "elementwise"
// CONV-NEXT: tcc.relu
// CONV-NEXT: tcc.relu_backward
// CONV: tcc.fusion_group "conv_epilogue"

// NONE: groups_by_kind = {elementwise = 2 : i64}

// UNKNOWN: error: tcc-fusion: epilogue-patterns: no target declares the fusion pattern 'cudnn-conv-bias-gelu'; expected one of: cublaslt-linear-activation, cudnn-conv-bias-relu
func.func @train_step(%x: tensor<8x4xf32> {tcc.role = "input"}, %w: tensor<16x4xf32>,
                      %b: tensor<16xf32>, %dy: tensor<8x16xf32>,
                      %cx: tensor<2x3x4x4xf32> {tcc.role = "input"}, %cw: tensor<5x3x3x3xf32>,
                      %cb: tensor<5xf32>, %cdy: tensor<2x5x4x4xf32>)
    -> (tensor<8x16xf32>, tensor<2x5x4x4xf32>) {
  %l = tcc.linear %x, %w, %b : (tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = tcc.relu %l : tensor<8x16xf32>
  %d = tcc.relu_backward %dy, %r : tensor<8x16xf32>
  %y = tcc.conv2d %cx, %cw, %cb {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<2x5x4x4xf32>
  %cr = tcc.relu %y : tensor<2x5x4x4xf32>
  %cd = tcc.relu_backward %cdy, %cr : tensor<2x5x4x4xf32>
  return %d, %cd : tensor<8x16xf32>, tensor<2x5x4x4xf32>
}
