//===- FaultInjection.cuh - Wrong kernels on purpose, for the check's test -*- CUDA -*-===//
//
// The cuda-vs-cpu check (test/runtime/cuda/compare_trainers.py, run by
// scripts/gpu_check.py on a GPU and host_emulation.py here) must fail on a
// kernel that is wrong by little. Its test builds the generated step with
// -DTCC_INJECT_FAULT=<kind> (host_emulation.py --inject-fault, nowhere
// else) and expects the check to fail. No other build defines it: then
// kInjectedFault is kNoFault and every `if constexpr` on it is discarded, so
// the kernels compile exactly as without this header.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_FAULTINJECTION_CUH
#define TCC_RUNTIME_CUDA_DEVICE_FAULTINJECTION_CUH

namespace tcc::rt::cuda {

/// The faults a test build may inject (TCC_INJECT_FAULT's values).
enum FaultKind : int {
  kNoFault = 0,
  /// Batch norm backward: every dx one fp16 ulp (2^-10 of its magnitude)
  /// too large, before it is stored (Norm.cuh) — a bias of rounding size.
  kFaultBatchNormDxUlp = 1,
  /// A bias's gradient (reduce_sum_keep, StepOps.cuh) without its last
  /// sample's term.
  kFaultBiasGradDropLast = 2,
};

#ifdef TCC_INJECT_FAULT
inline constexpr int kInjectedFault = TCC_INJECT_FAULT;
#else
inline constexpr int kInjectedFault = kNoFault;
#endif

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_FAULTINJECTION_CUH
