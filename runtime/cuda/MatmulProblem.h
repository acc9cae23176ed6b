//===- MatmulProblem.h - One matmul as cuBLASLt sees it ---------*- C++ -*-===//
//
// A matmul of the step as the cuda trainer poses it to cuBLASLt
// (runtime/cuda/device/Matmul.cuh), with everything the choice of its
// algorithm depends on, and that choice (MatmulAlgo) in a form that can be
// written down, baked into a trainer and rebuilt there.
//
// cuBLASLt describes no GPU it does not run on (unlike cuDNN), so the
// compiler cannot choose a matmul's algorithm: without a tuning file the
// trainer asks cuBLASLt's heuristic at its first step. `tcc tune` times the
// candidates on the GPU and `tcc compile --tuning-db` bakes the fastest
// (docs/tuning.md). The compiler lists the problems
// (codegen/cuda/CudaConvPlans.cpp), the tuner and the trainer pose them:
// all three through the functions below. Plain C++: no cuBLASLt, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_MATMULPROBLEM_H
#define TCC_RUNTIME_CUDA_MATMULPROBLEM_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace tcc::cuda {

/// The element type of a matmul's operands and result (one type for all).
enum class MatmulType { f32, bf16, f16 };

/// Every operand the trainer passes cuBLASLt is aligned to 64 bytes, the
/// memory plan's alignment (passes/MemoryPlan.cpp): the tuner asks for
/// algorithms under that alignment, so a baked one runs on any operand.
constexpr int64_t kMatmulOperandAlignment = 64;

/// The workspace a cuBLASLt matmul gets (cublasSetWorkspace's
/// recommendation: 32 MiB on Hopper and later, 4 MiB before). The memory
/// plan places one per matmul op, live during the op only.
inline int64_t matmulWorkspaceBytes(int sm) { return int64_t(sm >= 90 ? 32 : 4) << 20; }

/// What an algorithm may use of it: cuBLASLt wants its workspace aligned to
/// 256 bytes, the memory plan aligns to 64, so up to 192 bytes are skipped.
inline int64_t matmulUsableWorkspaceBytes(int sm) {
  return matmulWorkspaceBytes(sm) - (256 - kMatmulOperandAlignment);
}

/// What a forward matmul's epilogue applies after the bias (a
/// matmul_epilogue fusion group's activation): nothing, a ReLU, GELU (the
/// tanh approximation, cuBLASLt's), or GELU with its input also stored
/// (gelu_aux: cuBLASLt's GELU_AUX, for the backward), as cuBLASLt names them.
enum class MatmulActivation { none, relu, gelu, gelu_aux };

inline const char *matmulActivationName(MatmulActivation activation) {
  switch (activation) {
  case MatmulActivation::relu:
    return "relu";
  case MatmulActivation::gelu:
    return "gelu";
  case MatmulActivation::gelu_aux:
    return "gelu_aux";
  default:
    return "none";
  }
}

/// Column-major C[m, n] = op(A) op(B) (+ bias[m] per column, then the
/// activation; gelu_aux also stores the pre-activation in an auxiliary
/// matrix laid out as C), op transposing where trans*; ld* are the leading
/// dimensions of A, B, C as stored. With batch > 1, `batch` such products,
/// the i-th reading A + i*strideA, B + i*strideB and writing C + i*strideC
/// (cuBLASLt's strided batch: CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and
/// _STRIDED_BATCH_OFFSET, in elements; a stride may be smaller than a
/// matrix, as an attention head's columns are).
struct MatmulProblem {
  MatmulType type = MatmulType::f32;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool bias = false;
  MatmulActivation activation = MatmulActivation::none;
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;

  /// The three matmuls of a linear layer of x [M, K], w [N, K], y [M, N],
  /// row-major as in the IR. cuBLASLt is column-major, so each is posed
  /// transposed (a row-major [r, c] matrix is a column-major [c, r] one).
  /// y = x w^T (+ bias): y^T [N, M] = (w^T [K, N])^T x^T [K, M].
  static MatmulProblem linearForward(MatmulType type, int64_t M, int64_t K, int64_t N,
                                     bool bias,
                                     MatmulActivation activation = MatmulActivation::none) {
    return {type, true, false, N, M, K, K, K, N, bias, activation};
  }
  /// dx [M, K] = dy [M, N] w [N, K].
  static MatmulProblem linearBackwardData(MatmulType type, int64_t M, int64_t K, int64_t N) {
    return {type, false, false, K, M, N, K, N, K, false, MatmulActivation::none};
  }
  /// dw [N, K] = dy [M, N]^T x [M, K].
  static MatmulProblem linearBackwardWeight(MatmulType type, int64_t M, int64_t K,
                                            int64_t N) {
    return {type, false, true, K, N, M, K, N, K, false, MatmulActivation::none};
  }

  /// tcc.matmul: `batch` row-major products C [M, N] = op(A) op(B), op(A)
  /// [M, K] (A stored [K, M] when transA), op(B) [K, N] (B stored [N, K]
  /// when transB), the batch's matrices contiguous. Posed transposed as the
  /// linear layers are: C^T = op(B)^T op(A)^T.
  static MatmulProblem batchedProduct(MatmulType type, int64_t batch, int64_t M, int64_t N,
                                      int64_t K, bool transA, bool transB) {
    MatmulProblem p{type, transB, transA, N, M, K, transB ? K : N, transA ? M : K, N,
                    false, MatmulActivation::none};
    return p.batched(batch, K * N, M * K, M * N);
  }

  /// This problem repeated `count` times with the given strides (none for 1).
  MatmulProblem batched(int64_t count, int64_t a, int64_t b, int64_t c) const {
    MatmulProblem p = *this;
    p.batch = count;
    p.strideA = count > 1 ? a : 0;
    p.strideB = count > 1 ? b : 0;
    p.strideC = count > 1 ? c : 0;
    return p;
  }

  /// A stable, readable identity: "gemm bf16 tn m10 n512 k256 lda256
  /// ldb256 ldc10 epilogue=relu_bias" (t/n: op(A), op(B) transposed or
  /// not; the epilogue as cuBLASLt names it: default, bias, or the
  /// activation, then _bias with a bias: relu, gelu, gelu_aux_bias, ...).
  /// Tuning files and the baked table are keyed by it. A batch adds
  /// " batch12 sa64 sb64 sc256" (its count and strides) before the epilogue.
  std::string key() const {
    static const char *const types[] = {"f32", "bf16", "f16"};
    std::string batchText;
    if (batch > 1)
      batchText = " batch" + std::to_string(batch) + " sa" + std::to_string(strideA) + " sb" +
                  std::to_string(strideB) + " sc" + std::to_string(strideC);
    return std::string("gemm ") + types[int(type)] + " " + (transA ? "t" : "n") +
           (transB ? "t" : "n") + " m" + std::to_string(m) + " n" + std::to_string(n) + " k" +
           std::to_string(k) + " lda" + std::to_string(lda) + " ldb" + std::to_string(ldb) +
           " ldc" + std::to_string(ldc) + batchText + " epilogue=" + epilogueName();
  }
  std::string epilogueName() const {
    if (activation == MatmulActivation::none)
      return bias ? "bias" : "default";
    return std::string(matmulActivationName(activation)) + (bias ? "_bias" : "");
  }

  /// Reads a key() back. False if `text` is not a key.
  static bool fromKey(const std::string &text, MatmulProblem &problem) {
    char type[8], ops[4], epilogue[16];
    long long v[6], b[4] = {1, 0, 0, 0};
    int used = 0;
    const bool batched = text.find(" batch") != std::string::npos;
    if ((batched ? std::sscanf(text.c_str(),
                               "gemm %7s %3s m%lld n%lld k%lld lda%lld ldb%lld ldc%lld "
                               "batch%lld sa%lld sb%lld sc%lld epilogue=%15s%n",
                               type, ops, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &b[0], &b[1],
                               &b[2], &b[3], epilogue, &used) != 13
                 : std::sscanf(text.c_str(),
                               "gemm %7s %3s m%lld n%lld k%lld lda%lld ldb%lld ldc%lld "
                               "epilogue=%15s%n",
                               type, ops, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], epilogue,
                               &used) != 9) ||
        used != int(text.size()) || std::strlen(ops) != 2)
      return false;
    int t = std::strcmp(type, "f32") == 0    ? 0
            : std::strcmp(type, "bf16") == 0 ? 1
            : std::strcmp(type, "f16") == 0  ? 2
                                             : -1;
    if (t < 0)
      return false;
    // The activation is the name less a "_bias"; "bias" alone is a bias
    // without one. key() must give the text back ("default_bias" does not).
    std::string name = epilogue;
    const bool bias = name == "bias" || (name.size() > 5 && name.rfind("_bias") == name.size() - 5);
    if (bias)
      name = name == "bias" ? "none" : name.substr(0, name.size() - 5);
    MatmulActivation activation = MatmulActivation::none;
    bool known = name == "default" || name == "none";
    for (MatmulActivation a :
         {MatmulActivation::relu, MatmulActivation::gelu, MatmulActivation::gelu_aux})
      if (name == matmulActivationName(a)) {
        activation = a;
        known = true;
      }
    if (!known)
      return false;
    problem = MatmulProblem{MatmulType(t), ops[0] == 't', ops[1] == 't', v[0], v[1], v[2],
                            v[3], v[4], v[5], bias, activation}
                  .batched(b[0], b[1], b[2], b[3]);
    return problem.key() == text && problem.m > 0 && problem.n > 0 && problem.k > 0 &&
           problem.batch >= 1 && problem.strideA >= 0 && problem.strideB >= 0 &&
           (problem.strideC > 0) == (problem.batch > 1);
  }

  bool operator==(const MatmulProblem &o) const { return key() == o.key(); }
};

/// One cuBLASLt algorithm with its configuration: the attributes
/// cublasLtMatmulAlgoConfigSetAttribute sets (cuBLASLt's own numbering).
/// cublasLtMatmulAlgoInit of `id` and these rebuild it on any GPU whose
/// cuBLASLt offers it; cublasLtMatmulAlgoCheck says whether it does.
struct MatmulAlgo {
  int32_t id = -1;         ///< CUBLASLT_ALGO_CONFIG_ID
  uint32_t tile = 0;       ///< CUBLASLT_ALGO_CONFIG_TILE_ID
  uint32_t stages = 0;     ///< CUBLASLT_ALGO_CONFIG_STAGES_ID
  int32_t splitK = 1;      ///< CUBLASLT_ALGO_CONFIG_SPLITK_NUM
  uint32_t reduction = 0;  ///< CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME
  uint32_t swizzle = 0;    ///< CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING
  uint32_t custom = 0;     ///< CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION
  uint32_t inner = 0;      ///< CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID (uint16_t)
  uint32_t cluster = 0;    ///< CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID (uint16_t)

  /// "algo21_tile18_stages8_splitk1_reduction0_swizzle0_custom0_inner0_cluster0".
  std::string name() const {
    return "algo" + std::to_string(id) + "_tile" + std::to_string(tile) + "_stages" +
           std::to_string(stages) + "_splitk" + std::to_string(splitK) + "_reduction" +
           std::to_string(reduction) + "_swizzle" + std::to_string(swizzle) + "_custom" +
           std::to_string(custom) + "_inner" + std::to_string(inner) + "_cluster" +
           std::to_string(cluster);
  }

  /// Reads a name() back. False if `text` has another form.
  static bool fromName(const std::string &text, MatmulAlgo &algo) {
    long long v[9];
    int used = 0;
    if (std::sscanf(text.c_str(),
                    "algo%lld_tile%lld_stages%lld_splitk%lld_reduction%lld_swizzle%lld_"
                    "custom%lld_inner%lld_cluster%lld%n",
                    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
                    &used) != 9 ||
        used != int(text.size()))
      return false;
    for (long long x : v)
      if (x < 0 || x > 0x7fffffff)
        return false;
    algo = MatmulAlgo{int32_t(v[0]), uint32_t(v[1]), uint32_t(v[2]), int32_t(v[3]),
                      uint32_t(v[4]), uint32_t(v[5]), uint32_t(v[6]), uint32_t(v[7]),
                      uint32_t(v[8])};
    return algo.splitK >= 1 && algo.inner <= 0xffff && algo.cluster <= 0xffff &&
           algo.name() == text;
  }
};

/// "13.1.0" for cuBLASLt's version 130100 (cublasLtGetVersion()).
inline std::string cublasLtVersionName(int64_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_MATMULPROBLEM_H
