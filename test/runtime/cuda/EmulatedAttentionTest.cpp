//===- EmulatedAttentionTest.cpp - Device attention against the cpu's -----===//
//
// The cuda target's attention (runtime/cuda/device/Attention.cuh) under host
// emulation against the cpu kernels (runtime/kernels/Attention.h) on shapes
// the trainers' tests (host_emulation.py: tq = tk) do not reach: more keys
// than queries (the causal mask aligned top-left), d != dv, dropout drawn
// from a second rank's slice of the mask, rows longer than a block; and
// its cuBLASLt batched products (Matmul.cuh, AttentionProducts.h: emulated
// as double sums) against the cpu kernels' products, and tcc.matmul's in
// every transpose against runtime/kernels/Matmul.h.
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
#include <random>
#include <vector>

namespace {

namespace cuda = tcc::rt::cuda;
namespace kernels = tcc::rt::kernels;
using kernels::AttentionShape;

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = uniform(rng);
  return v;
}

// The cpu sums each product in f32 (Gemm.h's blocks), the emulated
// cuBLASLt in double: a few float roundings of the largest terms apart
// (HeadProducts.h's expectClose).
using tcc::test::expectClose;

struct Results {
  std::vector<float> out, lse, dq, dk, dv;
};

Results onDevice(const AttentionShape &s, double p, int64_t seed, uint64_t stream, int64_t rank,
             const std::vector<float> &q, const std::vector<float> &k,
             const std::vector<float> &v, const std::vector<float> &dout) {
  tcc::rt::StepControl control{};
  control.run.rank = rank;
  control.run.ranks = rank + 1;
  Results r{std::vector<float>(dout.size()), std::vector<float>(size_t(s.n * s.heads * s.tq)),
        std::vector<float>(q.size()), std::vector<float>(k.size()),
        std::vector<float>(v.size())};
  // 256 bytes of cuBLASLt's workspace after the scores (the emulation
  // fills it with NaN bits: the scores must not overlap it).
  std::vector<char> forward(size_t(tcc::cuda::attentionWorkspaceBytes(s, false, 256)));
  std::vector<char> backward(size_t(tcc::cuda::attentionWorkspaceBytes(s, true, 256)));
  cuda::Matmul matmul;
  cuda::attention_forward<float>(matmul, nullptr, forward.data(), int64_t(forward.size()), s, p,
                                 &seed, stream, &control, q.data(), k.data(), v.data(),
                                 r.out.data(), r.lse.data());
  cuda::attention_backward<float>(matmul, nullptr, backward.data(), int64_t(backward.size()), s,
                                  p, &seed, stream, &control, dout.data(), q.data(), k.data(),
                                  v.data(), r.out.data(), r.lse.data(), r.dq.data(), r.dk.data(),
                                  r.dv.data());
  return r;
}

Results onCpu(const AttentionShape &s, double p, int64_t seed, uint64_t stream, int64_t rank,
          const std::vector<float> &q, const std::vector<float> &k, const std::vector<float> &v,
          const std::vector<float> &dout) {
  const kernels::AttentionDropout drop{p, uint64_t(seed), stream,
                                       uint64_t(rank * s.n * s.heads * s.tq * s.tk)};
  Results r{std::vector<float>(dout.size()), std::vector<float>(size_t(s.n * s.heads * s.tq)),
        std::vector<float>(q.size()), std::vector<float>(k.size()),
        std::vector<float>(v.size())};
  kernels::attention_forward<float>(s, drop, q.data(), k.data(), v.data(), r.out.data(),
                                    r.lse.data());
  kernels::attention_backward<float>(s, drop, dout.data(), q.data(), k.data(), v.data(),
                                     r.out.data(), r.lse.data(), r.dq.data(), r.dk.data(),
                                     r.dv.data());
  return r;
}

TEST(AttentionOnDevice, MatchesTheCpuKernels) {
  // n 3, 2 heads, 5 queries, 7 keys, d 3, dv 4.
  for (bool causal : {false, true})
    for (double p : {0.0, 0.3}) {
      const AttentionShape s{3, 2, 5, 7, 3, 4, causal, 0.4};
      const auto q = randomValues(size_t(s.n * s.tq * s.heads * s.d), 1);
      const auto k = randomValues(size_t(s.n * s.tk * s.heads * s.d), 2);
      const auto v = randomValues(size_t(s.n * s.tk * s.heads * s.dv), 3);
      const auto dout = randomValues(size_t(s.n * s.tq * s.heads * s.dv), 4);
      const Results device = onDevice(s, p, 17, 5, 1, q, k, v, dout);
      const Results cpu = onCpu(s, p, 17, 5, 1, q, k, v, dout);
      SCOPED_TRACE(testing::Message() << "causal " << causal << ", dropout " << p);
      expectClose(device.out, cpu.out, "out");
      expectClose(device.lse, cpu.lse, "lse");
      expectClose(device.dq, cpu.dq, "dq");
      expectClose(device.dk, cpu.dk, "dk");
      expectClose(device.dv, cpu.dv, "dv");
    }
}

// Rows of more keys than a block has threads: each thread takes several
// elements of its row's max, sum and dot product.
TEST(AttentionOnDevice, RowsLongerThanABlock) {
  for (bool causal : {false, true}) {
    const AttentionShape s{1, 2, 3, 300, 2, 3, causal, 0.7};
    const auto q = randomValues(size_t(s.n * s.tq * s.heads * s.d), 5);
    const auto k = randomValues(size_t(s.n * s.tk * s.heads * s.d), 6);
    const auto v = randomValues(size_t(s.n * s.tk * s.heads * s.dv), 7);
    const auto dout = randomValues(size_t(s.n * s.tq * s.heads * s.dv), 8);
    const Results device = onDevice(s, 0.2, 3, 1, 0, q, k, v, dout);
    const Results cpu = onCpu(s, 0.2, 3, 1, 0, q, k, v, dout);
    SCOPED_TRACE(testing::Message() << "causal " << causal);
    expectClose(device.out, cpu.out, "out");
    expectClose(device.lse, cpu.lse, "lse");
    expectClose(device.dq, cpu.dq, "dq");
    expectClose(device.dk, cpu.dk, "dk");
    expectClose(device.dv, cpu.dv, "dv");
  }
}

// The test above can fail: another rank's slice of the mask gives another
// result.
TEST(AttentionOnDevice, DropoutDrawsTheRanksSlice) {
  const AttentionShape s{2, 2, 4, 4, 2, 2, false, 0.5};
  const auto q = randomValues(size_t(s.n * s.tq * s.heads * s.d), 1);
  const auto dout = randomValues(size_t(s.n * s.tq * s.heads * s.dv), 4);
  const Results rank0 = onDevice(s, 0.5, 17, 5, 0, q, q, q, dout);
  const Results rank1 = onDevice(s, 0.5, 17, 5, 1, q, q, q, dout);
  EXPECT_NE(rank0.out, rank1.out);
  expectClose(rank1.out, onCpu(s, 0.5, 17, 5, 1, q, q, q, dout).out, "out");
}

TEST(AttentionOnDevice, RefusesTooSmallAWorkspace) {
  const AttentionShape s{1, 1, 4, 4, 2, 2, false, 0.5};
  std::vector<float> x(8), lse(4);
  std::vector<char> workspace(size_t(tcc::cuda::attentionScoresBytes(s, false)) - 4);
  tcc::rt::StepControl control{};
  cuda::Matmul matmul;
  EXPECT_THROW(cuda::attention_forward<float>(matmul, nullptr, workspace.data(),
                                              int64_t(workspace.size()), s, 0.0, nullptr, 0,
                                              &control, x.data(), x.data(), x.data(), x.data(),
                                              lse.data()),
               std::runtime_error);
}

// Each head product as the device poses it (AttentionProducts.h: a batch
// over the samples or the heads, whichever are more, a launch per entry of
// the other; both arrangements here) against the cpu kernels' per-head
// product (Gemm.h on strided views, as kernels/Attention.h computes it), on
// a cross-attention shape (tq != tk, d != dv): a wrong stride, leading
// dimension or step moves values between heads, samples or rows.
TEST(AttentionProductsOnDevice, MatchTheCpusPerHeadProducts) {
  for (const AttentionShape &s : {AttentionShape{2, 3, 5, 7, 4, 6, false, 1.0},
                                  AttentionShape{4, 2, 5, 7, 4, 6, false, 1.0}}) {
    const int64_t H = s.heads;
    SCOPED_TRACE(testing::Message() << "n " << s.n << ", heads " << H);
    EXPECT_EQ(tcc::cuda::attentionScores(s, s.d).problem.batch, std::max(s.n, H));
    EXPECT_EQ(tcc::cuda::attentionScores(s, s.d).count, std::min(s.n, H));
    cuda::Matmul matmul;
    std::vector<char> workspace(256);
    const cuda::attention::Workspace w{nullptr, workspace.data(), 256};
    auto run = [&](const tcc::cuda::AttentionProduct &product, const std::vector<float> &a,
                   const std::vector<float> &b, size_t count) {
      std::vector<float> c(count);
      cuda::attention::run(matmul, nullptr, product, a.data(), b.data(), c.data(), w);
      return c;
    };
    tcc::test::expectHeadProducts(s, run, randomValues);
  }
}

// tcc.matmul's one strided batched product, in every transpose, against
// the cpu kernel (runtime/kernels/Matmul.h).
TEST(BatchedMatmulOnDevice, MatchesTheCpuKernelInEveryTranspose) {
  const int64_t batch = 3, m = 5, k = 7, n = 4;
  const auto a = randomValues(size_t(batch * m * k), 21);
  const auto b = randomValues(size_t(batch * k * n), 22);
  cuda::Matmul matmul;
  std::vector<char> workspace(256);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(testing::Message() << "transpose_a " << ta << ", transpose_b " << tb);
      std::vector<float> device(size_t(batch * m * n)), cpu(device.size());
      matmul.batched_matmul(nullptr, cuda::Matmul::Type::f32, batch, m, n, k, ta, tb, a.data(),
                            b.data(), device.data(), workspace.data(), 256);
      kernels::batched_matmul<float>(batch, m, k, n, ta, tb, a.data(), b.data(), cpu.data());
      expectClose(device, cpu, "c");
    }
}

} // namespace
