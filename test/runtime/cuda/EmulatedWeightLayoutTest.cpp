//===- EmulatedWeightLayoutTest.cpp - A conv weight to KRSC and back ------===//
//
// runtime/cuda/device/WeightLayout.cuh under host emulation: weight_to_krsc
// puts element (k, c, r, s) of a KCRS weight where a KRSC weight keeps it,
// and weight_from_krsc undoes it (what CUTLASS's filter gradient goes
// through, CutlassConv.cuh), for a 3x3, a 1x1 and a 2x2 kernel.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/cuda/device/HostEmulation.h"
#include "runtime/cuda/device/WeightLayout.cuh"

#include <gtest/gtest.h>

#include <vector>

using namespace tcc;

TEST(WeightLayoutOnDevice, KrscPlacesEachElementAndFromKrscUndoesIt) {
  struct Shape { int64_t k, c, r, s; };
  for (Shape shape : {Shape{64, 24, 3, 3}, Shape{8, 16, 1, 1}, Shape{24, 8, 2, 2}}) {
    const int64_t rs = shape.r * shape.s, total = shape.k * shape.c * rs;
    std::vector<uint16_t> kcrs(static_cast<size_t>(total)), krsc(kcrs.size()), back(kcrs.size());
    for (int64_t i = 0; i < total; ++i)
      kcrs[size_t(i)] = uint16_t(i * 7 + 3); // distinct bits for each element
    cudaStream_t stream = nullptr;
    rt::cuda::weight_to_krsc(stream, shape.k, shape.c, rs, kcrs.data(), krsc.data());
    for (int64_t k = 0; k < shape.k; ++k)
      for (int64_t c = 0; c < shape.c; ++c)
        for (int64_t tap = 0; tap < rs; ++tap)
          ASSERT_EQ(krsc[size_t((k * rs + tap) * shape.c + c)],
                    kcrs[size_t((k * shape.c + c) * rs + tap)])
              << "k" << k << " c" << c << " tap" << tap;
    rt::cuda::weight_from_krsc(stream, shape.k, shape.c, rs, krsc.data(), back.data());
    EXPECT_EQ(back, kcrs);
  }
}
