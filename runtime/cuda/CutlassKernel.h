//===- CutlassKernel.h - A CUTLASS convolution kernel by name ---*- C++ -*-===//
//
// The CUTLASS convolutions tcc instantiates (runtime/cuda/device/
// CutlassConv.cuh) are named by what selects their template:
// "cutlass_sm90_f16_fprop_128x64x64_c1" is the sm_90a kernel for an fp16
// forward convolution, CTA tile 128 x 64 x 64 (M x N x K), one CTA per
// cluster. tcc-tune-cutlass times them under these names; a tuning file
// records them, and `tcc compile --tuning-db` bakes one where it was
// measured faster than cuDNN's engines (docs/tuning.md, "CUTLASS"). Plain
// C++: no CUDA, no CUTLASS.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CUTLASSKERNEL_H
#define TCC_RUNTIME_CUDA_CUTLASSKERNEL_H

#include "runtime/cuda/ConvProblem.h"

#include <cstdio>
#include <string>

namespace tcc::cuda {

/// A CTA tile and cluster of CUTLASS's sm90 convolutions.
struct CutlassTile {
  int m, n, k, clusterM;
};

/// The tiles tcc instantiates, for each direction and 16-bit type: three
/// of those CUTLASS's own sm90 convolution tests cover, and a shallower
/// one for thin layers (24 channels fill 75% of a 32-wide reduction tile,
/// 38% of a 64-wide one). tcc-tune-cutlass times every one.
inline constexpr CutlassTile kCutlassTiles[] = {
    {128, 64, 64, 1}, {64, 64, 64, 1}, {128, 128, 64, 1}, {128, 64, 32, 1}};

struct CutlassKernel {
  ConvDirection direction = ConvDirection::Forward;
  ConvDataType dtype = ConvDataType::Float16;
  CutlassTile tile{};

  std::string name() const {
    static const char *const directions[] = {"fprop", "dgrad", "wgrad"};
    return std::string("cutlass_sm90_") +
           (dtype == ConvDataType::BFloat16 ? "bf16_" : "f16_") + directions[int(direction)] +
           "_" + std::to_string(tile.m) + "x" + std::to_string(tile.n) + "x" +
           std::to_string(tile.k) + "_c" + std::to_string(tile.clusterM);
  }

  /// Reads a name() back. False if `text` is not one, or names a tile tcc
  /// does not instantiate (kCutlassTiles).
  static bool fromName(const std::string &text, CutlassKernel &kernel) {
    char type[8], direction[8];
    CutlassTile t{};
    if (std::sscanf(text.c_str(), "cutlass_sm90_%7[^_]_%7[^_]_%dx%dx%d_c%d", type, direction,
                    &t.m, &t.n, &t.k, &t.clusterM) != 6)
      return false;
    const std::string d = direction, e = type;
    kernel.direction = d == "fprop"   ? ConvDirection::Forward
                       : d == "dgrad" ? ConvDirection::BackwardData
                                      : ConvDirection::BackwardFilter;
    kernel.dtype = e == "bf16" ? ConvDataType::BFloat16 : ConvDataType::Float16;
    kernel.tile = t;
    bool known = false;
    for (const CutlassTile &tile : kCutlassTiles)
      known |= tile.m == t.m && tile.n == t.n && tile.k == t.k && tile.clusterM == t.clusterM;
    return known && kernel.name() == text;
  }

  /// Whether it computes `problem`'s direction in its type. (Whether
  /// CUTLASS can implement the shapes is its own check, on the GPU side.)
  bool matches(const ConvProblem &problem) const {
    return problem.direction == direction && problem.dtype == dtype &&
           problem.layout == ConvLayout::NHWC && problem.epilogue == ConvEpilogue::None;
  }
};

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CUTLASSKERNEL_H
