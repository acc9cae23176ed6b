//===- EmulatedMatmulFallbackTest.cpp - The fallback matmul kernel --------===//
//
// The tiled kernel that runs a matmul cuBLASLt has no algorithm for
// (runtime/cuda/device/MatmulFallback.cuh) under host emulation (its
// threads' phases in the device's order) against the cpu kernels: every
// transpose, sizes that are no multiple of its tile, batch strides smaller
// than a matrix (an attention head's), the linear layer's epilogues; and
// Matmul.cuh's test hook TCC_TEST_MATMUL_NO_ALGO, which sends problems to it
// with one warning each.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/cuda/device/Attention.cuh"
#include "runtime/kernels/Attention.h"
#include "runtime/kernels/Matmul.h"
#include "test/runtime/cuda/HeadProducts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

namespace cuda = tcc::rt::cuda;
namespace kernels = tcc::rt::kernels;
using tcc::cuda::MatmulActivation;
using tcc::cuda::MatmulProblem;
using tcc::cuda::MatmulType;

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = uniform(rng);
  return v;
}

// Both sum in f32, in other orders (HeadProducts.h's expectClose).
using tcc::test::expectClose;

/// Sets TCC_TEST_MATMUL_NO_ALGO for a scope.
struct NoAlgorithmFor {
  explicit NoAlgorithmFor(const char *keys) { setenv("TCC_TEST_MATMUL_NO_ALGO", keys, 1); }
  ~NoAlgorithmFor() { unsetenv("TCC_TEST_MATMUL_NO_ALGO"); }
};

// tcc.matmul's problem, batched, in every transpose, at sizes across
// several tiles and none a multiple of one, against kernels::batched_matmul.
TEST(MatmulFallback, MatchesTheCpuKernelInEveryTranspose) {
  for (const auto &[m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{19, 37, 21}, {1, 3, 2}}) {
    const int64_t batch = 3;
    const auto a = randomValues(size_t(batch * m * k), 21);
    const auto b = randomValues(size_t(batch * k * n), 22);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        SCOPED_TRACE(testing::Message() << "m " << m << " k " << k << " n " << n << ", transpose_a "
                                        << ta << ", transpose_b " << tb);
        // NaN where the kernel must write: an element it skips fails.
        std::vector<float> device(size_t(batch * m * n), NAN), cpu(device.size());
        const MatmulProblem p =
            MatmulProblem::batchedProduct(MatmulType::f32, batch, m, n, k, ta, tb);
        cuda::fallback::gemm(nullptr, p, b.data(), a.data(), device.data(), nullptr, nullptr);
        kernels::batched_matmul<float>(batch, m, k, n, ta, tb, a.data(), b.data(), cpu.data());
        expectClose(device, cpu, "c");
      }
  }
}

// An attention's head products (AttentionProducts.h), batched over the
// heads (heads > n): batch stride `width`, smaller than a matrix, the
// heads' matrices interleaved; head widths 2 and 5; against the cpu's
// per-head gemm on strided views.
TEST(MatmulFallback, MatchesTheCpuOnInterleavedHeads) {
  const kernels::AttentionShape s{2, 3, 17, 20, 2, 5, false, 1.0};
  const int64_t H = s.heads;
  ASSERT_EQ(tcc::cuda::attentionScores(s, s.d).problem.batch, H);
  ASSERT_LT(tcc::cuda::attentionScores(s, s.d).problem.strideA, s.tk * s.d);
  auto run = [&](const tcc::cuda::AttentionProduct &product, const std::vector<float> &a,
                 const std::vector<float> &b, size_t count) {
    std::vector<float> c(count, NAN);
    for (int64_t i = 0; i < product.count; ++i)
      cuda::fallback::gemm(nullptr, product.problem, a.data() + i * product.stepA,
                           b.data() + i * product.stepB, c.data() + i * product.stepC, nullptr,
                           nullptr);
    return c;
  };
  tcc::test::expectHeadProducts(s, run, randomValues);
}

// The linear layer's three matmuls with the forward's epilogues (bias,
// ReLU, GELU with its input kept), through Matmul with the hook set,
// against the cpu's gemm and the cpu's activations.
TEST(MatmulFallback, LinearLayersWithTheirEpilogues) {
  const int64_t M = 18, K = 33, N = 7;
  const auto x = randomValues(size_t(M * K), 31), w = randomValues(size_t(N * K), 32),
             dy = randomValues(size_t(M * N), 33), bias = randomValues(size_t(N), 34);
  NoAlgorithmFor all("gemm");
  cuda::Matmul matmul;
  for (MatmulActivation act : {MatmulActivation::none, MatmulActivation::relu,
                               MatmulActivation::gelu, MatmulActivation::gelu_aux}) {
    SCOPED_TRACE(tcc::cuda::matmulActivationName(act));
    std::vector<float> y(size_t(M * N), NAN), aux(y.size(), NAN), linear(y.size()),
        expect(y.size());
    matmul.linear_forward(nullptr, MatmulType::f32, M, K, N, x.data(), w.data(), bias.data(),
                          y.data(), nullptr, 0, act,
                          act == MatmulActivation::gelu_aux ? aux.data() : nullptr);
    kernels::detail::gemm(M, N, K, x.data(), K, 1, w.data(), 1, K, linear.data(), N);
    for (int64_t i = 0; i < M * N; ++i) {
      linear[size_t(i)] += bias[size_t(i % N)];
      const float v = linear[size_t(i)];
      expect[size_t(i)] = act == MatmulActivation::relu   ? kernels::Relu<float>{}(v)
                          : act == MatmulActivation::none ? v
                                                          : kernels::GeluTanh<float>{}(v);
    }
    expectClose(y, expect, "y");
    if (act == MatmulActivation::gelu_aux)
      expectClose(aux, linear, "aux");
  }
  std::vector<float> dx(size_t(M * K), NAN), dw(size_t(N * K), NAN), expectDx(dx.size()),
      expectDw(dw.size());
  matmul.linear_backward_data(nullptr, MatmulType::f32, M, K, N, dy.data(), w.data(), dx.data(),
                              nullptr, 0);
  matmul.linear_backward_weight(nullptr, MatmulType::f32, M, K, N, dy.data(), x.data(), dw.data(),
                                nullptr, 0);
  kernels::detail::gemm(M, K, N, dy.data(), N, 1, w.data(), K, 1, expectDx.data(), K);
  kernels::detail::gemm(N, K, M, dy.data(), 1, N, x.data(), K, 1, expectDw.data(), K);
  expectClose(dx, expectDx, "dx");
  expectClose(dw, expectDw, "dw");
  EXPECT_EQ(matmul.fallbacks().size(), 6u); // four forward epilogues, dx, dw
}

// The hook sends only the problems whose key contains its text; unset, or
// matching none, no matmul takes the fallback and nothing is said.
TEST(MatmulFallback, TheHookSelectsByKey) {
  const int64_t M = 4, K = 5, N = 3;
  const auto x = randomValues(size_t(M * K), 51), w = randomValues(size_t(N * K), 52);
  std::vector<float> y(size_t(M * N));
  auto forward = [&](cuda::Matmul &matmul, MatmulActivation act) {
    matmul.linear_forward(nullptr, MatmulType::f32, M, K, N, x.data(), w.data(), x.data(), y.data(),
                          nullptr, 0, act);
  };
  for (const char *text : {"", "epilogue=gelu"}) {
    NoAlgorithmFor none(text);
    cuda::Matmul matmul;
    testing::internal::CaptureStderr();
    forward(matmul, MatmulActivation::relu);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_TRUE(matmul.fallbacks().empty()) << text;
  }
  NoAlgorithmFor relu("epilogue=relu");
  cuda::Matmul matmul;
  forward(matmul, MatmulActivation::none);
  forward(matmul, MatmulActivation::relu);
  ASSERT_EQ(matmul.fallbacks().size(), 1u);
  EXPECT_EQ(
      *matmul.fallbacks().begin(),
      MatmulProblem::linearForward(MatmulType::f32, M, K, N, true, MatmulActivation::relu).key());
}

// 16-bit operands: read and written in their type, summed in f32.
TEST(MatmulFallback, SixteenBitOperands) {
  const int64_t M = 9, K = 20, N = 17;
  const auto x = randomValues(size_t(M * K), 41), w = randomValues(size_t(N * K), 42);
  for (MatmulType type : {MatmulType::bf16, MatmulType::f16}) {
    const bool bf16 = type == MatmulType::bf16;
    auto narrow = [&](float v) {
      return bf16 ? tcc::rt::half::floatToBf16(v) : tcc::rt::half::floatToF16(v);
    };
    auto widen = [&](uint16_t v) {
      return bf16 ? tcc::rt::half::bf16ToFloat(v) : tcc::rt::half::f16ToFloat(v);
    };
    std::vector<uint16_t> x16(x.size()), w16(w.size()), y16(size_t(M * N));
    std::vector<float> xr(x.size()), wr(w.size()), y(y16.size()), expect(y16.size());
    for (size_t i = 0; i < x.size(); ++i)
      xr[i] = widen(x16[i] = narrow(x[i]));
    for (size_t i = 0; i < w.size(); ++i)
      wr[i] = widen(w16[i] = narrow(w[i]));
    cuda::fallback::gemm(nullptr, MatmulProblem::linearForward(type, M, K, N, false), w16.data(),
                         x16.data(), y16.data(), nullptr, nullptr);
    kernels::detail::gemm(M, N, K, xr.data(), K, 1, wr.data(), 1, K, expect.data(), N);
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = widen(y16[i]);
    expectClose(y, expect, bf16 ? "bf16" : "f16", bf16 ? 1e-2 : 1e-3);
  }
}

// A whole attention forward and backward with its head products on the
// fallback (the hook set to "batch": only the strided batched problems),
// against the cpu's attention; one warning per distinct problem, none on a
// second run.
TEST(MatmulFallback, AttentionThroughTheHook) {
  const kernels::AttentionShape s{1, 3, 6, 6, 4, 2, true, 0.5};
  const auto q = randomValues(size_t(s.n * s.tq * s.heads * s.d), 1);
  const auto k = randomValues(size_t(s.n * s.tk * s.heads * s.d), 2);
  const auto v = randomValues(size_t(s.n * s.tk * s.heads * s.dv), 3);
  const auto dout = randomValues(size_t(s.n * s.tq * s.heads * s.dv), 4);
  NoAlgorithmFor batched("batch");
  cuda::Matmul matmul;
  tcc::rt::StepControl control{};
  control.run.ranks = 1;
  std::vector<float> out(dout.size()), lse(size_t(s.n * s.heads * s.tq)), dq(q.size()),
      dk(k.size()), dv(v.size());
  std::vector<char> forward(size_t(tcc::cuda::attentionWorkspaceBytes(s, false, 256)));
  std::vector<char> backward(size_t(tcc::cuda::attentionWorkspaceBytes(s, true, 256)));
  auto step = [&] {
    cuda::attention_forward<float>(matmul, nullptr, forward.data(), int64_t(forward.size()), s, 0.0,
                                   nullptr, 0, &control, q.data(), k.data(), v.data(), out.data(),
                                   lse.data());
    cuda::attention_backward<float>(matmul, nullptr, backward.data(), int64_t(backward.size()), s,
                                    0.0, nullptr, 0, &control, dout.data(), q.data(), k.data(),
                                    v.data(), out.data(), lse.data(), dq.data(), dk.data(),
                                    dv.data());
  };
  testing::internal::CaptureStderr();
  step();
  const std::string first = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  step();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  // Q K^T, P V; dO V^T, P^T dO, dS K, dS^T Q (Q K^T again): six problems.
  EXPECT_EQ(matmul.fallbacks().size(), 6u);
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 6);
  for (const std::string &key : matmul.fallbacks())
    EXPECT_NE(first.find("warning: cuBLASLt has no algorithm for the matmul [" + key +
                         "]: a simple tiled kernel runs it instead, slower than cuBLASLt\n"),
              std::string::npos)
        << first;

  const kernels::AttentionDropout none{0.0, 0, 0, 0};
  std::vector<float> cOut(out.size()), cLse(lse.size()), cDq(dq.size()), cDk(dk.size()),
      cDv(dv.size());
  kernels::attention_forward<float>(s, none, q.data(), k.data(), v.data(), cOut.data(),
                                    cLse.data());
  kernels::attention_backward<float>(s, none, dout.data(), q.data(), k.data(), v.data(),
                                     cOut.data(), cLse.data(), cDq.data(), cDk.data(), cDv.data());
  expectClose(out, cOut, "out");
  expectClose(lse, cLse, "lse");
  expectClose(dq, cDq, "dq");
  expectClose(dk, cDk, "dk");
  expectClose(dv, cDv, "dv");
}

} // namespace
