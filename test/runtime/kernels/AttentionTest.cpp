//===- AttentionTest.cpp - attention against a naive double reference -----===//
//
// The reference builds each head's full score matrix, masks it with -inf,
// takes its softmax, draws the dropout mask element by element
// (runtime/common/DropoutMask.h) and differentiates the explicit matrices
// (dS = P * (dP - rowsum(dP * P)), not the kernel's dout . out). The float
// kernels must match it to float rounding; their results must not depend
// on the thread count.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Attention.h"
#include "TestUtil.h"

#include <omp.h>

#include <cstring>

using namespace tcc::rt;
using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

struct Grads {
  Vec out, lse, dq, dk, dv;
};

/// The naive reference in double, for one shape, dropout and cotangent dout.
Grads reference(const AttentionShape &s, const AttentionDropout &drop, const Vec &q,
                const Vec &k, const Vec &v, const Vec &dout) {
  const int64_t w = s.heads * s.d, wv = s.heads * s.dv;
  Grads g{Vec(s.n * s.tq * wv, 0), Vec(s.n * s.heads * s.tq, 0), Vec(q.size(), 0),
          Vec(k.size(), 0), Vec(v.size(), 0)};
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      std::vector<Vec> p(s.tq, Vec(s.tk, 0)), keep(s.tq, Vec(s.tk, 0));
      for (int64_t i = 0; i < s.tq; ++i) {
        Vec score(s.tk, -INFINITY);
        double mx = -INFINITY;
        for (int64_t j = 0; j < s.tk; ++j) {
          if (s.causal && j > i)
            continue;
          double dot = 0;
          for (int64_t c = 0; c < s.d; ++c)
            dot += q[(b * s.tq + i) * w + h * s.d + c] * k[(b * s.tk + j) * w + h * s.d + c];
          score[j] = s.scale * dot;
          mx = std::max(mx, score[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < s.tk; ++j)
          sum += std::exp(score[j] - mx);
        g.lse[(b * s.heads + h) * s.tq + i] = mx + std::log(sum);
        for (int64_t j = 0; j < s.tk; ++j) {
          p[i][j] = std::exp(score[j] - mx) / sum;
          const uint64_t index = drop.first + ((b * s.heads + h) * s.tq + i) * s.tk + j;
          keep[i][j] = drop.p == 0 ? 1
                       : dropout::keep(drop.p, drop.seed, drop.stream, index)
                           ? 1 / (1 - drop.p)
                           : 0;
        }
      }
      for (int64_t i = 0; i < s.tq; ++i) {
        Vec dp(s.tk, 0);
        for (int64_t j = 0; j < s.tk; ++j)
          for (int64_t c = 0; c < s.dv; ++c) {
            const double vjc = v[(b * s.tk + j) * wv + h * s.dv + c];
            const double dojc = dout[(b * s.tq + i) * wv + h * s.dv + c];
            g.out[(b * s.tq + i) * wv + h * s.dv + c] += p[i][j] * keep[i][j] * vjc;
            g.dv[(b * s.tk + j) * wv + h * s.dv + c] += p[i][j] * keep[i][j] * dojc;
            dp[j] += dojc * vjc * keep[i][j];
          }
        double row = 0;
        for (int64_t j = 0; j < s.tk; ++j)
          row += dp[j] * p[i][j];
        for (int64_t j = 0; j < s.tk; ++j) {
          const double ds = p[i][j] * (dp[j] - row) * s.scale;
          for (int64_t c = 0; c < s.d; ++c) {
            g.dq[(b * s.tq + i) * w + h * s.d + c] += ds * k[(b * s.tk + j) * w + h * s.d + c];
            g.dk[(b * s.tk + j) * w + h * s.d + c] += ds * q[(b * s.tq + i) * w + h * s.d + c];
          }
        }
      }
    }
  return g;
}

std::vector<float> floats(const Vec &v) { return std::vector<float>(v.begin(), v.end()); }

/// The float kernels' forward and backward, in one buffer (out, lse, dq, dk, dv).
std::vector<float> runFloat(const AttentionShape &s, const AttentionDropout &drop,
                            const std::vector<float> &q, const std::vector<float> &k,
                            const std::vector<float> &v, const std::vector<float> &dout,
                            Grads *split = nullptr) {
  std::vector<float> out(dout.size()), lse(s.n * s.heads * s.tq), dq(q.size()), dk(k.size()),
      dv(v.size());
  attention_forward<float>(s, drop, q.data(), k.data(), v.data(), out.data(), lse.data());
  attention_backward<float>(s, drop, dout.data(), q.data(), k.data(), v.data(), out.data(),
                            lse.data(), dq.data(), dk.data(), dv.data());
  if (split)
    *split = {Vec(out.begin(), out.end()), Vec(lse.begin(), lse.end()),
              Vec(dq.begin(), dq.end()), Vec(dk.begin(), dk.end()), Vec(dv.begin(), dv.end())};
  std::vector<float> all;
  for (const auto *part : {&out, &lse, &dq, &dk, &dv})
    all.insert(all.end(), part->begin(), part->end());
  return all;
}

void expectNear(const char *what, const Vec &got, const Vec &want, const std::string &name) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 2e-5 * (1 + std::fabs(want[i])))
        << name << ": " << what << "[" << i << "]";
}

struct Config {
  std::string name;
  AttentionShape shape;
  AttentionDropout drop;
};

const Config kConfigs[] = {
    {"one head", {2, 1, 3, 3, 4, 4, false, 0.5}, {0, 0, 0, 0}},
    {"3 heads", {2, 3, 5, 5, 4, 4, false, 0.5}, {0, 0, 0, 0}},
    {"causal", {2, 2, 6, 6, 3, 3, true, 0.577}, {0, 0, 0, 0}},
    {"Tq < Tk causal", {1, 2, 3, 7, 4, 4, true, 0.5}, {0, 0, 0, 0}},
    {"Tq > Tk causal", {1, 2, 7, 3, 4, 4, true, 0.5}, {0, 0, 0, 0}},
    {"value width", {2, 2, 4, 5, 3, 6, false, 1.2}, {0, 0, 0, 0}},
    {"dropout", {2, 2, 5, 6, 4, 4, false, 0.5}, {0.3, 42, 3, 0}},
    {"dropout causal, rank 1", {2, 2, 5, 5, 4, 4, true, 0.5}, {0.5, 7, 0, 2 * 2 * 5 * 5}},
    // Products of 2^18 multiply-adds and more: Gemm.h's parallel branch,
    // inside the kernels' own parallel loop.
    {"large heads", {1, 2, 70, 66, 64, 64, true, 0.125}, {0.1, 5, 2, 0}},
};

TEST(Attention, MatchesNaiveDoubleReference) {
  for (const Config &c : kConfigs) {
    const AttentionShape &s = c.shape;
    const Vec q = random_vec(s.n * s.tq * s.heads * s.d, 1, -2, 2);
    const Vec k = random_vec(s.n * s.tk * s.heads * s.d, 2, -2, 2);
    const Vec v = random_vec(s.n * s.tk * s.heads * s.dv, 3);
    const Vec dout = random_vec(s.n * s.tq * s.heads * s.dv, 4);
    const Grads want = reference(s, c.drop, q, k, v, dout);
    Grads got;
    runFloat(s, c.drop, floats(q), floats(k), floats(v), floats(dout), &got);
    expectNear("out", got.out, want.out, c.name);
    expectNear("lse", got.lse, want.lse, c.name);
    expectNear("dq", got.dq, want.dq, c.name);
    expectNear("dk", got.dk, want.dk, c.name);
    expectNear("dv", got.dv, want.dv, c.name);
  }
}

TEST(Attention, DropoutDropsAboutPAndKeepsTheRest) {
  // With v = identity rows, out row i is the kept, rescaled probabilities.
  const AttentionShape s{4, 2, 16, 16, 16, 16, false, 0.25};
  const AttentionDropout drop{0.3, 9, 1, 0};
  Vec q = random_vec(s.n * s.tq * s.heads * s.d, 5), k = random_vec(s.n * s.tk * s.heads * s.d, 6);
  Vec v(s.n * s.tk * s.heads * s.dv, 0);
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t j = 0; j < s.tk; ++j)
      for (int64_t h = 0; h < s.heads; ++h)
        v[(b * s.tk + j) * s.heads * s.dv + h * s.dv + j] = 1;
  std::vector<double> out(s.n * s.tq * s.heads * s.dv), lse(s.n * s.heads * s.tq);
  attention_forward<double>(s, drop, q.data(), k.data(), v.data(), out.data(), lse.data());
  int64_t zeros = 0;
  for (double x : out)
    zeros += x == 0;
  const double dropped = double(zeros) / double(out.size());
  EXPECT_NEAR(dropped, 0.3, 0.05);
  const AttentionDropout none{0, 0, 0, 0};
  std::vector<double> plain(out.size());
  attention_forward<double>(s, none, q.data(), k.data(), v.data(), plain.data(), lse.data());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != 0)
      ASSERT_NEAR(out[i], plain[i] / 0.7, 1e-12) << i;
  }
}

TEST(Attention, ResultsDoNotDependOnThreadCount) {
  for (const AttentionShape &s : {AttentionShape{3, 3, 9, 11, 5, 5, true, 0.4},
                                  AttentionShape{1, 3, 70, 66, 64, 64, false, 0.125}}) {
    const AttentionDropout drop{0.2, 3, 1, 0};
    const auto q = floats(random_vec(s.n * s.tq * s.heads * s.d, 1));
    const auto k = floats(random_vec(s.n * s.tk * s.heads * s.d, 2));
    const auto v = floats(random_vec(s.n * s.tk * s.heads * s.dv, 3));
    const auto dout = floats(random_vec(s.n * s.tq * s.heads * s.dv, 4));
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const std::vector<float> want = runFloat(s, drop, q, k, v, dout);
    for (int threads : {2, 3, 4}) {
      omp_set_num_threads(threads);
      const std::vector<float> got = runFloat(s, drop, q, k, v, dout);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
          << threads << " threads, tq " << s.tq;
    }
    omp_set_num_threads(saved);
  }
}

} // namespace
