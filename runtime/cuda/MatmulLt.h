//===- MatmulLt.h - A MatmulProblem posed to cuBLASLt -----------*- C++ -*-===//
//
// What the trainer (runtime/cuda/device/Matmul.cuh) and the tuner
// (runtime/cuda/MatmulTuner.cpp) both do with cuBLASLt: describe a
// problem, ask the heuristic for algorithms, rebuild a written-down one
// (MatmulAlgo) and read one's configuration back. Header-only: the trainer
// compiles it with nvcc in the generated step's translation unit.
//
// Compute in f32 (CUBLAS_COMPUTE_32F: no TF32, so an f32 cuda step
// computes what the cpu step does, within rounding; a 16-bit one rounds
// each result once).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_MATMULLT_H
#define TCC_RUNTIME_CUDA_MATMULLT_H

#include "runtime/cuda/MatmulProblem.h"

#include <cublasLt.h>

#include <utility>
#include <vector>

namespace tcc::cuda {

/// The descriptors of one problem; the bias pointer is set per call.
struct MatmulDescriptors {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layouts[3] = {}; ///< A, B, C (= D)
  cudaDataType_t data = CUDA_R_32F;

  MatmulDescriptors() = default;
  MatmulDescriptors(const MatmulDescriptors &) = delete;
  MatmulDescriptors &operator=(const MatmulDescriptors &) = delete;
  MatmulDescriptors(MatmulDescriptors &&o) noexcept { *this = std::move(o); }
  MatmulDescriptors &operator=(MatmulDescriptors &&o) noexcept {
    std::swap(desc, o.desc);
    std::swap(layouts, o.layouts);
    data = o.data;
    return *this;
  }
  ~MatmulDescriptors() {
    if (desc)
      cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : layouts)
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
};

inline cudaDataType_t cudaTypeOf(MatmulType type) {
  return type == MatmulType::bf16 ? CUDA_R_16BF : type == MatmulType::f16 ? CUDA_R_16F
                                                                          : CUDA_R_32F;
}

/// Creates the descriptors of `p`. The first failing status, else success.
inline cublasStatus_t describeMatmul(const MatmulProblem &p, MatmulDescriptors &d) {
  d.data = cudaTypeOf(p.type);
  cublasStatus_t s = cublasLtMatmulDescCreate(&d.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t opA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const void *value, size_t bytes) {
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulDescSetAttribute(d.desc, attribute, value, bytes);
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA));
  set(CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB));
  if (p.bias || p.activation != MatmulActivation::none) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    switch (p.activation) {
    case MatmulActivation::relu:
      epilogue = p.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      break;
    case MatmulActivation::gelu:
      epilogue = p.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      break;
    case MatmulActivation::gelu_aux:
      epilogue = p.bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
      break;
    default:
      break;
    }
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  }
  // GELU_AUX's input matrix, laid out as the output (its pointer is the
  // call's: Matmul.cuh, MatmulTuner.cpp).
  if (p.activation == MatmulActivation::gelu_aux) {
    const int64_t auxLd = p.ldc;
    set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &auxLd, sizeof(auxLd));
  }
  if (p.bias)
    set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &d.data, sizeof(d.data));
  // As stored: A is [m, k] or, transposed, [k, m]; likewise B.
  auto layout = [&](cublasLtMatrixLayout_t &l, int64_t rows, int64_t columns, int64_t ld) {
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatrixLayoutCreate(&l, d.data, uint64_t(rows), uint64_t(columns), ld);
  };
  layout(d.layouts[0], p.transA ? p.k : p.m, p.transA ? p.m : p.k, p.lda);
  layout(d.layouts[1], p.transB ? p.n : p.k, p.transB ? p.k : p.n, p.ldb);
  layout(d.layouts[2], p.m, p.n, p.ldc);
  // A strided batch: every layout counts it, each with its own stride.
  if (p.batch > 1) {
    const int32_t count = int32_t(p.batch);
    const int64_t strides[3] = {p.strideA, p.strideB, p.strideC};
    for (int i = 0; i < 3; ++i) {
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutSetAttribute(d.layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                             &count, sizeof(count));
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutSetAttribute(d.layouts[i],
                                             CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &strides[i], sizeof(strides[i]));
    }
  }
  return s;
}

/// cuBLASLt's heuristic's algorithms for `d`, best first, at most `count`,
/// each within `workspaceLimit` bytes and for operands aligned to
/// `alignment` bytes (its algorithms assume 256 unless told otherwise, and
/// then fail with status 7 on less).
inline cublasStatus_t heuristicAlgos(cublasLtHandle_t handle, const MatmulDescriptors &d,
                                     int64_t workspaceLimit, int64_t alignment, int count,
                                     std::vector<cublasLtMatmulHeuristicResult_t> &results) {
  cublasLtMatmulPreference_t preference;
  cublasStatus_t s = cublasLtMatmulPreferenceCreate(&preference);
  if (s != CUBLAS_STATUS_SUCCESS)
    return s;
  const size_t limit = size_t(workspaceLimit);
  s = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &limit, sizeof(limit));
  const uint32_t bytes = uint32_t(alignment);
  for (cublasLtMatmulPreferenceAttributes_t operand :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulPreferenceSetAttribute(preference, operand, &bytes, sizeof(bytes));
  results.assign(size_t(count), cublasLtMatmulHeuristicResult_t{});
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(handle, d.desc, d.layouts[0], d.layouts[1],
                                       d.layouts[2], d.layouts[2], preference, count,
                                       results.data(), &found);
  results.resize(s == CUBLAS_STATUS_SUCCESS ? size_t(found) : 0);
  cublasLtMatmulPreferenceDestroy(preference);
  return s;
}

/// The configuration of `algo`, to write down.
inline MatmulAlgo configOf(const cublasLtMatmulAlgo_t &algo) {
  MatmulAlgo config;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attribute, auto &value) {
    size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written);
  };
  uint16_t inner = 0, cluster = 0;
  get(CUBLASLT_ALGO_CONFIG_ID, config.id);
  get(CUBLASLT_ALGO_CONFIG_TILE_ID, config.tile);
  get(CUBLASLT_ALGO_CONFIG_STAGES_ID, config.stages);
  get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, config.splitK);
  get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, config.reduction);
  get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, config.swizzle);
  get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, config.custom);
  get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, inner);
  get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cluster);
  config.inner = inner, config.cluster = cluster;
  return config;
}

/// Rebuilds `config` for `d` on this GPU (cublasLtMatmulAlgoInit, the
/// configuration, cublasLtMatmulAlgoCheck), with the workspace it needs.
/// A status other than success: this cuBLASLt or GPU cannot run it.
inline cublasStatus_t rebuildAlgo(cublasLtHandle_t handle, const MatmulDescriptors &d,
                                  const MatmulAlgo &config, cublasLtMatmulAlgo_t &algo,
                                  size_t &workspaceBytes) {
  cublasStatus_t s = cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, d.data,
                                            d.data, d.data, d.data, config.id, &algo);
  auto set = [&](cublasLtMatmulAlgoConfigAttributes_t attribute, const auto &value) {
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulAlgoConfigSetAttribute(&algo, attribute, &value, sizeof(value));
  };
  set(CUBLASLT_ALGO_CONFIG_TILE_ID, config.tile);
  set(CUBLASLT_ALGO_CONFIG_STAGES_ID, config.stages);
  set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, config.splitK);
  set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, config.reduction);
  set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, config.swizzle);
  set(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, config.custom);
  set(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, uint16_t(config.inner));
  set(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, uint16_t(config.cluster));
  cublasLtMatmulHeuristicResult_t result{};
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoCheck(handle, d.desc, d.layouts[0], d.layouts[1], d.layouts[2],
                                d.layouts[2], &algo, &result);
  workspaceBytes = result.workspaceSize;
  return s;
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_MATMULLT_H
