//===- Matmul.cuh - Linear layers through cuBLASLt ---------------*- CUDA -*-===//
//
// The three matmuls of a linear layer (forward with its bias, and the ReLU
// or tanh GELU of a matmul_epilogue fusion group, as cuBLASLt's epilogue,
// backward-data, backward-weight), on f32, bf16 or f16 tensors
// (all operands of one matmul in one type, as tcc-precision assigns them),
// each posed as a runtime/cuda/MatmulProblem.h and run with f32 compute
// (runtime/cuda/MatmulLt.h); and the strided batched products of tcc.matmul
// and of the attention's heads (product(), runtime/cuda/AttentionProducts.h).
//
// Each matmul op has its own workspace in the memory plan (docs/cuda.md,
// "Memory"). A problem's algorithm is the one a tuning file measured, when
// the trainer was compiled with one (`tcc tune`, docs/tuning.md): init()
// rebuilds those before the first step and stops the trainer when one does
// not run here. Any other problem's algorithm is cuBLASLt's heuristic's
// first for this GPU, chosen at the problem's first call (inside the
// captured step: host work only, nothing is enqueued). A problem the
// heuristic offers no algorithm for runs as a plain tiled kernel
// (MatmulFallback.cuh), with one warning per problem.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH

#include "runtime/CompiledModel.h"
#include "runtime/common/Float16.h"
#include "runtime/cuda/BakedTarget.h"
#include "runtime/cuda/MatmulProblem.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/cuda/device/MatmulFallback.cuh"
#include "runtime/kernels/Activation.h"

#ifndef TCC_CUDA_HOST_EMULATION
#include "runtime/cuda/MatmulLt.h"
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tcc::rt::cuda {

#ifndef TCC_CUDA_HOST_EMULATION
inline void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt: ") + what + ": " +
                             cublasLtGetStatusName(status));
}
#endif

class Matmul {
public:
  using Type = ::tcc::cuda::MatmulType;
  using Problem = ::tcc::cuda::MatmulProblem;
  using Activation = ::tcc::cuda::MatmulActivation;

  // Each with the op's workspace in the memory plan (ws, wsBytes).

  /// y[M, N] = x[M, K] w[N, K]^T + bias[N] (bias may be null), then a
  /// matmul_epilogue group's activation: ReLU, or GELU (tanh), which with
  /// gelu_aux also stores its input, the linear's result, into aux[M, N].
  void linear_forward(cudaStream_t s, Type type, int64_t M, int64_t K, int64_t N,
                      const void *x, const void *w, const void *bias, void *y, void *ws,
                      int64_t wsBytes, Activation activation = Activation::none,
                      void *aux = nullptr) {
    if ((activation == Activation::gelu_aux) != (aux != nullptr))
      throw std::runtime_error("a GELU_AUX matmul without its auxiliary output, or one "
                               "given to another epilogue");
    run(s, Problem::linearForward(type, M, K, N, bias != nullptr, activation), w, x, y, bias,
        ws, wsBytes, aux);
  }
  /// dx[M, K] = dy[M, N] w[N, K].
  void linear_backward_data(cudaStream_t s, Type type, int64_t M, int64_t K, int64_t N,
                            const void *dy, const void *w, void *dx, void *ws, int64_t wsBytes) {
    run(s, Problem::linearBackwardData(type, M, K, N), w, dy, dx, nullptr, ws, wsBytes);
  }
  /// dw[N, K] = dy[M, N]^T x[M, K].
  void linear_backward_weight(cudaStream_t s, Type type, int64_t M, int64_t K, int64_t N,
                              const void *dy, const void *x, void *dw, void *ws,
                              int64_t wsBytes) {
    run(s, Problem::linearBackwardWeight(type, M, K, N), x, dy, dw, nullptr, ws, wsBytes);
  }
  /// tcc.matmul: out = op(lhs) op(rhs), `batch` row-major [M, N] results of
  /// contiguous operands (MatmulProblem::batchedProduct poses it).
  void batched_matmul(cudaStream_t s, Type type, int64_t batch, int64_t M, int64_t N,
                      int64_t K, bool transA, bool transB, const void *lhs, const void *rhs,
                      void *out, void *ws, int64_t wsBytes) {
    run(s, Problem::batchedProduct(type, batch, M, N, K, transA, transB), rhs, lhs, out,
        nullptr, ws, wsBytes);
  }
  /// `count` products C = op(A) op(B) of `p` (no bias, no activation,
  /// batched as it says), the i-th with A, B and C moved on by i times
  /// stepA, stepB, stepC elements: an attention's head products, one
  /// launch per head or per sample (AttentionProducts.h).
  void products(cudaStream_t s, const Problem &p, int64_t count, int64_t stepA, int64_t stepB,
                int64_t stepC, const void *A, const void *B, void *C, void *ws,
                int64_t wsBytes) {
#ifdef TCC_CUDA_HOST_EMULATION
    if (noAlgorithm(p)) {
      for (int64_t i = 0; i < count; ++i)
        run(s, p, at(p.type, A, i * stepA), at(p.type, B, i * stepB), at(p.type, C, i * stepC),
            nullptr, ws, wsBytes);
      return;
    }
    // One enqueue: the workspace scribbled over once, not once per launch
    // (32 MiB each on Hopper: most of an attention's emulated time).
    emulation::enqueue(s, [=] {
      emulation::scribble(ws, wsBytes);
      for (int64_t i = 0; i < count; ++i)
        compute(p, at(p.type, A, i * stepA), at(p.type, B, i * stepB),
                at(p.type, C, i * stepC), nullptr, nullptr);
    });
#else
    for (int64_t i = 0; i < count; ++i)
      run(s, p, at(p.type, A, i * stepA), at(p.type, B, i * stepB),
          at(p.type, C, i * stepC), nullptr, ws, wsBytes);
#endif
  }

  /// The problems that ran as the fallback kernel, by key: one warning each.
  const std::set<std::string> &fallbacks() const { return warned; }

  /// `p` moved on by `elements` of `type`.
  template <class P> static P *at(Type type, P *p, int64_t elements) {
    using Byte = std::conditional_t<std::is_const_v<P>, const char, char>;
    return reinterpret_cast<P *>(reinterpret_cast<Byte *>(p) +
                                 elements * (type == Type::f32 ? 4 : 2));
  }

#ifdef TCC_CUDA_HOST_EMULATION
  /// Checks the baked table's rows: no cuBLASLt to rebuild them with.
  void init(const ::tcc::cuda::BakedTarget &target) {
    for (int i = 0; i < target.matmulCount; ++i) {
      Problem problem;
      ::tcc::cuda::MatmulAlgo algo;
      if (!Problem::fromKey(target.matmuls[i].problem, problem) ||
          !::tcc::cuda::MatmulAlgo::fromName(target.matmuls[i].algo, algo))
        throw std::runtime_error(std::string("the baked matmul table is damaged at [") +
                                 target.matmuls[i].problem + "]");
    }
  }

private:
  /// Whether the test hook TCC_TEST_MATMUL_NO_ALGO (emulated builds only)
  /// says cuBLASLt has no algorithm for `p`: for the problems whose key
  /// contains its value ("gemm": all). Those run the fallback kernel.
  bool noAlgorithm(const Problem &p) {
    const char *forced = std::getenv("TCC_TEST_MATMUL_NO_ALGO");
    if (!forced || !*forced || p.key().find(forced) == std::string::npos)
      return false;
    warnFallback(p.key());
    return true;
  }

  /// cuBLASLt's definition, in double (HostEmulation.h), rounded once to
  /// the problem's type (through f32, which changes no 16-bit result but a
  /// tie); the workspace is scribbled over, as cuBLASLt may.
  void run(cudaStream_t stream, const Problem &p, const void *A, const void *B, void *C,
           const void *bias, void *workspace, int64_t workspaceBytes, void *aux = nullptr) {
    if (noAlgorithm(p))
      return fallback::gemm(stream, p, A, B, C, bias, aux);
    emulation::enqueue(stream, [=] {
      emulation::scribble(workspace, workspaceBytes);
      compute(p, A, B, C, bias, aux);
    });
  }

  /// The product itself, on the host.
  static void compute(const Problem &p, const void *A, const void *B, void *C,
                      const void *bias, void *aux) {
    // The operands in double, each row of op(A) and column of op(B)
    // contiguous; a thread per column of C, each element's sum in order
    // of l: the same bits on any number of threads (threads only for a
    // large product: the attention's per-head ones are small and many).
    // A batch's products one after another, each at its strides.
    const int64_t m = p.m, n = p.n, k = p.k;
    const bool large = m * n * k >= (int64_t(1) << 18);
    std::vector<double> a(size_t(m * k)), b(size_t(k * n));
    for (int64_t q = 0; q < p.batch; ++q) {
      const int64_t offA = q * p.strideA, offB = q * p.strideB, offC = q * p.strideC;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l)
          a[size_t(i * k + l)] =
              load(p.type, A, offA + (p.transA ? i * p.lda + l : l * p.lda + i));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          b[size_t(j * k + l)] =
              load(p.type, B, offB + (p.transB ? l * p.ldb + j : j * p.ldb + l));
#pragma omp parallel for if (large)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          double sum = 0;
          const double *row = a.data() + i * k, *column = b.data() + j * k;
          for (int64_t l = 0; l < k; ++l)
            sum += row[l] * column[l];
          if (bias)
            sum += load(p.type, bias, i);
          if (p.activation == Activation::relu && !(sum > 0) &&
              sum == sum) // kernels::Relu: NaN stays
            sum = 0;
          if (p.activation == Activation::gelu || p.activation == Activation::gelu_aux) {
            // On the f32 result, as the cpu step applies its GELU to the
            // stored linear result (matmul_epilogue groups are f32).
            const float linear = float(sum);
            if (aux)
              store(p.type, aux, j * p.ldc + i, linear);
            sum = kernels::GeluTanh<float>{}(linear);
          }
          store(p.type, C, offC + j * p.ldc + i, float(sum));
        }
    }
  }

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
#else
  ~Matmul() {
    if (handle)
      cublasLtDestroy(handle);
  }

  /// Starts cuBLASLt and rebuilds the algorithms `target` bakes (a tuning
  /// file's) on this GPU. Throws ModelSetupError naming the matmul, the
  /// algorithm and the fix when one does not run here; with
  /// target.allowFallback, the heuristic chooses for it instead, with a
  /// warning.
  void init(const ::tcc::cuda::BakedTarget &target) {
    check(cublasLtCreate(&handle), "cublasLtCreate");
    if (target.matmulCount == 0)
      return;
    using ::tcc::cuda::cublasLtVersionName;
    const std::string fix = "run 'tcc tune' on this GPU and recompile with its tuning file, or "
                            "compile with --allow-fallback to let cuBLASLt's heuristic choose";
    const int64_t version = int64_t(cublasLtGetVersion());
    if (version != target.cublasLtVersion) {
      std::string message = "this trainer's matmul algorithms were measured with cuBLASLt " +
                            cublasLtVersionName(target.cublasLtVersion) + ", but cuBLASLt " +
                            cublasLtVersionName(version) + " is loaded";
      if (!target.allowFallback)
        throw ModelSetupError(message + "; " + fix);
      std::cerr << "warning: " << message
                << "; algorithms that do not run are replaced (--allow-fallback)\n";
    }
    const int64_t usable = ::tcc::cuda::matmulUsableWorkspaceBytes(target.sm);
    for (int i = 0; i < target.matmulCount; ++i) {
      const ::tcc::cuda::BakedMatmul &row = target.matmuls[i];
      Problem problem;
      ::tcc::cuda::MatmulAlgo config;
      if (!Problem::fromKey(row.problem, problem) ||
          !::tcc::cuda::MatmulAlgo::fromName(row.algo, config))
        throw std::runtime_error(std::string("the baked matmul table is damaged at [") +
                                 row.problem + "]");
      Plan plan;
      check(::tcc::cuda::describeMatmul(problem, plan.d), "describing a matmul");
      size_t needed = 0;
      cublasStatus_t status = ::tcc::cuda::rebuildAlgo(handle, plan.d, config, plan.algo, needed);
      std::string why = status != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusName(status)
                        : int64_t(needed) > usable
                            ? "it needs a workspace of " + std::to_string(needed) +
                                  " bytes, over the " + std::to_string(usable) + " it has"
                            : "";
      if (why.empty()) {
        baked.emplace(problem.key(), std::move(plan));
        continue;
      }
      std::string message = std::string("the matmul of ") + row.nodes + " [" + row.problem +
                            "]: cuBLASLt " + cublasLtVersionName(version) +
                            " cannot run its algorithm " + row.algo + ", measured on the " +
                            target.gpu + ", here (" + why + ")";
      if (!target.allowFallback)
        throw ModelSetupError(message + "; " + fix);
      std::cerr << "warning: " << message
                << "; cuBLASLt's heuristic chooses instead (--allow-fallback)\n";
    }
  }

private:
  struct Plan {
    ::tcc::cuda::MatmulDescriptors d;
    cublasLtMatmulAlgo_t algo{};
    bool fallback = false; ///< no algorithm: MatmulFallback.cuh's kernel
  };

  /// Enqueues C (+)= op(A) op(B) (+ bias, the activation; its input into
  /// aux with gelu_aux) of `p` on `stream`.
  void run(cudaStream_t stream, const Problem &p, const void *A, const void *B, void *C,
           const void *bias, void *workspace, int64_t workspaceBytes, void *aux = nullptr) {
    // cuBLASLt wants a 256-byte aligned workspace; the memory plan aligns to
    // 64: the first bytes up to 256 are left unused.
    const int64_t skip = int64_t(-reinterpret_cast<uintptr_t>(workspace) & 255);
    workspace = static_cast<char *>(workspace) + skip;
    workspaceBytes = std::max<int64_t>(0, workspaceBytes - skip);
    const int64_t alignment = std::min({alignmentOf(A), alignmentOf(B), alignmentOf(C)});
    Plan &plan = planOf(p, workspaceBytes, alignment);
    if (plan.fallback)
      return fallback::gemm(stream, p, A, B, C, bias, aux);
    if (bias)
      check(cublasLtMatmulDescSetAttribute(plan.d.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                           &bias, sizeof(bias)),
            "setting the bias");
    if (aux)
      check(cublasLtMatmulDescSetAttribute(plan.d.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                           &aux, sizeof(aux)),
            "setting GELU_AUX's output");
    const float one = 1.0f, zero = 0.0f;
    check(cublasLtMatmul(handle, plan.d.desc, &one, A, plan.d.layouts[0], B, plan.d.layouts[1],
                         &zero, C, plan.d.layouts[2], C, plan.d.layouts[2], &plan.algo,
                         workspace, size_t(workspaceBytes), stream),
          "cublasLtMatmul");
  }

  /// The plan of a call: its problem, workspace and operands' alignment
  /// (found without building a string: eval steps are launched, not
  /// replayed, so this runs at every call of theirs).
  using Key = std::tuple<Type, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         bool, int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

  /// The plan of `p`, chosen at its first call (chooseFor).
  Plan &planOf(const Problem &p, int64_t workspaceBytes, int64_t alignment) {
    const Key call{p.type,    p.transA,          p.transB,       p.m,       p.n,
                   p.k,       p.lda,             p.ldb,          p.ldc,     p.bias,
                   int(p.activation), workspaceBytes, alignment, p.batch, p.strideA,
                   p.strideB, p.strideC};
    auto it = plans.find(call);
    if (it == plans.end())
      it = plans.emplace(call, &chooseFor(p, workspaceBytes, alignment)).first;
    return *it->second;
  }

  /// The baked algorithm of `p` (its operands are aligned as the tuner's
  /// were), else the heuristic's first for this workspace and alignment.
  Plan &chooseFor(const Problem &p, int64_t workspaceBytes, int64_t alignment) {
    const std::string key = p.key();
    auto tuned = baked.find(key);
    if (tuned != baked.end() && alignment >= ::tcc::cuda::kMatmulOperandAlignment)
      return tuned->second;
    Plan plan;
    check(::tcc::cuda::describeMatmul(p, plan.d), "describing a matmul");
    std::vector<cublasLtMatmulHeuristicResult_t> results;
    // No algorithm is an empty answer or NOT_SUPPORTED, by cuBLASLt version.
    const cublasStatus_t status =
        ::tcc::cuda::heuristicAlgos(handle, plan.d, workspaceBytes, alignment, 1, results);
    if (status != CUBLAS_STATUS_NOT_SUPPORTED)
      check(status, "choosing a matmul algorithm");
    if (results.empty()) {
      warnFallback(key);
      plan.fallback = true;
    } else {
      plan.algo = results[0].algo;
    }
    return chosen.emplace_back(std::move(plan));
  }

  /// The largest power of two up to 256 that divides the address.
  static int64_t alignmentOf(const void *p) {
    int64_t alignment = 256;
    while (alignment > 1 && reinterpret_cast<uintptr_t>(p) % alignment)
      alignment /= 2;
    return alignment;
  }

  cublasLtHandle_t handle = nullptr;
  std::map<std::string, Plan> baked; ///< by problem key: the tuning file's
  std::deque<Plan> chosen;           ///< the heuristic's
  std::map<Key, Plan *> plans;       ///< every call's, baked or chosen
#endif

  /// One warning line per distinct problem, at its first call (host work:
  /// while the step is captured, once).
  void warnFallback(const std::string &key) {
    if (warned.insert(key).second)
      std::cerr << "warning: cuBLASLt has no algorithm for the matmul [" << key
                << "]: a simple tiled kernel runs it instead, slower than cuBLASLt\n";
  }

  std::set<std::string> warned; ///< the problems the fallback kernel runs
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_MATMUL_CUH
