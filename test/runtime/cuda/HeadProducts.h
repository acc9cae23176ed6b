//===- HeadProducts.h - Attention head products against the cpu's ----------===//
//
// What the emulated cuBLASLt (EmulatedAttentionTest.cpp) and the fallback
// kernel (EmulatedMatmulFallbackTest.cpp) both check: the three head
// products of AttentionProducts.h against the cpu's per-head gemm on strided
// views, as runtime/kernels/Attention.h calls it.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TEST_RUNTIME_CUDA_HEADPRODUCTS_H
#define TCC_TEST_RUNTIME_CUDA_HEADPRODUCTS_H

#include "runtime/cuda/AttentionProducts.h"
#include "runtime/kernels/Attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tcc::test {

/// Every element within `tolerance` of the host's largest magnitude: the
/// sums of another order are a few roundings apart, a wrong index, mask or
/// stride off by order 1.
inline void expectClose(const std::vector<float> &device, const std::vector<float> &host,
                        const char *what, double tolerance = 1e-5) {
  ASSERT_EQ(device.size(), host.size()) << what;
  double scale = 0;
  for (float x : host)
    scale = std::max(scale, std::fabs(double(x)));
  for (size_t i = 0; i < host.size(); ++i)
    ASSERT_LE(std::fabs(double(device[i]) - double(host[i])), tolerance * scale)
        << what << "[" << i << "]: device " << device[i] << ", cpu " << host[i];
}

/// For each head width of `s` (d, dv): random rows x [n, tq, H*width], y [n,
/// tk, H*width] and scores m [n*H, tq, tk] (`random(count, seed)`); `run`
/// (product, a, b, count) -> c computes S = X Y^T, M Y and M^T X, each
/// checked against the cpu's gemm per sample and head.
template <class Run, class Random>
void expectHeadProducts(const rt::kernels::AttentionShape &s, Run run, Random random) {
  const int64_t H = s.heads, scores = s.n * H * s.tq * s.tk;
  for (int64_t width : {s.d, s.dv}) {
    SCOPED_TRACE(testing::Message() << "width " << width);
    const std::vector<float> x = random(size_t(s.n * s.tq * H * width), 11u),
                             y = random(size_t(s.n * s.tk * H * width), 12u),
                             m = random(size_t(scores), 13u);
    std::vector<float> expectS(static_cast<size_t>(scores)), expectMix(x.size()),
        expectMixT(y.size());
    for (int64_t b = 0; b < s.n; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const float *xh = x.data() + b * s.tq * H * width + h * width;
        const float *yh = y.data() + b * s.tk * H * width + h * width;
        const float *mh = m.data() + (b * H + h) * s.tq * s.tk;
        rt::kernels::detail::gemm(s.tq, s.tk, width, xh, H * width, 1, yh, 1, H * width,
                                  expectS.data() + (b * H + h) * s.tq * s.tk, s.tk);
        rt::kernels::detail::gemm(s.tq, width, s.tk, mh, s.tk, 1, yh, H * width, 1,
                                  expectMix.data() + b * s.tq * H * width + h * width,
                                  H * width);
        rt::kernels::detail::gemm(s.tk, width, s.tq, mh, 1, s.tk, xh, H * width, 1,
                                  expectMixT.data() + b * s.tk * H * width + h * width,
                                  H * width);
      }
    expectClose(run(cuda::attentionScores(s, width), y, x, size_t(scores)), expectS, "scores");
    expectClose(run(cuda::attentionMix(s, width), y, m, x.size()), expectMix, "mix");
    expectClose(run(cuda::attentionMixTransposed(s, width), x, m, y.size()), expectMixT,
                "mix transposed");
  }
}

} // namespace tcc::test

#endif // TCC_TEST_RUNTIME_CUDA_HEADPRODUCTS_H
