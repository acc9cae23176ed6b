//===- FaultInjection.cuh - Wrong kernels on purpose, for the check's test -*- CUDA -*-===//
//
// The cuda-vs-cpu check (test/runtime/cuda/compare_trainers.py, run by
// scripts/gpu_check.py on a GPU and host_emulation.py here) must fail on a
// kernel that is wrong by little. Its test builds the generated step with
// -DTCC_INJECT_FAULT=<kind> (host_emulation.py --inject-fault, nowhere
// else) and expects the check to fail. No other build defines it: then it
// is 0, every hook's #if is false, and the kernels compile exactly as
// without this header.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_FAULTINJECTION_CUH
#define TCC_RUNTIME_CUDA_DEVICE_FAULTINJECTION_CUH

// The faults a test build may inject (TCC_INJECT_FAULT's values), tested
// with #if: a hook's code is not in a normal build at all (an `if constexpr`
// would still make an extended __device__ lambda capture its variables,
// which nvcc refuses inside one).
//
// Batch norm backward: every dx one fp16 ulp (2^-10 of its magnitude) too
// large, before it is stored (Norm.cuh): a bias of rounding size.
#define TCC_FAULT_BATCH_NORM_DX_ULP 1
// A bias's gradient (reduce_sum_keep, StepOps.cuh) without its last
// sample's term.
#define TCC_FAULT_BIAS_GRAD_DROP_LAST 2
// A batch norm's backward sums (batch_norm_backward_sums, SyncNorm.cuh: the
// synchronised norm's, and tcc-cuda-dgrad-statistics') without the last
// sample's terms.
#define TCC_FAULT_BN_BACKWARD_SUMS_DROP_LAST 3

#ifndef TCC_INJECT_FAULT
#define TCC_INJECT_FAULT 0
#endif

#endif // TCC_RUNTIME_CUDA_DEVICE_FAULTINJECTION_CUH
