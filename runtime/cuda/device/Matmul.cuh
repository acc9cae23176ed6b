//===- Matmul.cuh - Linear layers through cuBLASLt ---------------*- CUDA -*-===//
//
// The three matmuls of a linear layer (forward with its bias as cuBLASLt's
// epilogue, backward-data, backward-weight), f32 in and out with f32
// compute (CUBLAS_COMPUTE_32F: no TF32, so an f32 cuda step computes what
// the cpu step does, within rounding). Tensors are row-major as in the IR;
// cuBLASLt is column-major, so each product is posed transposed (a
// row-major [r, c] matrix is a column-major [c, r] one).
//
// A layout and its algorithm are chosen once per distinct problem, at the
// problem's first call (which is inside the captured step: host work only,
// nothing is enqueued), by cuBLASLt's heuristic for this GPU; `tcc tune`
// (issue 11) will bake measured choices as it does for convolutions.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH

#include "runtime/cuda/device/Launch.cuh"

#ifndef TCC_CUDA_HOST_EMULATION
#include <cublasLt.h>
#endif

#include <map>
#include <tuple>

namespace tcc::rt::cuda {

#ifndef TCC_CUDA_HOST_EMULATION
inline void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt: ") + what + ": status " +
                             std::to_string(int(status)));
}
#endif

class Matmul {
public:
  /// The workspace every matmul may use (cuBLASLt's recommendation for
  /// Hopper is 32 MiB).
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;

#ifdef TCC_CUDA_HOST_EMULATION
  void init() {}

  /// cuBLASLt's definition, in double (HostEmulation.h).
  void gemm(cudaStream_t stream, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
            const float *A, int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc,
            const float *bias, bool accumulate) {
    emulation::enqueue(stream, [=] {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          double sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += double(transA ? A[i * lda + l] : A[l * lda + i]) *
                   double(transB ? B[l * ldb + j] : B[j * ldb + l]);
          if (accumulate)
            sum += C[j * ldc + i];
          if (bias)
            sum += bias[i];
          C[j * ldc + i] = float(sum);
        }
    });
  }
#else
  void init() {
    check(cublasLtCreate(&handle), "cublasLtCreate");
    check(cudaMalloc(&workspace, kWorkspaceBytes), "allocating the cuBLASLt workspace");
  }
  ~Matmul() {
    for (auto &entry : plans) {
      cublasLtMatmulDescDestroy(entry.second.desc);
      for (cublasLtMatrixLayout_t l : entry.second.layouts)
        cublasLtMatrixLayoutDestroy(l);
    }
    if (workspace)
      cudaFree(workspace);
    if (handle)
      cublasLtDestroy(handle);
  }

  /// Column-major C[m, n] (+)= op(A) op(B) (+ bias[m] per column), where
  /// op transposes when `transA` / `transB`; ld* are the leading
  /// dimensions of A, B, C as stored.
  void gemm(cudaStream_t stream, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
            const float *A, int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc,
            const float *bias, bool accumulate) {
    const Key key{transA, transB, m, n, k, lda, ldb, ldc, bias != nullptr};
    auto it = plans.find(key);
    if (it == plans.end())
      it = plans.emplace(key, makePlan(key)).first;
    Plan &plan = it->second;
    if (bias)
      check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                           sizeof(bias)),
            "setting the bias");
    const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    check(cublasLtMatmul(handle, plan.desc, &one, A, plan.layouts[0], B, plan.layouts[1], &beta,
                         C, plan.layouts[2], C, plan.layouts[2], &plan.algo, workspace,
                         kWorkspaceBytes, stream),
          "cublasLtMatmul");
  }

#endif

  /// y[M, N] = x[M, K] w[N, K]^T + bias[N] (bias may be null).
  void linear_forward(cudaStream_t s, int64_t M, int64_t K, int64_t N, const float *x,
                      const float *w, const float *bias, float *y) {
    // Column-major: y^T [N, M] = (w^T [K, N])^T x^T [K, M].
    gemm(s, true, false, N, M, K, w, K, x, K, y, N, bias, false);
  }
  /// dx[M, K] = dy[M, N] w[N, K].
  void linear_backward_data(cudaStream_t s, int64_t M, int64_t K, int64_t N, const float *dy,
                            const float *w, float *dx) {
    gemm(s, false, false, K, M, N, w, K, dy, N, dx, K, nullptr, false);
  }
  /// dw[N, K] = dy[M, N]^T x[M, K].
  void linear_backward_weight(cudaStream_t s, int64_t M, int64_t K, int64_t N,
                              const float *dy, const float *x, float *dw) {
    gemm(s, false, true, K, N, M, x, K, dy, N, dw, K, nullptr, false);
  }

#ifndef TCC_CUDA_HOST_EMULATION
private:
  using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool>;
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layouts[3] = {};
    cublasLtMatmulAlgo_t algo;
  };

  Plan makePlan(const Key &key) {
    auto [transA, transB, m, n, k, lda, ldb, ldc, hasBias] = key;
    Plan plan;
    check(cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "creating a matmul");
    const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                         sizeof(opA)),
          "setting transa");
    check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                         sizeof(opB)),
          "setting transb");
    if (hasBias) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof(epilogue)),
            "setting the bias epilogue");
      const cudaDataType_t biasType = CUDA_R_32F;
      check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                           &biasType, sizeof(biasType)),
            "setting the bias type");
    }
    // As stored: A is [m, k] or, transposed, [k, m]; likewise B.
    check(cublasLtMatrixLayoutCreate(&plan.layouts[0], CUDA_R_32F, transA ? k : m,
                                     transA ? m : k, lda),
          "creating a layout");
    check(cublasLtMatrixLayoutCreate(&plan.layouts[1], CUDA_R_32F, transB ? n : k,
                                     transB ? k : n, ldb),
          "creating a layout");
    check(cublasLtMatrixLayoutCreate(&plan.layouts[2], CUDA_R_32F, m, n, ldc),
          "creating a layout");
    cublasLtMatmulPreference_t preference;
    check(cublasLtMatmulPreferenceCreate(&preference), "creating a preference");
    const size_t limit = kWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(preference,
                                               CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &limit, sizeof(limit)),
          "setting the workspace limit");
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(handle, plan.desc, plan.layouts[0], plan.layouts[1],
                                         plan.layouts[2], plan.layouts[2], preference, 1,
                                         &result, &found),
          "choosing a matmul algorithm");
    cublasLtMatmulPreferenceDestroy(preference);
    if (found == 0)
      throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(m) + "x" +
                               std::to_string(n) + "x" + std::to_string(k) + " matmul");
    plan.algo = result.algo;
    return plan;
  }

  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  std::map<Key, Plan> plans;
#endif
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH
