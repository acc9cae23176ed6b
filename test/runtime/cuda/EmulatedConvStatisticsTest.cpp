//===- EmulatedConvStatisticsTest.cpp - A conv's statistics, emulated -----===//
//
// The conv_statistics group's pieces under host emulation (docs/cuda.md,
// "Batch norm statistics from the convolution"): the weight transposed to
// KRSC (WeightLayout.cuh) gives the emulated statistics convolution the
// plain convolution's y bit for bit (ConvRunnerEmulated.cpp reads it KRSC),
// its f32 sums are each channel's sums within f32 round-off, and the
// finalize turns them into the two-pass statistics a norm takes, within the
// one-pass form's cancellation.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/common/Float16.h"
#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/ConvRunner.h"
#include "runtime/cuda/device/ConvStatistics.cuh"
#include "runtime/cuda/device/HostEmulation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace tcc;

TEST(ConvStatisticsOnDevice, KrscWeightSameOutputAndItsChannelSums) {
  cuda::ConvProblem plain;
  plain.dtype = cuda::ConvDataType::Float16;
  plain.layout = cuda::ConvLayout::NHWC;
  plain.n = 3, plain.c = 8, plain.h = 5, plain.w = 5, plain.k = 16, plain.r = 3, plain.s = 3;
  plain.p = 5, plain.q = 5, plain.padH = 1, plain.padW = 1;
  cuda::ConvProblem stats = plain;
  stats.epilogue = cuda::ConvEpilogue::Statistics;
  const std::string keys[] = {plain.key(), stats.key()};
  const cuda::BakedConv rows[] = {{keys[0].c_str(), "eng0", 0, "'a'"},
                                  {keys[1].c_str(), "eng0", 64, "'a'"}};
  const cuda::BakedTarget target{"h100", 90, 91900, false, rows, 2, 0, nullptr, 0};
  cuda::ConvRunner runner;
  runner.prepare(target, nullptr);

  std::mt19937 random(7);
  // A mean well away from 0 against the spread: the one-pass form's case.
  std::normal_distribution<float> normal(0.5f, 1.0f);
  auto halves = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (uint16_t &h : v)
      h = rt::half::floatToF16(normal(random));
    return v;
  };
  const int64_t count = plain.n * plain.p * plain.q;
  std::vector<uint16_t> x = halves(size_t(plain.n * plain.c * plain.h * plain.w)),
                        w = halves(size_t(plain.k * plain.c * 9)), krsc(w.size()),
                        y(size_t(count * plain.k)), yStats(y.size());
  cudaStream_t stream = nullptr;
  rt::cuda::weight_to_krsc(stream, plain.k, plain.c, 9, w.data(), krsc.data());
  std::vector<float> sums(size_t(2 * plain.k));
  std::vector<char> workspace(64);
  runner.run(0, x.data(), w.data(), y.data(), nullptr, 0);
  runner.runWithStatistics(1, x.data(), krsc.data(), yStats.data(), sums.data(),
                           sums.data() + plain.k, workspace.data(), 64);
  EXPECT_EQ(y, yStats);
  // Each channel's sums in double, two passes: what the norm took before.
  const rt::kernels::BatchNormShape shape{count, plain.k, 1, 0, false, plain.p * plain.q};
  std::vector<double> total(size_t(plain.k)), squared(size_t(plain.k));
  rt::cuda::statistics_from_sums(stream, shape, sums.data(), sums.data() + plain.k,
                                 total.data(), squared.data());
  for (int64_t k = 0; k < plain.k; ++k) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double v = rt::half::f16ToFloat(y[size_t(i * plain.k + k)]);
      sum += v;
      squares += v * v;
    }
    const double mean = sum / double(count);
    double deviations = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double d = rt::half::f16ToFloat(y[size_t(i * plain.k + k)]) - mean;
      deviations += d * d;
    }
    SCOPED_TRACE(k);
    // f32 sums of `count` terms: within count * 2^-24 of the absolute sum.
    const double bound = double(count) * 0x1p-24 * squares;
    EXPECT_NEAR(sums[size_t(k)], sum, double(count) * 0x1p-24 * std::sqrt(squares * count));
    EXPECT_NEAR(sums[size_t(plain.k + k)], squares, bound);
    EXPECT_DOUBLE_EQ(total[size_t(k)], double(sums[size_t(k)]));
    EXPECT_NEAR(squared[size_t(k)], deviations, 3 * bound);
    EXPECT_GE(squared[size_t(k)], 0);
  }
}
