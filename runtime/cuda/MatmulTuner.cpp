//===- MatmulTuner.cpp - cuBLASLt algorithms measured on the GPU ----------===//

#include "runtime/cuda/MatmulTuner.h"

#include "runtime/cuda/MatmulLt.h"
#include "runtime/cuda/TuneTiming.h"

#include <algorithm>

namespace tcc::cuda {

namespace {

/// The most algorithms asked of the heuristic: it ranks 20 to 40 for most
/// shapes.
constexpr int kMostCandidates = 64;

struct Handle {
  cublasLtHandle_t handle = nullptr;
  ~Handle() {
    if (handle)
      cublasLtDestroy(handle);
  }
};

} // namespace

int64_t cublasLtVersion() { return int64_t(cublasLtGetVersion()); }

bool timeMatmulAlgos(const MatmulProblem &p, int64_t workspaceLimit, int repeats,
                     int maxCandidates, MatmulTiming &timing, std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "the matmul [" + p.key() + "]: " + why;
    return false;
  };
  Handle lt;
  MatmulDescriptors d;
  std::vector<cublasLtMatmulHeuristicResult_t> offered;
  cublasStatus_t status = cublasLtCreate(&lt.handle);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = describeMatmul(p, d);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = heuristicAlgos(lt.handle, d, workspaceLimit, kMatmulOperandAlignment,
                            maxCandidates > 0 ? std::min(maxCandidates, kMostCandidates)
                                              : kMostCandidates,
                            offered);
  if (status != CUBLAS_STATUS_SUCCESS)
    return fail(std::string("cuBLASLt: ") + cublasLtGetStatusName(status));
  timing.offered = int(offered.size());

  // The operands as the trainer has them: aligned to 64 bytes and no more
  // (a 256-byte aligned allocation, from byte 64 on), as many bytes as the
  // leading dimensions span.
  const TimedType type = p.type == MatmulType::f32    ? TimedType::f32
                         : p.type == MatmulType::bf16 ? TimedType::bf16
                                                      : TimedType::f16;
  // A, B, C, the bias, GELU_AUX's output (laid out as C); a batch's last
  // matrix starts (batch - 1) strides on.
  const int64_t last = p.batch - 1;
  const int64_t counts[] = {p.lda * (p.transA ? p.m : p.k) + last * p.strideA,
                            p.ldb * (p.transB ? p.k : p.n) + last * p.strideB,
                            p.ldc * p.n + last * p.strideC, p.m, p.ldc * p.n};
  const int64_t offset = kMatmulOperandAlignment;
  DeviceBuffer buffers[5], workspace;
  for (int i = 0; i < 5; ++i)
    if (!buffers[i].allocate(offset + counts[i] * bytesOf(type)) ||
        !buffers[i].fillRandom(counts[i], type, uint32_t(i + 1), offset))
      return fail("cannot allocate its operands on the GPU");
  if (!workspace.allocate(workspaceLimit))
    return fail("cannot allocate a workspace of " + std::to_string(workspaceLimit) + " bytes");
  auto at = [&](int i) { return static_cast<char *>(buffers[i].data) + offset; };
  const void *bias = at(3);
  if (p.bias &&
      cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                     sizeof(bias)) != CUBLAS_STATUS_SUCCESS)
    return fail("cuBLASLt does not take its bias");
  const void *aux = at(4);
  if (p.activation == MatmulActivation::gelu_aux &&
      cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                                     sizeof(aux)) != CUBLAS_STATUS_SUCCESS)
    return fail("cuBLASLt does not take GELU_AUX's output");

  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
    return fail("cannot create a CUDA stream");
  Events events;
  for (size_t rank = 0; rank < offered.size(); ++rank) {
    // What is timed is the algorithm rebuilt from its written-down
    // configuration: what the trainer will run.
    const MatmulAlgo config = configOf(offered[rank].algo);
    cublasLtMatmulAlgo_t algo;
    size_t needed = 0;
    status = rebuildAlgo(lt.handle, d, config, algo, needed);
    if (status != CUBLAS_STATUS_SUCCESS || int64_t(needed) > workspaceLimit) {
      timing.failures.push_back(config.name() + ": " +
                                (status != CUBLAS_STATUS_SUCCESS
                                     ? std::string("it does not rebuild from its "
                                                   "configuration (") +
                                           cublasLtGetStatusName(status) + ")"
                                     : "it needs more workspace rebuilt"));
      continue;
    }
    const float one = 1.0f, zero = 0.0f;
    auto execute = [&] {
      return cublasLtMatmul(lt.handle, d.desc, &one, at(0), d.layouts[0], at(1), d.layouts[1],
                            &zero, at(2), d.layouts[2], at(2), d.layouts[2], &algo,
                            workspace.data, needed, stream) == CUBLAS_STATUS_SUCCESS;
    };
    double median = 0;
    std::string failure;
    if (!timeCandidate(stream, events, repeats, execute, median, failure)) {
      timing.failures.push_back(config.name() + ": " + failure);
      continue;
    }
    timing.timed.push_back({config, int64_t(needed), int(rank), median});
  }
  cudaStreamDestroy(stream);
  if (timing.timed.empty())
    return fail("none of the " + std::to_string(offered.size()) +
                " algorithms cuBLASLt offered ran on this GPU");
  std::stable_sort(timing.timed.begin(), timing.timed.end(),
                   [](const TimedMatmulAlgo &a, const TimedMatmulAlgo &b) {
                     return a.microseconds < b.microseconds;
                   });
  return true;
}

} // namespace tcc::cuda
