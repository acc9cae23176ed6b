//===- Matmul.cuh - Linear layers through cuBLASLt ---------------*- CUDA -*-===//
//
// The three matmuls of a linear layer (forward with its bias, and the ReLU
// of a matmul_epilogue fusion group, as cuBLASLt's epilogue, backward-data,
// backward-weight), on f32, bf16 or f16 tensors
// (all operands of one matmul in one type, as tcc-precision assigns them)
// with f32 compute (CUBLAS_COMPUTE_32F: no TF32, so an f32 cuda step
// computes what the cpu step does, within rounding; a 16-bit one rounds
// each result once, where the cpu step rounds its f32 result when it
// stores it). Tensors are row-major as in the IR;
// cuBLASLt is column-major, so each product is posed transposed (a
// row-major [r, c] matrix is a column-major [c, r] one).
//
// Each matmul op has its own workspace in the memory plan (docs/cuda.md,
// "Memory"). A layout and its algorithm are chosen once per distinct
// problem (and workspace size), at the problem's first call (which is inside the captured step: host work only,
// nothing is enqueued), by cuBLASLt's heuristic for this GPU; `tcc tune`
// (issue 11) will bake measured choices as it does for convolutions.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH

#include "runtime/common/Float16.h"
#include "runtime/cuda/device/Launch.cuh"

#ifndef TCC_CUDA_HOST_EMULATION
#include <cublasLt.h>
#endif

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

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
  /// The element type of a matmul's operands and result.
  enum class Type { f32, bf16, f16 };


#ifdef TCC_CUDA_HOST_EMULATION
  void init() {}

  /// cuBLASLt's definition, in double (HostEmulation.h), rounded once to
  /// `type` (through f32, which changes no 16-bit result but a tie); the
  /// workspace is scribbled over, as cuBLASLt may.
  void gemm(cudaStream_t stream, Type type, bool transA, bool transB, int64_t m, int64_t n,
            int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
            int64_t ldc, const void *bias, bool relu, bool accumulate, void *workspace,
            int64_t workspaceBytes) {
    emulation::enqueue(stream, [=] {
      emulation::scribble(workspace, workspaceBytes);
      // The operands in double, each row of op(A) and column of op(B)
      // contiguous; a thread per column of C, each element's sum in order
      // of l: the same bits on any number of threads.
      std::vector<double> a(size_t(m * k)), b(size_t(k * n));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l)
          a[size_t(i * k + l)] = load(type, A, transA ? i * lda + l : l * lda + i);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          b[size_t(j * k + l)] = load(type, B, transB ? l * ldb + j : j * ldb + l);
#pragma omp parallel for
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          double sum = 0;
          const double *row = a.data() + i * k, *column = b.data() + j * k;
          for (int64_t l = 0; l < k; ++l)
            sum += row[l] * column[l];
          if (accumulate)
            sum += load(type, C, j * ldc + i);
          if (bias)
            sum += load(type, bias, i);
          if (relu && !(sum > 0) && sum == sum) // kernels::Relu: NaN stays
            sum = 0;
          store(type, C, j * ldc + i, float(sum));
        }
    });
  }

private:
  static double load(Type type, const void *p, int64_t i) {
    switch (type) {
    case Type::bf16:
      return half::bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
    case Type::f16:
      return half::f16ToFloat(static_cast<const uint16_t *>(p)[i]);
    default:
      return static_cast<const float *>(p)[i];
    }
  }
  static void store(Type type, void *p, int64_t i, float v) {
    if (type == Type::f32)
      static_cast<float *>(p)[i] = v;
    else
      static_cast<uint16_t *>(p)[i] = type == Type::bf16 ? half::floatToBf16(v)
                                                         : half::floatToF16(v);
  }

public:
#else
  void init() { check(cublasLtCreate(&handle), "cublasLtCreate"); }
  ~Matmul() {
    for (auto &entry : plans) {
      cublasLtMatmulDescDestroy(entry.second.desc);
      for (cublasLtMatrixLayout_t l : entry.second.layouts)
        cublasLtMatrixLayoutDestroy(l);
    }
    if (handle)
      cublasLtDestroy(handle);
  }

  /// Column-major C[m, n] (+)= op(A) op(B) (+ bias[m] per column, then
  /// max(0, .) with `relu`), where op transposes when `transA` / `transB`;
  /// ld* are the leading dimensions of A, B, C as stored. `workspace` is
  /// the op's in the memory plan; the algorithm is chosen among those that
  /// fit it.
  void gemm(cudaStream_t stream, Type type, bool transA, bool transB, int64_t m, int64_t n,
            int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
            int64_t ldc, const void *bias, bool relu, bool accumulate, void *workspace,
            int64_t workspaceBytes) {
    // cuBLASLt wants a 256-byte aligned workspace; the memory plan aligns to
    // 64: the first bytes up to 256 are left unused.
    const int64_t skip = int64_t(-reinterpret_cast<uintptr_t>(workspace) & 255);
    workspace = static_cast<char *>(workspace) + skip;
    workspaceBytes = std::max<int64_t>(0, workspaceBytes - skip);
    // Its algorithms assume 256-byte aligned operands unless told otherwise
    // (and then fail with status 7): the alignment the operands have is
    // part of the problem.
    const int64_t alignment = std::min({alignmentOf(A), alignmentOf(B), alignmentOf(C)});
    const Key key{type, transA, transB, m,    n,    k,
                  lda,  ldb,    ldc,    bias != nullptr, relu, workspaceBytes, alignment};
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
                         size_t(workspaceBytes), stream),
          "cublasLtMatmul");
  }

#endif

  // Each with the op's workspace in the memory plan (ws, wsBytes).

  /// y[M, N] = x[M, K] w[N, K]^T + bias[N] (bias may be null), then
  /// max(0, y) with `relu` (a matmul_epilogue group).
  void linear_forward(cudaStream_t s, Type type, int64_t M, int64_t K, int64_t N,
                      const void *x, const void *w, const void *bias, void *y, void *ws,
                      int64_t wsBytes, bool relu = false) {
    // Column-major: y^T [N, M] = (w^T [K, N])^T x^T [K, M].
    gemm(s, type, true, false, N, M, K, w, K, x, K, y, N, bias, relu, false, ws, wsBytes);
  }
  /// dx[M, K] = dy[M, N] w[N, K].
  void linear_backward_data(cudaStream_t s, Type type, int64_t M, int64_t K, int64_t N,
                            const void *dy, const void *w, void *dx, void *ws, int64_t wsBytes) {
    gemm(s, type, false, false, K, M, N, w, K, dy, N, dx, K, nullptr, false, false, ws, wsBytes);
  }
  /// dw[N, K] = dy[M, N]^T x[M, K].
  void linear_backward_weight(cudaStream_t s, Type type, int64_t M, int64_t K, int64_t N,
                              const void *dy, const void *x, void *dw, void *ws,
                              int64_t wsBytes) {
    gemm(s, type, false, true, K, N, M, x, K, dy, N, dw, K, nullptr, false, false, ws,
         wsBytes);
  }

#ifndef TCC_CUDA_HOST_EMULATION
private:
  using Key = std::tuple<Type, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         bool, bool, int64_t, int64_t>;

  /// The largest power of two up to 256 that divides the address.
  static int64_t alignmentOf(const void *p) {
    int64_t alignment = 256;
    while (alignment > 1 && reinterpret_cast<uintptr_t>(p) % alignment)
      alignment /= 2;
    return alignment;
  }
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layouts[3] = {};
    cublasLtMatmulAlgo_t algo;
  };

  Plan makePlan(const Key &key) {
    auto [type, transA, transB, m, n, k, lda, ldb, ldc, hasBias, relu, workspaceBytes,
          alignment] = key;
    const cudaDataType_t data = type == Type::bf16  ? CUDA_R_16BF
                                : type == Type::f16 ? CUDA_R_16F
                                                    : CUDA_R_32F;
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
    if (hasBias || relu) {
      const cublasLtEpilogue_t epilogue = relu ? (hasBias ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                          : CUBLASLT_EPILOGUE_RELU)
                                               : CUBLASLT_EPILOGUE_BIAS;
      check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof(epilogue)),
            "setting the epilogue");
    }
    if (hasBias)
      check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                           &data, sizeof(data)),
            "setting the bias type");
    // As stored: A is [m, k] or, transposed, [k, m]; likewise B.
    check(cublasLtMatrixLayoutCreate(&plan.layouts[0], data, transA ? k : m,
                                     transA ? m : k, lda),
          "creating a layout");
    check(cublasLtMatrixLayoutCreate(&plan.layouts[1], data, transB ? n : k,
                                     transB ? k : n, ldb),
          "creating a layout");
    check(cublasLtMatrixLayoutCreate(&plan.layouts[2], data, m, n, ldc),
          "creating a layout");
    cublasLtMatmulPreference_t preference;
    check(cublasLtMatmulPreferenceCreate(&preference), "creating a preference");
    const size_t limit = size_t(workspaceBytes);
    check(cublasLtMatmulPreferenceSetAttribute(preference,
                                               CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &limit, sizeof(limit)),
          "setting the workspace limit");
    const uint32_t bytes = uint32_t(alignment);
    for (cublasLtMatmulPreferenceAttributes_t operand :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      check(cublasLtMatmulPreferenceSetAttribute(preference, operand, &bytes, sizeof(bytes)),
            "setting an operand's alignment");
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
  std::map<Key, Plan> plans;
#endif
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH
