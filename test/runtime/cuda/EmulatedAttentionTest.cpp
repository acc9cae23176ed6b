//===- EmulatedAttentionTest.cpp - Device attention against the cpu's -----===//
//
// The cuda target's attention (runtime/cuda/device/Attention.cuh) under host
// emulation against the cpu kernels (runtime/kernels/Attention.h) on shapes
// the trainers' tests (host_emulation.py: tq = tk) do not reach: more keys
// than queries (the causal mask aligned top-left), d != dv, dropout drawn
// from a second rank's slice of the mask.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/cuda/device/Attention.cuh"
#include "runtime/kernels/Attention.h"

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

// Both sum each product in f32, in different orders (Gemm.h's blocks, the
// device's one term after another): a few float roundings of the largest
// terms apart, far below an error of a mask or an index (of order 1).
void expectClose(const std::vector<float> &device, const std::vector<float> &host,
                 const char *what) {
  ASSERT_EQ(device.size(), host.size()) << what;
  double scale = 0;
  for (float x : host)
    scale = std::max(scale, std::fabs(double(x)));
  for (size_t i = 0; i < host.size(); ++i)
    ASSERT_LE(std::fabs(double(device[i]) - double(host[i])), 1e-5 * scale)
        << what << "[" << i << "]: device " << device[i] << ", cpu " << host[i];
}

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
  std::vector<char> forward(size_t(tcc::cuda::attentionWorkspaceBytes(s, false)));
  std::vector<char> backward(size_t(tcc::cuda::attentionWorkspaceBytes(s, true)));
  cuda::attention_forward<float>(nullptr, forward.data(), int64_t(forward.size()), s, p, &seed,
                                 stream, &control, q.data(), k.data(), v.data(), r.out.data(),
                                 r.lse.data());
  cuda::attention_backward<float>(nullptr, backward.data(), int64_t(backward.size()), s, p,
                                  &seed, stream, &control, dout.data(), q.data(), k.data(),
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
  std::vector<char> workspace(size_t(tcc::cuda::attentionWorkspaceBytes(s, false)) - 4);
  tcc::rt::StepControl control{};
  EXPECT_THROW(cuda::attention_forward<float>(nullptr, workspace.data(),
                                              int64_t(workspace.size()), s, 0.0, nullptr, 0,
                                              &control, x.data(), x.data(), x.data(), x.data(),
                                              lse.data()),
               std::runtime_error);
}

} // namespace
