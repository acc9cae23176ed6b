//===- CutlassCandidates.cu - The CUTLASS kernels tcc-tune-cutlass times --===//
//
// One direction and type per compilation (TCC_CUTLASS_DIRECTION: Forward,
// BackwardData, BackwardFilter; TCC_CUTLASS_TYPE: Float16, BFloat16), so
// that the build compiles them side by side: about 30 s of nvcc for
// CUTLASS's headers, then 15 s per kernel. The tiles are runtime/cuda/CutlassKernel.h's; with TCC_CUTLASS_SMOKE
// only the first, for the build test in CI (test/runtime/cuda/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CutlassTuner.h"
#include "runtime/cuda/device/CutlassConv.cuh"

#include <iterator>
#include <utility>

namespace {

using namespace tcc::cuda;

constexpr ConvDirection kDirection = ConvDirection::TCC_CUTLASS_DIRECTION;
constexpr ConvDataType kType = ConvDataType::TCC_CUTLASS_TYPE;

/// Every tile of kCutlassTiles (only the first with TCC_CUTLASS_SMOKE).
template <size_t... I> std::vector<CutlassCandidate> candidates(std::index_sequence<I...>) {
  auto one = [](auto index) {
    constexpr CutlassTile t = kCutlassTiles[decltype(index)::value];
    using Kernel = cutlass_conv::Kernel<kDirection, kType, t.m, t.n, t.k, t.clusterM>;
    return CutlassCandidate{CutlassKernel{kDirection, kType, t}, &Kernel::unsupported,
                            &Kernel::workspaceBytes, &Kernel::bind};
  };
  return {one(std::integral_constant<size_t, I>{})...};
}

#ifdef TCC_CUTLASS_SMOKE
constexpr size_t kCount = 1;
#else
constexpr size_t kCount = std::size(kCutlassTiles);
#endif
[[maybe_unused]] const bool registered =
    registerCutlassCandidates(candidates(std::make_index_sequence<kCount>{}));

} // namespace
