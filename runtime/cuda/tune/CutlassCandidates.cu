//===- CutlassCandidates.cu - The CUTLASS kernels tcc-tune-cutlass times --===//
//
// One direction and type per compilation (TCC_CUTLASS_DIRECTION: Forward,
// BackwardData, BackwardFilter; TCC_CUTLASS_TYPE: Float16, BFloat16), so
// that the build compiles them side by side: each kernel takes nvcc about
// 35 s. The tiles: three of those CUTLASS's own sm90 convolution tests
// cover, and a shallower one for thin layers; with TCC_CUTLASS_SMOKE only
// the first, for the build test in CI (test/runtime/cuda/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CutlassTuner.h"
#include "runtime/cuda/device/CutlassConv.cuh"

namespace {

using namespace tcc::cuda;

constexpr ConvDirection kDirection = ConvDirection::TCC_CUTLASS_DIRECTION;
constexpr ConvDataType kType = ConvDataType::TCC_CUTLASS_TYPE;

template <int M, int N, int K, int ClusterM>
CutlassCandidate candidate() {
  using Kernel = cutlass_conv::Kernel<kDirection, kType, M, N, K, ClusterM>;
  static const char *const directions[] = {"fprop", "dgrad", "wgrad"};
  std::string name = std::string("cutlass_sm90_") +
                     (kType == ConvDataType::Float16 ? "f16_" : "bf16_") +
                     directions[int(kDirection)] + "_" + std::to_string(M) + "x" +
                     std::to_string(N) + "x" + std::to_string(K) + "_c" +
                     std::to_string(ClusterM);
  return {name, kDirection, kType, &Kernel::unsupported, &Kernel::workspaceBytes, &Kernel::bind};
}

[[maybe_unused]] const bool registered = registerCutlassCandidates({
    candidate<128, 64, 64, 1>(),
#ifndef TCC_CUTLASS_SMOKE
    candidate<64, 64, 64, 1>(),
    candidate<128, 128, 64, 1>(),
    // A reduction tile of 32: a thin layer's 24 channels fill 75% of it,
    // 38% of a 64-wide one.
    candidate<128, 64, 32, 1>(),
#endif
});

} // namespace
