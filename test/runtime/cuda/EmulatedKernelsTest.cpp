//===- EmulatedKernelsTest.cpp - Device kernels against the cpu's --------===//
//
// The cuda target's batch norm over many blocks per channel
// (runtime/cuda/RowSplit.h) and its multi-tensor update in one launch
// (runtime/cuda/device/MultiTensor.cuh), its max pools on 16-bit tensors
// (runtime/cuda/device/Pool.cuh) and its elementwise launches over chunks
// (runtime/cuda/device/Chunk.cuh), run under host emulation (the
// device code as plain C++, every block and thread in order), against the
// cpu kernels on shapes the test models do not reach: rows split in parts
// with a shorter last part, ghost groups (consecutive and strided) split
// too, chains of more than one block. The trainers' own emulation tests
// (host_emulation.py) cover the generated calls.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/common/Float16.h"
#include "runtime/cpu/MultiTensor.h"
#include "runtime/cuda/RowSplit.h"
#include "runtime/cuda/device/Chunk.cuh"
#include "runtime/cuda/device/MultiTensor.cuh"
#include "runtime/cuda/device/Norm.cuh"
#include "runtime/cuda/device/Pool.cuh"
#include "runtime/cuda/device/StepOps.cuh"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/Norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using tcc::cuda::RowSplit;
using tcc::cuda::rowSplit;
using tcc::rt::kernels::BatchNormShape;
namespace cuda = tcc::rt::cuda;
namespace cpu = tcc::rt::cpu;
namespace kernels = tcc::rt::kernels;

std::vector<float> randomValues(size_t n, unsigned seed, float offset) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = offset + uniform(rng);
  return v;
}

// The two kernels sum in double in different orders, then round to float:
// the double results differ by about n * 2^-53 of the terms' magnitude
// (1e-12 here, terms of order 1), far below half a float ulp, so a result
// can differ from the cpu's by one rounding flip (1 ulp) at most, plus that
// absolute error where cancellation makes the result itself small.
void expectWithinOneRounding(const std::vector<float> &device, const std::vector<float> &host,
                             const char *what) {
  ASSERT_EQ(device.size(), host.size()) << what;
  for (size_t i = 0; i < host.size(); ++i) {
    const double bound = std::ldexp(std::fabs(double(host[i])), -23) + 1e-10;
    ASSERT_LE(std::fabs(double(device[i]) - double(host[i])), bound)
        << what << "[" << i << "]: device " << device[i] << ", cpu " << host[i];
  }
}

TEST(RowSplit, PartsCoverEveryRowOnce) {
  // The last three have hw 1 (NHWC as [n*h*w, C], BatchNorm1d): tiles of
  // kTile rows side by side, the last tile short for 40 channels.
  for (BatchNormShape s : {BatchNormShape{1024, 64, 225, 0}, BatchNormShape{7, 3, 1300, 0},
                           BatchNormShape{8, 2, 2101, 4, true}, BatchNormShape{512, 512, 16, 0},
                           BatchNormShape{32, 8, 1, 0}, BatchNormShape{4096, 40, 1, 0},
                           BatchNormShape{4096, 40, 1, 1024, true, 64}}) {
    const RowSplit split = rowSplit(s);
    EXPECT_EQ(split.rows, s.c * s.num_groups());
    EXPECT_EQ(split.length, s.group_size() * s.hw);
    EXPECT_GE(split.parts, 1);
    const int64_t width = s.hw == 1 ? std::min<int64_t>(s.c, RowSplit::kTile) : 1;
    EXPECT_EQ(split.tile, s.hw == 1 ? RowSplit::kTile : 1);
    EXPECT_EQ(split.across, s.num_groups() * ((s.c + split.tile - 1) / split.tile));
    // parts - 1 whole chunks and a last, non-empty one.
    EXPECT_LT((split.parts - 1) * split.chunk, split.length);
    EXPECT_GE(split.parts * split.chunk, split.length);
    // A part is worth a block, and the blocks together fill about
    // kTargetBlocks.
    if (split.parts > 1) {
      EXPECT_GE(split.chunk * width, RowSplit::kMinChunk / 2);
      EXPECT_LE(split.across * (split.parts - 1), RowSplit::kTargetBlocks);
    }
    EXPECT_EQ(split.workspaceBytes(),
              (split.rows * split.parts + split.rows) * int64_t(sizeof(kernels::Sums)));
  }
  // airbench94's first batch norm: 64 rows of 230400 elements in 32 parts.
  const RowSplit first = rowSplit(BatchNormShape{1024, 64, 225, 0});
  EXPECT_EQ(first.parts, 32);
  EXPECT_EQ(first.chunk, 7200);
}

struct NormCase {
  BatchNormShape shape;
  int expectedParts;
};

class BatchNormOnDevice : public ::testing::TestWithParam<NormCase> {};

/// x [n, c, hw] as stored NHWC.
template <class T>
std::vector<T> toChannelsLast(const std::vector<T> &x, int64_t n, int64_t c, int64_t hw) {
  std::vector<T> out(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < hw; ++j)
        out[size_t((i * hw + j) * c + ch)] = x[size_t((i * c + ch) * hw + j)];
  return out;
}

/// The device's batch norm, forward and backward, on `device` (the tensors
/// as `stored` lays them out) against the cpu kernels on `cpu` (NCHW): the
/// statistics within one rounding of sums taken in another order, y from
/// them within what a flip of one moves it.
void expectBatchNormMatchesCpu(const BatchNormShape &device, const BatchNormShape &cpu,
                               std::vector<float> (*stored)(const std::vector<float> &,
                                                            const BatchNormShape &)) {
  const BatchNormShape &s = cpu;
  const RowSplit split = rowSplit(device);
  const size_t n = size_t(s.n * s.c * s.hw), rows = size_t(s.c * s.num_groups());
  ASSERT_EQ(device.num_groups(), cpu.num_groups());
  // An offset mean, so the deviations' pass matters.
  const std::vector<float> x = randomValues(n, 1, 3.0f), dy = randomValues(n, 2, 0.1f);
  const std::vector<float> xs = stored(x, s), dys = stored(dy, s);
  const std::vector<float> weight = randomValues(size_t(s.c), 3, 1.0f),
                           bias = randomValues(size_t(s.c), 4, 0.0f);
  std::vector<char> workspace(size_t(split.workspaceBytes()));
  cudaStream_t stream = nullptr;

  // Forward.
  std::vector<float> y(n), mean(rows), invstd(rows), runMean(size_t(s.c), 0.5f),
      runVar(size_t(s.c), 2.0f);
  std::vector<float> yHost(n), meanHost(rows), invstdHost(rows), runMeanHost = runMean,
                                                                  runVarHost = runVar;
  float *out = y.data();
  cuda::batch_norm_forward_train_with<float>(
      stream, workspace.data(), split.workspaceBytes(), device, xs.data(), weight.data(),
      bias.data(), 1e-5, 0.1,
      [=](int64_t i0, int count, const float (&v)[cuda::kChunk]) {
        std::copy(v, v + count, out + i0);
      },
      mean.data(),
      invstd.data(), runMean.data(), runVar.data());
  kernels::batch_norm_forward_train(s, x.data(), weight.data(), bias.data(), 1e-5, 0.1,
                                    yHost.data(), meanHost.data(), invstdHost.data(),
                                    runMeanHost.data(), runVarHost.data());
  expectWithinOneRounding(mean, meanHost, "saved_mean");
  expectWithinOneRounding(invstd, invstdHost, "saved_invstd");
  expectWithinOneRounding(runMean, runMeanHost, "running_mean");
  expectWithinOneRounding(runVar, runVarHost, "running_var");
  // y from the saved statistics: a flip of the saved mean (1 ulp at |x| < 4,
  // 4.8e-7) or invstd moves y by that times invstd * |weight| (< 2 * 2), and
  // y has its own rounding.
  const std::vector<float> yWant = stored(yHost, s);
  for (size_t k = 0; k < n; ++k)
    ASSERT_NEAR(y[k], yWant[k], std::ldexp(std::fabs(double(yWant[k])), -22) + 4e-6)
        << "y[" << k << "]";

  // Backward, from the cpu's statistics on both sides.
  std::vector<float> dx(n), dw(size_t(s.c)), db(size_t(s.c));
  std::vector<float> dxHost(n), dwHost(size_t(s.c)), dbHost(size_t(s.c));
  const float *grad = dys.data();
  cuda::batch_norm_backward_with<float>(
      stream, workspace.data(), split.workspaceBytes(), device,
      [=](int64_t i0, int count, int64_t, int, float (&d)[cuda::kChunk]) {
        std::copy(grad + i0, grad + i0 + count, d);
      },
      xs.data(), weight.data(), meanHost.data(),
      invstdHost.data(), dx.data(), dw.data(), db.data());
  kernels::batch_norm_backward(s, dy.data(), x.data(), weight.data(), meanHost.data(),
                               invstdHost.data(), dxHost.data(), dwHost.data(), dbHost.data());
  expectWithinOneRounding(dx, stored(dxHost, s), "dx");
  expectWithinOneRounding(dw, dwHost, "dweight");
  expectWithinOneRounding(db, dbHost, "dbias");

  // dx stored in bf16 (a fused narrowing cast): the f32 dx rounded as the
  // cast rounds it, bit for bit, and the same parameter gradients; and
  // without dx, the same parameter gradients.
  auto dyOf = [=](int64_t i0, int count, int64_t, int, float (&d)[cuda::kChunk]) {
    std::copy(grad + i0, grad + i0 + count, d);
  };
  std::vector<tcc::rt::half::BF16> dxNarrow(n);
  std::vector<float> dwNarrow(size_t(s.c)), dbNarrow(size_t(s.c)), dwAlone(size_t(s.c));
  cuda::batch_norm_backward_with<float>(stream, workspace.data(), split.workspaceBytes(), device,
                                        dyOf, xs.data(), weight.data(), meanHost.data(),
                                        invstdHost.data(), dxNarrow.data(), dwNarrow.data(),
                                        dbNarrow.data());
  cuda::batch_norm_backward_with<float>(stream, workspace.data(), split.workspaceBytes(), device,
                                        dyOf, xs.data(), weight.data(), meanHost.data(),
                                        invstdHost.data(), static_cast<float *>(nullptr),
                                        dwAlone.data(), static_cast<float *>(nullptr));
  for (size_t k = 0; k < n; ++k)
    ASSERT_EQ(dxNarrow[k].bits, tcc::rt::half::floatToBf16(dx[k])) << "narrowed dx[" << k << "]";
  EXPECT_EQ(dwNarrow, dw);
  EXPECT_EQ(dbNarrow, db);
  EXPECT_EQ(dwAlone, dw);
}

std::vector<float> asNchw(const std::vector<float> &x, const BatchNormShape &) { return x; }
std::vector<float> asNhwc(const std::vector<float> &x, const BatchNormShape &s) {
  return toChannelsLast(x, s.n, s.c, s.hw);
}

TEST_P(BatchNormOnDevice, MatchesTheCpuKernel) {
  ASSERT_EQ(rowSplit(GetParam().shape).parts, GetParam().expectedParts);
  expectBatchNormMatchesCpu(GetParam().shape, GetParam().shape, asNchw);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BatchNormOnDevice,
    ::testing::Values(
        // One part per row (a row below kMinChunk).
        NormCase{BatchNormShape{16, 3, 49, 0}, 1},
        // Three parts, the last two elements shorter (9100 = 2 * 3034 + 3032).
        NormCase{BatchNormShape{7, 3, 1300, 0}, 3},
        // Ghost groups of 4 samples, consecutive and strided, each row split.
        NormCase{BatchNormShape{8, 2, 2101, 4, false}, 3},
        NormCase{BatchNormShape{8, 2, 2101, 4, true}, 3},
        // Planes of a multiple of kChunk elements: the elementwise passes in
        // chunks of one plane (norm_chunks), whole batch in parts and
        // strided ghost groups.
        NormCase{BatchNormShape{32, 3, 1024, 0}, 8},
        NormCase{BatchNormShape{16, 5, 64, 4, true}, 1}));

TEST(BatchNormOnDevice, RefusesTooSmallAWorkspace) {
  const BatchNormShape s{7, 3, 1300, 0};
  std::vector<float> x(size_t(7 * 3 * 1300)), stats(3);
  std::vector<char> workspace(16);
  EXPECT_THROW(cuda::batch_norm_forward_train_with<float>(
                   nullptr, workspace.data(), 16, s, x.data(), nullptr, nullptr, 1e-5, 0.1,
                   [](int64_t, int, const float (&)[cuda::kChunk]) {}, stats.data(),
                   stats.data(), nullptr, nullptr),
               std::runtime_error);
}

// A bias gradient (reduce_sum over every dim but the channels) split over
// blocks as batch norm's sums are: a row of a million elements in many
// parts, and one of three parts with a shorter last one, against the sum in
// double (the two orders differ by about n * 2^-53 of the magnitudes, far
// below the float rounding of the result: one rounding flip at most).
TEST(ReduceSumOnDevice, SplitRowsGiveEachChannelsSum) {
  // The last: an NHWC bias gradient, [n*h*w, C, 1] (tiled).
  for (auto [outer, mid, inner] : {std::array<int64_t, 3>{1024, 3, 961},
                                   std::array<int64_t, 3>{7, 3, 1300},
                                   std::array<int64_t, 3>{65536, 40, 1}}) {
    const std::vector<float> x = randomValues(size_t(outer * mid * inner), 9, 0.5f);
    const RowSplit split = rowSplit(BatchNormShape{outer, mid, inner});
    ASSERT_GT(split.parts, 1);
    std::vector<char> workspace(size_t(split.workspaceBytes()));
    std::vector<float> y(static_cast<size_t>(mid));
    cuda::reduce_sum_keep<float>(nullptr, workspace.data(), split.workspaceBytes(), outer, mid,
                                 inner, x.data(), y.data());
    for (int64_t j = 0; j < mid; ++j) {
      double sum = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          sum += x[size_t((o * mid + j) * inner + i)];
      EXPECT_LE(std::fabs(double(y[j]) - double(float(sum))),
                std::ldexp(std::fabs(sum), -23))
          << outer << "x" << mid << "x" << inner << " channel " << j;
    }
  }
}

// A 16-bit bias gradient (the cuda target keeps reduce_sum on the stored
// 16-bit gradient): the f32 kernel's sums of the widened copies, cast down
// to the 16 bits, bit for bit, in f16 and bf16 (the same parts added in the
// same order; half::F16 / BF16 round through f32 as the cast after the f32
// kernel does).
TEST(ReduceSumOnDevice, SixteenBitGivesTheF32SumsCastDown) {
  using tcc::rt::half::BF16;
  using tcc::rt::half::F16;
  auto check = [](auto tag, uint16_t (*narrow)(float), float (*widen)(uint16_t)) {
    using T = decltype(tag);
    const int64_t outer = 4096, mid = 24, inner = 1; // an NHWC bias gradient
    const std::vector<float> values = randomValues(size_t(outer * mid * inner), 11, 0.5f);
    std::vector<T> x(values.size());
    std::vector<float> widened(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      x[i].bits = narrow(values[i]);
      widened[i] = widen(x[i].bits);
    }
    const RowSplit split = rowSplit(BatchNormShape{outer, mid, inner});
    ASSERT_GT(split.parts, 1);
    std::vector<char> workspace(size_t(split.workspaceBytes()));
    std::vector<T> y(static_cast<size_t>(mid));
    std::vector<float> yf(static_cast<size_t>(mid));
    cuda::reduce_sum_keep<T>(nullptr, workspace.data(), split.workspaceBytes(), outer, mid,
                             inner, x.data(), y.data());
    cuda::reduce_sum_keep<float>(nullptr, workspace.data(), split.workspaceBytes(), outer, mid,
                                 inner, widened.data(), yf.data());
    for (int64_t j = 0; j < mid; ++j)
      EXPECT_EQ(y[size_t(j)].bits, narrow(yf[size_t(j)])) << "channel " << j;
  };
  check(F16{}, kernels::float_to_f16, kernels::f16_to_float);
  check(BF16{}, kernels::float_to_bf16, kernels::bf16_to_float);
}

// The max pools on fp16 tensors (the launches the generated step makes for
// airbench94's pools): the cpu kernels' f32 results on widened copies, cast
// down, bit for bit (a 3x3 window of stride 2 overlaps: the backward sums).
TEST(MaxPoolOnDevice, SixteenBitGivesTheF32KernelsBitsCastDown) {
  using tcc::rt::half::F16;
  const kernels::Pool2dShape s = kernels::make_pool2d_shape(4, 3, 9, 9, 3, 3, 2, 2, 1, 1);
  const int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.oh * s.ow;
  const std::vector<float> xr = randomValues(size_t(in), 5, 0.0f),
                           gr = randomValues(size_t(out), 6, 0.0f);
  std::vector<F16> x(in), dy(out), y(out), dx(in);
  std::vector<float> xf(in), dyf(out), yf(out), dxf(in);
  for (int64_t i = 0; i < in; ++i) {
    x[i].bits = kernels::float_to_f16(xr[i]);
    xf[i] = kernels::f16_to_float(x[i].bits);
  }
  for (int64_t o = 0; o < out; ++o) {
    dy[o].bits = kernels::float_to_f16(gr[o]);
    dyf[o] = kernels::f16_to_float(dy[o].bits);
  }
  cuda::max_pool2d_forward<F16>(nullptr, s, false, x.data(), y.data());
  cuda::max_pool2d_backward<F16>(nullptr, s, false, x.data(), dy.data(), dx.data());
  kernels::max_pool2d_forward(s, xf.data(), yf.data());
  kernels::max_pool2d_backward(s, xf.data(), dyf.data(), dxf.data());
  for (int64_t o = 0; o < out; ++o)
    ASSERT_EQ(y[o].bits, kernels::float_to_f16(yf[o])) << "y[" << o << "]";
  for (int64_t i = 0; i < in; ++i)
    ASSERT_EQ(dx[i].bits, kernels::float_to_f16(dxf[i])) << "dx[" << i << "]";
}

// Max pools whose windows tile the input run one thread per window and
// kChunk channels (cuda::TiledWindows): the cpu kernels' results (on
// widened copies, cast down, for bf16), bit for bit, in both layouts. 2x2
// and 4x4 windows, rows and columns past the last window (their dx: 0); 12 channels (a chunk of 8 and one of 4) and 16 (whole
// vectors); ties, -inf, a NaN, and a dy of -0 (the backward adds it to +0,
// as the cpu kernel's zeroed dx does).
TEST(MaxPoolOnDevice, TiledWindowsGiveTheCpuKernelsBits) {
  using tcc::rt::half::BF16;
  for (auto [c, k] : {std::array<int64_t, 2>{12, 2}, std::array<int64_t, 2>{16, 4}}) {
    // The last rows and column in no window (2x2 on 5x9; 4x4 on 11x17).
    const kernels::Pool2dShape s = kernels::make_pool2d_shape(3, c, 3 * k - 1, 4 * k + 1, k, k, k, k);
    ASSERT_TRUE(cuda::TiledWindows::applies(s));
    const int64_t hw = s.h * s.w, ohw = s.oh * s.ow;
    const size_t in = size_t(s.n * s.c * hw), out = size_t(s.n * s.c * ohw);
    std::vector<float> x = randomValues(size_t(in), 11, 0.0f),
                       dy = randomValues(size_t(out), 12, 0.0f);
    for (float &v : x)
      v = std::round(v * 4) / 4; // ties within windows
    x[5] = -INFINITY;
    x[size_t(hw + 3)] = NAN;
    dy[7] = -0.0f;
    // Exactly representable in bf16, so the f32 kernels see the same values.
    for (float &v : x)
      v = kernels::bf16_to_float(kernels::float_to_bf16(v));
    for (float &v : dy)
      v = kernels::bf16_to_float(kernels::float_to_bf16(v));
    std::vector<float> y(out), dx(in);
    kernels::max_pool2d_forward(s, x.data(), y.data());
    kernels::max_pool2d_backward(s, x.data(), dy.data(), dx.data());
    for (bool last : {false, true}) {
      auto stored = [&](const std::vector<float> &v, int64_t plane) {
        return last ? toChannelsLast(v, s.n, s.c, plane) : v;
      };
      auto expectBits = [&](const std::vector<float> &want, const std::vector<float> &got,
                            const char *what) {
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(std::memcmp(&want[i], &got[i], sizeof(float)), 0)
              << what << (last ? " nhwc" : " nchw") << " c" << c << " at " << i;
      };
      const std::vector<float> xs = stored(x, hw), dys = stored(dy, ohw);
      std::vector<float> yd(out, NAN), dxd(in, NAN); // every element must be written
      cuda::max_pool2d_forward<float>(nullptr, s, last, xs.data(), yd.data());
      cuda::max_pool2d_backward<float>(nullptr, s, last, xs.data(), dys.data(), dxd.data());
      expectBits(stored(y, ohw), yd, "f32 forward");
      expectBits(stored(dx, hw), dxd, "f32 backward");

      std::vector<BF16> xh(in), dyh(out), yh(out), dxh(in);
      for (BF16 &v : dxh)
        v.bits = 0x7fc0; // a NaN: every element must be written
      for (size_t i = 0; i < xh.size(); ++i)
        xh[i].bits = kernels::float_to_bf16(xs[i]);
      for (size_t o = 0; o < dyh.size(); ++o)
        dyh[o].bits = kernels::float_to_bf16(dys[o]);
      cuda::max_pool2d_forward<BF16>(nullptr, s, last, xh.data(), yh.data());
      cuda::max_pool2d_backward<BF16>(nullptr, s, last, xh.data(), dyh.data(), dxh.data());
      std::vector<float> yw(out), dxw(in);
      for (size_t o = 0; o < yw.size(); ++o)
        yw[o] = kernels::bf16_to_float(yh[o].bits);
      for (size_t i = 0; i < dxw.size(); ++i)
        dxw[i] = kernels::bf16_to_float(dxh[i].bits);
      expectBits(stored(y, ohw), yw, "bf16 forward");
      expectBits(stored(dx, hw), dxw, "bf16 backward");
    }
  }
}

// Every pool on NHWC tensors (tcc-channels-last) gives the NCHW kernels'
// results, stored NHWC, bit for bit: the same windows and sums in the
// same order. Overlapping padded windows (3x3, stride 2, pad 1), ties
// included (values from a few levels), f32 and the fp16 max pools.
TEST(PoolOnDevice, ChannelsLastGivesTheSameBits) {
  const kernels::Pool2dShape s = kernels::make_pool2d_shape(3, 5, 9, 7, 3, 3, 2, 2, 1, 1);
  const int64_t hw = s.h * s.w, ohw = s.oh * s.ow, in = s.n * s.c * hw, out = s.n * s.c * ohw;
  std::vector<float> x = randomValues(size_t(in), 7, 0.0f), dy = randomValues(size_t(out), 8, 0.0f);
  for (float &v : x)
    v = std::round(v * 4) / 4; // ties within windows
  auto last = [&](const std::vector<float> &v, int64_t plane) {
    return toChannelsLast(v, s.n, s.c, plane);
  };
  auto expectSame = [&](const std::vector<float> &nchw, const std::vector<float> &nhwc,
                        int64_t plane, const char *what) {
    const std::vector<float> want = last(nchw, plane);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(std::memcmp(&want[i], &nhwc[i], sizeof(float)), 0) << what << " at " << i;
  };
  const std::vector<float> xl = last(x, hw), dyl = last(dy, ohw);
  std::vector<float> y(out), yl(out), dx(in), dxl(in);
  cuda::max_pool2d_forward<float>(nullptr, s, false, x.data(), y.data());
  cuda::max_pool2d_forward<float>(nullptr, s, true, xl.data(), yl.data());
  expectSame(y, yl, ohw, "max forward");
  cuda::max_pool2d_backward<float>(nullptr, s, false, x.data(), dy.data(), dx.data());
  cuda::max_pool2d_backward<float>(nullptr, s, true, xl.data(), dyl.data(), dxl.data());
  expectSame(dx, dxl, hw, "max backward");
  for (bool pad : {false, true}) {
    cuda::avg_pool2d_forward<float>(nullptr, s, false, pad, x.data(), y.data());
    cuda::avg_pool2d_forward<float>(nullptr, s, true, pad, xl.data(), yl.data());
    expectSame(y, yl, ohw, "avg forward");
    cuda::avg_pool2d_backward<float>(nullptr, s, false, pad, dy.data(), dx.data());
    cuda::avg_pool2d_backward<float>(nullptr, s, true, pad, dyl.data(), dxl.data());
    expectSame(dx, dxl, hw, "avg backward");
  }
  // The global pools: [n, c] results, the same in both layouts.
  const std::vector<float> g = randomValues(size_t(s.n * s.c), 9, 0.0f);
  std::vector<float> p(size_t(s.n * s.c)), pl(p.size());
  cuda::global_avg_pool_forward<float>(nullptr, s.n, s.c, hw, false, x.data(), p.data());
  cuda::global_avg_pool_forward<float>(nullptr, s.n, s.c, hw, true, xl.data(), pl.data());
  expectSame(p, pl, 1, "global avg forward");
  cuda::global_max_pool_forward<float>(nullptr, s.n, s.c, hw, false, x.data(), p.data());
  cuda::global_max_pool_forward<float>(nullptr, s.n, s.c, hw, true, xl.data(), pl.data());
  expectSame(p, pl, 1, "global max forward");
  cuda::global_avg_pool_backward<float>(nullptr, s.n, s.c, hw, false, g.data(), dx.data());
  cuda::global_avg_pool_backward<float>(nullptr, s.n, s.c, hw, true, g.data(), dxl.data());
  expectSame(dx, dxl, hw, "global avg backward");
  cuda::global_max_pool_backward<float>(nullptr, s.n, s.c, hw, false, x.data(), g.data(),
                                        dx.data());
  cuda::global_max_pool_backward<float>(nullptr, s.n, s.c, hw, true, xl.data(), g.data(),
                                        dxl.data());
  expectSame(dx, dxl, hw, "global max backward");

  using tcc::rt::half::F16;
  const size_t inSize = size_t(in), outSize = size_t(out);
  std::vector<F16> xh(inSize), dyh(outSize), yh(outSize), yhl(outSize), dxh(inSize),
      dxhl(inSize);
  for (int64_t i = 0; i < in; ++i)
    xh[size_t(i)].bits = kernels::float_to_f16(x[size_t(i)]);
  for (int64_t o = 0; o < out; ++o)
    dyh[size_t(o)].bits = kernels::float_to_f16(dy[size_t(o)]);
  const std::vector<F16> xhl = toChannelsLast(xh, s.n, s.c, hw),
                         dyhl = toChannelsLast(dyh, s.n, s.c, ohw);
  cuda::max_pool2d_forward<F16>(nullptr, s, false, xh.data(), yh.data());
  cuda::max_pool2d_forward<F16>(nullptr, s, true, xhl.data(), yhl.data());
  cuda::max_pool2d_backward<F16>(nullptr, s, false, xh.data(), dyh.data(), dxh.data());
  cuda::max_pool2d_backward<F16>(nullptr, s, true, xhl.data(), dyhl.data(), dxhl.data());
  const std::vector<F16> yWant = toChannelsLast(yh, s.n, s.c, ohw),
                         dxWant = toChannelsLast(dxh, s.n, s.c, hw);
  for (int64_t o = 0; o < out; ++o)
    ASSERT_EQ(yWant[size_t(o)].bits, yhl[size_t(o)].bits) << "fp16 max forward at " << o;
  for (int64_t i = 0; i < in; ++i)
    ASSERT_EQ(dxWant[size_t(i)].bits, dxhl[size_t(i)].bits) << "fp16 max backward at " << i;
}

// Batch norm on an NHWC tensor (tcc-channels-last) seen as [n*h*w, C], each
// sample h*w rows (BatchNormShape::rows_per_sample): the cpu kernel's
// statistics and results on the NCHW tensor, within the rounding of sums
// taken in another order (as MatchesTheCpuKernel), whole batch and ghost
// groups of 4 samples, consecutive and strided (ResNet-9's).
TEST(BatchNormOnDevice, ChannelsLastMatchesTheCpuKernelOnNchw) {
  // The tiled sums (RowSplit::kTile): 3 channels, a short tile; 40, a whole
  // and a short one, in parts.
  for (const BatchNormShape nchw :
       {BatchNormShape{8, 3, 49, 0}, BatchNormShape{8, 3, 49, 4, false},
        BatchNormShape{8, 3, 49, 4, true}, BatchNormShape{64, 40, 64, 0},
        BatchNormShape{64, 40, 64, 16, false}, BatchNormShape{64, 40, 64, 16, true}}) {
    SCOPED_TRACE(std::string(nchw.strided ? "strided" : "consecutive") + " ghost " +
                 std::to_string(nchw.ghost));
    const BatchNormShape nhwc{nchw.n * nchw.hw, nchw.c, 1, nchw.ghost * nchw.hw, nchw.strided,
                              nchw.hw};
    expectBatchNormMatchesCpu(nhwc, nchw, asNhwc);
  }
}

// A multi_tensor_cast launch: each tensor converted element by element as
// the cast kernels convert (f32 to bf16 and f16 rounding to nearest even,
// and back exactly), tensors of 1 to several blocks (300, 256 exactly, 1,
// 1000 elements), nothing written past a tensor's end.
TEST(MultiTensorOnDevice, CastsGiveTheCastKernelsBits) {
  const std::vector<int64_t> sizes = {300, 256, 1, 1000};
  const cuda::TensorCast::Kind kinds[] = {
      cuda::TensorCast::FloatToBf16, cuda::TensorCast::FloatToF16,
      cuda::TensorCast::Bf16ToFloat, cuda::TensorCast::F16ToFloat};
  std::vector<std::vector<float>> floats(4), widened(4);
  std::vector<std::vector<uint16_t>> halves(4);
  cuda::CastTable<4> table{};
  for (size_t t = 0; t < 4; ++t) {
    const size_t n = size_t(sizes[t]);
    floats[t] = randomValues(n, unsigned(50 + t), 0.0f);
    halves[t].assign(n + 1, 0xabcd); // one element past the end, to check
    widened[t].assign(n + 1, -7.0f);
    const bool narrowing = t < 2;
    if (!narrowing)
      for (size_t i = 0; i < n; ++i)
        halves[t][i] = t == 2 ? kernels::float_to_bf16(floats[t][i])
                              : kernels::float_to_f16(floats[t][i]);
    table.casts[t] = narrowing
                         ? cuda::TensorCast{kinds[t], floats[t].data(), halves[t].data(), sizes[t]}
                         : cuda::TensorCast{kinds[t], halves[t].data(), widened[t].data(), sizes[t]};
  }
  cuda::multi_tensor_cast(nullptr, table);
  for (size_t t = 0; t < 4; ++t) {
    const size_t n = size_t(sizes[t]);
    for (size_t i = 0; i < n; ++i) {
      if (t == 0)
        ASSERT_EQ(halves[t][i], kernels::float_to_bf16(floats[t][i])) << t << ", " << i;
      else if (t == 1)
        ASSERT_EQ(halves[t][i], kernels::float_to_f16(floats[t][i])) << t << ", " << i;
      else
        ASSERT_EQ(widened[t][i], t == 2 ? kernels::bf16_to_float(halves[t][i])
                                        : kernels::f16_to_float(halves[t][i]))
            << t << ", " << i;
    }
    EXPECT_EQ(t < 2 ? halves[t][n] : uint16_t(0xabcd), 0xabcd) << "past tensor " << t;
    EXPECT_EQ(t < 2 ? -7.0f : widened[t][n], -7.0f) << "past tensor " << t;
  }
}

// Chains of 1 to several blocks (300, 256 exactly, 1, 1000 elements), two
// and one stages: the one launch gives the cpu kernel's bits.
TEST(MultiTensorOnDevice, OneLaunchGivesTheCpuKernelsBits) {
  const std::vector<int64_t> sizes = {300, 256, 1, 1000};
  float lr = 0.05f;
  int64_t step = 3;
  std::vector<std::vector<float>> params, grads, buffers, emas;
  for (size_t t = 0; t < sizes.size(); ++t) {
    params.push_back(randomValues(size_t(sizes[t]), unsigned(10 + t), 0.0f));
    grads.push_back(randomValues(size_t(sizes[t]), unsigned(20 + t), 0.0f));
    buffers.push_back(randomValues(size_t(sizes[t]), unsigned(30 + t), 0.0f));
    emas.push_back(randomValues(size_t(sizes[t]), unsigned(40 + t), 0.0f));
  }
  auto hostParams = params, hostBuffers = buffers, hostEmas = emas;

  auto stagesOf = [&](std::vector<std::vector<float>> &p, std::vector<std::vector<float>> &b,
                      std::vector<std::vector<float>> &e) {
    std::vector<cpu::UpdateStage<float>> stages;
    for (size_t t = 0; t < sizes.size(); ++t) {
      stages.push_back(cpu::sgd_stage<float>(p[t].data(), grads[t].data(), b[t].data(), &lr,
                                             &step, nullptr, 1.0, 0.9, 0.0, 5e-4, true));
      if (t != 2) // the one-element tensor: a chain of one stage
        stages.push_back(cpu::ema_stage<float>(e[t].data(), p[t].data(), &step, 0.99, 1));
    }
    return stages;
  };
  const std::vector<cpu::UpdateStage<float>> hostStages =
      stagesOf(hostParams, hostBuffers, hostEmas);
  const std::vector<cpu::UpdateChain> chains = {{300, 0, 2}, {256, 2, 2}, {1, 4, 1}, {1000, 5, 2}};
  cpu::multi_tensor_update<float>(chains.data(), int(chains.size()), hostStages.data());

  cuda::UpdateTable<float, 7, 4> table{};
  const std::vector<cpu::UpdateStage<float>> deviceStages = stagesOf(params, buffers, emas);
  std::copy(deviceStages.begin(), deviceStages.end(), table.stages);
  std::copy(chains.begin(), chains.end(), table.chains);
  cuda::multi_tensor_update(nullptr, table);

  for (size_t t = 0; t < sizes.size(); ++t) {
    EXPECT_EQ(0, std::memcmp(params[t].data(), hostParams[t].data(), sizes[t] * sizeof(float)))
        << "param " << t;
    EXPECT_EQ(0, std::memcmp(buffers[t].data(), hostBuffers[t].data(),
                             sizes[t] * sizeof(float)))
        << "momentum " << t;
    EXPECT_EQ(0, std::memcmp(emas[t].data(), hostEmas[t].data(), sizes[t] * sizeof(float)))
        << "ema " << t;
  }
}

// Division by a divisor fixed in advance (runtime/common/FastDivide.h):
// exact for every divisor a shape has and every index below 2^63, the
// largest included, against the 64-bit division.
TEST(FastDivide, ExactBelowTwoToThe63) {
  std::mt19937_64 random(7);
  std::vector<uint64_t> divisors;
  for (uint64_t d = 1; d <= 2050; ++d)
    divisors.push_back(d);
  for (uint64_t d : {uint64_t(961), uint64_t(3969), uint64_t(65535), uint64_t(65536),
                     uint64_t(65537), uint64_t(1000003), (uint64_t(1) << 30) + 1,
                     (uint64_t(1) << 31) - 1, uint64_t(1) << 31, (uint64_t(1) << 31) + 1,
                     (uint64_t(1) << 48) - 3, (uint64_t(1) << 62) + 5,
                     (uint64_t(1) << 63) - 1})
    divisors.push_back(d);
  const uint64_t top = (uint64_t(1) << 63) - 1;
  for (uint64_t d : divisors) {
    const tcc::rt::FastDivide fast(d);
    std::vector<uint64_t> ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, top, top - 1, top - d,
                                uint64_t(1) << 31, (uint64_t(1) << 31) - 1, top / d * d,
                                top / d * d - 1};
    for (int i = 0; i < 200; ++i) {
      ns.push_back(random() & top);
      ns.push_back(random() & 0xffffffffu);
    }
    for (uint64_t n : ns) {
      if (n > top)
        continue;
      ASSERT_EQ(fast.div(n), n / d) << n << " / " << d;
      ASSERT_EQ(fast.rem(n, fast.div(n)), n % d) << n << " % " << d;
    }
  }
}

// A batch norm element's channel and statistics row, found by FastDivide,
// are the ones the 64-bit divisions give, for consecutive and strided
// ghost batches, BN1d ([n, C], hw = 1), an NHWC tensor's rows, and
// tensors of more than 2^31 and 2^32 elements (only their indices).
TEST(BatchNormPosition, SameRowsAsDivisions) {
  for (BatchNormShape shape :
       {BatchNormShape{12, 5, 7, 4, false}, BatchNormShape{12, 5, 7, 4, true},
        BatchNormShape{6, 3, 1, 0, false}, BatchNormShape{8, 64, 961, 2, true},
        BatchNormShape{4096, 40, 1, 1024, true, 64}, BatchNormShape{1024, 64, 65536, 32, true},
        BatchNormShape{1 << 20, 512, 16, 1 << 16, false}}) {
    const cuda::BatchNormPosition position(shape);
    const int64_t step = shape.n * shape.c * shape.hw > (int64_t(1) << 24) ? 999983 : 1;
    for (int64_t k = 0; k < shape.n * shape.c * shape.hw; k += step + k / 97) {
      int64_t c = -1, row = -1;
      position.at(k, c, row);
      const int64_t plane = k / shape.hw;
      ASSERT_EQ(c, plane % shape.c) << k;
      ASSERT_EQ(row, shape.group_of(plane / shape.c) * shape.c + plane % shape.c) << k;
    }
  }
}

// The chunks of a batch norm's elementwise passes: kChunk elements where
// they share a row (hw a multiple of kChunk) or step through consecutive
// channels of one NHWC pixel (hw 1, C a multiple of kChunk), else one
// element; every element once, each with the channel and row the 64-bit
// divisions give.
TEST(BatchNormPosition, ChunksShareOrStepTheirRows) {
  struct Case {
    BatchNormShape shape;
    int width, rowStep;
  };
  for (const Case &t : {Case{BatchNormShape{4, 3, 64, 2, true}, cuda::kChunk, 0},
                        Case{BatchNormShape{4, 3, 49, 0}, 1, 0},
                        Case{BatchNormShape{64, 16, 1, 16, true, 4}, cuda::kChunk, 1},
                        Case{BatchNormShape{64, 16, 1, 32, false, 4}, cuda::kChunk, 1},
                        Case{BatchNormShape{64, 12, 1, 0}, 1, 0}}) {
    const BatchNormShape &s = t.shape;
    const cuda::NormChunks chunks = cuda::norm_chunks(s);
    ASSERT_EQ(chunks.width, t.width) << s.c << "x" << s.hw;
    ASSERT_EQ(chunks.rowStep, t.rowStep) << s.c << "x" << s.hw;
    std::vector<int> hits(size_t(s.n * s.c * s.hw));
    cuda::for_each_norm_chunk(nullptr, s, [&](int64_t i0, int count, int64_t c, int64_t row) {
      ASSERT_EQ(count, std::min<int64_t>(chunks.width, s.n * s.c * s.hw - i0));
      for (int k = 0; k < count; ++k) {
        const int64_t i = i0 + k, plane = i / s.hw;
        ++hits[size_t(i)];
        ASSERT_EQ(c + k * chunks.rowStep, plane % s.c) << i;
        ASSERT_EQ(row + k * chunks.rowStep, s.group_of(plane / s.c) * s.c + plane % s.c) << i;
      }
    });
    for (size_t i = 0; i < hits.size(); ++i)
      ASSERT_EQ(hits[i], 1) << "element " << i;
  }
}

// An elementwise group's launch: every element in exactly one chunk, each
// chunk kChunk long but the last, which holds the rest; a chunk's loads and
// stores touch its elements only.
TEST(ChunkOnDevice, EveryElementOnceAndTheTailShort) {
  for (int64_t n : {1, 7, 8, 9, 37, 64}) {
    std::vector<int> hits(static_cast<size_t>(n));
    cuda::for_each_chunk(nullptr, n, [&](int64_t i0, int count) {
      EXPECT_EQ(i0 % cuda::kChunk, 0) << n;
      EXPECT_EQ(count, std::min<int64_t>(cuda::kChunk, n - i0)) << n << " at " << i0;
      for (int k = 0; k < count; ++k)
        ++hits[size_t(i0 + k)];
    });
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(hits[size_t(i)], 1) << "element " << i << " of " << n;
  }
  std::vector<uint16_t> from(20), to(20, 0xffff);
  for (size_t i = 0; i < from.size(); ++i)
    from[i] = uint16_t(i + 1);
  cuda::ChunkOf<uint16_t *> chunk{};
  cuda::load_chunk(from.data(), 16, 3, chunk);
  EXPECT_EQ(chunk[0], 17);
  EXPECT_EQ(chunk[2], 19);
  EXPECT_EQ(chunk[3], 0); // past the tail: untouched
  cuda::store_chunk(to.data(), 16, 3, chunk);
  EXPECT_EQ(to[15], 0xffff);
  EXPECT_EQ(to[16], 17);
  EXPECT_EQ(to[18], 19);
  EXPECT_EQ(to[19], 0xffff);
}

// The runtime's elementwise ops over chunks: every element, its index, in
// place (the result in an operand's bytes).
TEST(ChunkOnDevice, MapChunksSeesEveryElementAndItsIndex) {
  const int64_t n = 19;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[size_t(i)] = float(i) * 0.5f;
  cuda::map_chunks(nullptr, n, x.data(), y.data(),
                   [](float v, int64_t i) { return v + float(100 * i); });
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(y[size_t(i)], float(i) * 0.5f + float(100 * i)) << i;
  cuda::map_chunks(nullptr, n, y.data(), x.data(), y.data(),
                   [](float a, float b, int64_t) { return a - b; });
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(y[size_t(i)], float(100 * i)) << i;
}

TEST(MultiTensorOnDevice, ChainOfBlock) {
  // Chains of 2, 0 and 3 blocks (an empty chain owns no block).
  const uint32_t firstBlock[4] = {0, 2, 2, 5};
  EXPECT_EQ((cuda::chain_of_block<3>(firstBlock, 0)), 0);
  EXPECT_EQ((cuda::chain_of_block<3>(firstBlock, 1)), 0);
  EXPECT_EQ((cuda::chain_of_block<3>(firstBlock, 2)), 2);
  EXPECT_EQ((cuda::chain_of_block<3>(firstBlock, 4)), 2);
}

} // namespace
