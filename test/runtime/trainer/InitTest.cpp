//===- InitTest.cpp - State initialisation, RNG, eigen solver, whitening --===//

#include "runtime/trainer/Init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace tcc::rt;

namespace {

struct Model {
  ModelInfo info;
  std::vector<uint8_t> arena;

  void add(const std::string &name, std::vector<int64_t> shape, InitDesc init,
           DType dtype = DType::F32) {
    StateTensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.init = std::move(init);
    t.offset = info.stateBytes;
    info.stateBytes += (t.numBytes() + 63) / 64 * 64;
    info.state.push_back(t);
  }
  bool init(uint64_t seed, std::string &error,
            const WhiteningData *w = nullptr) {
    arena.assign(info.stateBytes, 0xAB);
    return initializeState(info, arena.data(), seed, w, error);
  }
  const StateTensor &get(const std::string &name) const {
    for (const StateTensor &t : info.state)
      if (t.name == name)
        return t;
    throw std::logic_error(name);
  }
  std::vector<double> values(const std::string &name) const {
    const StateTensor &t = get(name);
    std::vector<double> out(t.numElements());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = loadValue(t.dtype, arena.data() + t.offset + i * dtypeSize(t.dtype));
    return out;
  }
  std::vector<uint8_t> bytes(const std::string &name) const {
    const StateTensor &t = get(name);
    return {arena.begin() + t.offset, arena.begin() + t.offset + t.numBytes()};
  }
};

void meanStd(const std::vector<double> &v, double &mean, double &sd) {
  mean = 0;
  for (double x : v)
    mean += x;
  mean /= v.size();
  double var = 0;
  for (double x : v)
    var += (x - mean) * (x - mean);
  sd = std::sqrt(var / (v.size() - 1));
}

} // namespace

TEST(Init, PhiloxMatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                     0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                     0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                     0x24126ea1}));
}

TEST(Init, UniformDistribution) {
  Model m;
  m.add("w", {1000, 1000}, {"uniform", -1, 3, ""});
  std::string error;
  ASSERT_TRUE(m.init(0, error)) << error;
  std::vector<double> v = m.values("w");
  double mean, sd;
  meanStd(v, mean, sd);
  EXPECT_NEAR(mean, 1.0, 0.005);
  EXPECT_NEAR(sd, 4 / std::sqrt(12.0), 0.005);
  for (double x : v)
    ASSERT_TRUE(x >= -1 && x <= 3) << x;
  // Ten equal bins hold 10% each.
  std::vector<int> bins(10);
  for (double x : v)
    ++bins[std::min(9, static_cast<int>((x + 1) / 0.4))];
  for (int b : bins)
    EXPECT_NEAR(b / 1e6, 0.1, 0.003);
}

TEST(Init, NormalDistribution) {
  Model m;
  m.add("w", {1000, 1000}, {"normal", 2, 0.5, ""});
  std::string error;
  ASSERT_TRUE(m.init(0, error)) << error;
  std::vector<double> v = m.values("w");
  double mean, sd;
  meanStd(v, mean, sd);
  EXPECT_NEAR(mean, 2.0, 0.003);
  EXPECT_NEAR(sd, 0.5, 0.003);
  int within1 = 0, within2 = 0;
  for (double x : v) {
    within1 += std::abs(x - 2) < 0.5;
    within2 += std::abs(x - 2) < 1.0;
  }
  EXPECT_NEAR(within1 / 1e6, 0.6827, 0.003);
  EXPECT_NEAR(within2 / 1e6, 0.9545, 0.002);
}

// An embedding's padding row (torch.nn.Embedding's padding_idx): zero after
// the N(0, 1) draw, the other rows the draw's; a row past the table is an
// error line, not a write out of bounds.
TEST(Init, ZeroRowAfterTheDraw) {
  Model m;
  InitDesc padded{"normal", 0, 1, ""};
  padded.zeroRow = 2;
  m.add("emb.weight", {5, 3}, padded);
  m.add("plain", {5, 3}, {"normal", 0, 1, ""});
  std::string error;
  ASSERT_TRUE(m.init(7, error)) << error;
  std::vector<double> v = m.values("emb.weight");
  Model same;
  same.add("emb.weight", {5, 3}, {"normal", 0, 1, ""});
  ASSERT_TRUE(same.init(7, error)) << error;
  std::vector<double> drawn = same.values("emb.weight");
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(v[i], i / 3 == 2 ? 0.0 : drawn[i]) << i;

  Model outside;
  padded.zeroRow = 5;
  outside.add("emb.weight", {5, 3}, padded);
  EXPECT_FALSE(outside.init(7, error));
  EXPECT_EQ(error, "state tensor 'emb.weight' has a zero row 5 but its shape is [5, 3]");
}

TEST(Init, StreamsAreKeyedByNameAndSeed) {
  Model a, b;
  a.add("x", {100}, {"normal", 0, 1, ""});
  a.add("y", {100}, {"uniform", 0, 1, ""});
  b.add("extra", {7}, {"normal", 0, 1, ""});
  b.add("y", {100}, {"uniform", 0, 1, ""});
  b.add("x", {100}, {"normal", 0, 1, ""});
  std::string error;
  ASSERT_TRUE(a.init(42, error));
  ASSERT_TRUE(b.init(42, error));
  EXPECT_EQ(a.bytes("x"), b.bytes("x"));
  EXPECT_EQ(a.bytes("y"), b.bytes("y"));
  Model c = a;
  ASSERT_TRUE(c.init(43, error));
  EXPECT_NE(a.bytes("x"), c.bytes("x"));
  ASSERT_TRUE(c.init(42, error));
  EXPECT_EQ(a.bytes("x"), c.bytes("x"));
  // Two names, two streams.
  Model d;
  d.add("p", {100}, {"uniform", 0, 1, ""});
  d.add("q", {100}, {"uniform", 0, 1, ""});
  ASSERT_TRUE(d.init(42, error));
  EXPECT_NE(d.bytes("p"), d.bytes("q"));
}

TEST(Init, ConstantsInEveryDtype) {
  Model m;
  m.add("f", {3}, {"constant", 1.5, 0, ""});
  m.add("h", {2}, {"constant", 1, 0, ""}, DType::F16);
  m.add("b", {2}, {"constant", 1, 0, ""}, DType::BF16);
  m.add("step", {}, {"constant", 0, 0, ""}, DType::I64);
  m.add("u", {2}, {"constant", 300, 0, ""}, DType::U8);
  std::string error;
  ASSERT_TRUE(m.init(0, error)) << error;
  EXPECT_EQ(m.values("f"), (std::vector<double>{1.5, 1.5, 1.5}));
  uint16_t h, b;
  std::memcpy(&h, m.arena.data() + m.get("h").offset, 2);
  std::memcpy(&b, m.arena.data() + m.get("b").offset, 2);
  EXPECT_EQ(h, 0x3c00);
  EXPECT_EQ(b, 0x3f80);
  EXPECT_EQ(m.bytes("step"), std::vector<uint8_t>(8, 0));
  EXPECT_EQ(m.values("u"), (std::vector<double>{255, 255}));
}

TEST(Init, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);     // tie to even
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);     // tie to even
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  for (uint32_t bits = 0; bits < 0x7c00; ++bits)
    ASSERT_EQ(floatToHalf(halfToFloat(static_cast<uint16_t>(bits))), bits);
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.00390625f), 0x3f80); // tie to even
  EXPECT_EQ(floatToBFloat16(1.01171875f), 0x3f82); // tie to even (up)
  EXPECT_FLOAT_EQ(bfloat16ToFloat(0xc040), -3.0f);
}

TEST(Init, DiracIsExact) {
  Model m;
  m.add("more_out", {6, 4, 3, 3}, {"dirac", -0.5, 0.5, ""});
  m.add("more_in", {2, 5, 3, 3}, {"dirac", -0.5, 0.5, ""});
  m.add("even_kernel", {2, 2, 2, 2}, {"dirac", -0.5, 0.5, ""});
  m.add("uniform_twin", {6, 4, 3, 3}, {"uniform", -0.5, 0.5, ""});
  std::string error;
  ASSERT_TRUE(m.init(0, error)) << error;
  std::vector<double> w = m.values("more_out");
  for (int o = 0; o < 6; ++o)
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 9; ++k) {
        double v = w[(o * 4 + i) * 9 + k];
        if (o < 4)
          EXPECT_EQ(v, (o == i && k == 4) ? 1.0 : 0.0);
        else
          EXPECT_TRUE(v >= -0.5 && v <= 0.5 && v != 0);
      }
  w = m.values("more_in");
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 5; ++i)
      for (int k = 0; k < 9; ++k)
        EXPECT_EQ(w[(o * 5 + i) * 9 + k], (o == i && k == 4) ? 1.0 : 0.0);
  w = m.values("even_kernel"); // centre index k/2 = 1 on both axes
  EXPECT_EQ(w[(0 * 2 + 0) * 4 + 3], 1.0);
  EXPECT_EQ(w[(1 * 2 + 1) * 4 + 3], 1.0);
  EXPECT_EQ(w[(0 * 2 + 0) * 4 + 0], 0.0);

  Model bad;
  bad.add("fc", {3, 4}, {"dirac", 0, 1, ""});
  EXPECT_FALSE(bad.init(0, error));
  EXPECT_NE(error.find("'fc' has dirac init"), std::string::npos) << error;
}

TEST(Init, CopiesComeLast) {
  Model m;
  m.add("ema.ema.w", {10}, {"copy", 0, 0, "ema.w"}); // a copy of a copy
  m.add("ema.w", {10}, {"copy", 0, 0, "w"});
  m.add("half", {10}, {"copy", 0, 0, "w"}, DType::BF16);
  m.add("w", {10}, {"normal", 0, 1, ""});
  std::string error;
  ASSERT_TRUE(m.init(1, error)) << error;
  EXPECT_EQ(m.bytes("ema.w"), m.bytes("w"));
  EXPECT_EQ(m.bytes("ema.ema.w"), m.bytes("w"));
  std::vector<double> w = m.values("w"), h = m.values("half");
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(h[i], w[i], std::abs(w[i]) / 128);

  Model missing;
  missing.add("ema.w", {10}, {"copy", 0, 0, "w2"});
  EXPECT_FALSE(missing.init(0, error));
  EXPECT_NE(error.find("'w2', which is not a state tensor"), std::string::npos);
  Model shape;
  shape.add("w", {10}, {"normal", 0, 1, ""});
  shape.add("ema.w", {5, 2}, {"copy", 0, 0, "w"});
  EXPECT_FALSE(shape.init(0, error));
  Model cycle;
  cycle.add("a", {1}, {"copy", 0, 0, "b"});
  cycle.add("b", {1}, {"copy", 0, 0, "a"});
  EXPECT_FALSE(cycle.init(0, error));
  EXPECT_NE(error.find("cycle"), std::string::npos);
  Model unknown;
  unknown.add("a", {1}, {"kaiming", 0, 0, ""});
  EXPECT_FALSE(unknown.init(0, error));
  EXPECT_NE(error.find("unknown init kind 'kaiming'"), std::string::npos);
}

TEST(Init, JacobiEigenDecomposition) {
  const int n = 9;
  TensorRandom rng(5, "matrix");
  std::vector<double> a(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j)
      a[i * n + j] = a[j * n + i] = rng.normal(i * n + j);
  std::vector<double> values, vectors;
  symmetricEigen(a, n, values, vectors);
  for (int j = 1; j < n; ++j)
    EXPECT_LE(values[j - 1], values[j]);
  for (int p = 0; p < n; ++p)
    for (int q = 0; q < n; ++q) {
      double dot = 0, av = 0;
      for (int k = 0; k < n; ++k)
        dot += vectors[k * n + p] * vectors[k * n + q];
      EXPECT_NEAR(dot, p == q ? 1.0 : 0.0, 1e-12);
      // (A v_q)[p] == lambda_q v_q[p]
      for (int k = 0; k < n; ++k)
        av += a[p * n + k] * vectors[k * n + q];
      EXPECT_NEAR(av, values[q] * vectors[p * n + q], 1e-11);
    }
  // A diagonal matrix: its own eigenvalues, sorted.
  std::vector<double> diag = {3, 0, 0, 0, -1, 0, 0, 0, 2};
  symmetricEigen(diag, 3, values, vectors);
  EXPECT_EQ(values, (std::vector<double>{-1, 2, 3}));
}

/// sum(y y^T) over the k x k patches p of the first `images` images, with
/// y = W p for the first D rows of `weights`; `count` gets the patch count.
static std::vector<double> whitenedSecondMoments(const WhiteningData &data, int64_t images, int64_t k,
                                                 const std::vector<double> &weights, double &count) {
  const int64_t c = data.c, h = data.h, w = data.w, d = c * k * k;
  std::vector<double> sum(d * d, 0.0), patch(d), y(d);
  count = 0;
  for (int64_t i = 0; i < images; ++i)
    for (int64_t py = 0; py + k <= h; ++py)
      for (int64_t px = 0; px + k <= w; ++px) {
        int64_t t = 0;
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t a = 0; a < k; ++a)
            for (int64_t b = 0; b < k; ++b)
              patch[t++] = data.images[((i * c + ch) * h + py + a) * w + px + b];
        for (int64_t r = 0; r < d; ++r) {
          y[r] = 0;
          for (int64_t s = 0; s < d; ++s)
            y[r] += weights[r * d + s] * patch[s];
        }
        for (int64_t r = 0; r < d; ++r)
          for (int64_t s = 0; s < d; ++s)
            sum[r * d + s] += y[r] * y[s];
        ++count;
      }
  return sum;
}

TEST(Init, PatchWhiteningWhitensThePatches) {
  // Correlated 3-channel images: channel 1 follows channel 0, neighbouring
  // pixels are correlated, plus a low-variance channel.
  const int64_t n = 200, c = 3, h = 8, w = 8, k = 2, d = c * k * k;
  std::vector<float> images(n * c * h * w);
  TensorRandom rng(1, "images");
  uint64_t counter = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        double base = rng.normal(counter++) + 0.3;
        double smooth = x > 0 ? images[((i * c + 0) * h + y) * w + x - 1] : 0;
        float v0 = static_cast<float>(0.6 * smooth + base);
        images[((i * c + 0) * h + y) * w + x] = v0;
        images[((i * c + 1) * h + y) * w + x] =
            static_cast<float>(0.8 * v0 + 0.2 * rng.normal(counter++));
        images[((i * c + 2) * h + y) * w + x] =
            static_cast<float>(0.05 * rng.normal(counter++));
      }
  WhiteningData data{images.data(), n, c, h, w};

  Model m;
  m.add("whiten.weight", {2 * d, c, k, k}, {"patch_whitening", kWhiteningEps, kWhiteningImages, ""});
  std::string error;
  EXPECT_FALSE(m.init(0, error)) << "needs the data";
  ASSERT_TRUE(m.init(0, error, &data)) << error;
  std::vector<double> wt = m.values("whiten.weight");
  std::vector<double> eig, exact;
  ASSERT_TRUE(patchWhiteningWeights(data, k, k, exact, &eig, error));
  for (int64_t r = 1; r < d; ++r)
    EXPECT_GE(eig[r - 1], eig[r]) << "descending";
  // The second half is the negated first half.
  for (int64_t i = 0; i < d * d; ++i)
    EXPECT_EQ(wt[d * d + i], -wt[i]);

  // Whitened patches: E[y y^T] = diag(lambda / (lambda + eps)), i.e. the
  // identity for the components well above eps.
  double count = 0;
  std::vector<double> cov = whitenedSecondMoments(data, n, k, exact, count);
  int kept = 0;
  for (int64_t r = 0; r < d; ++r) {
    double expected = eig[r] / (eig[r] + kWhiteningEps);
    for (int64_t s = 0; s < d; ++s) {
      double v = cov[r * d + s] / count;
      EXPECT_NEAR(v, r == s ? expected : 0.0, 1e-9) << r << "," << s;
    }
    if (eig[r] > 100 * kWhiteningEps) {
      EXPECT_NEAR(cov[r * d + r] / count, 1.0, 0.011);
      ++kept;
    }
  }
  EXPECT_GE(kept, 4);
  // The float weights in the arena are the double ones, rounded.
  for (int64_t i = 0; i < 2 * d * d; ++i)
    EXPECT_EQ(wt[i], static_cast<double>(static_cast<float>(
                         i < d * d ? exact[i] : -exact[i - d * d])));

  // myrtle.ai's settings: D filters (no negated half), eps 1e-2, the first
  // 100 images, the covariance over n - 1. Its whitened patches have
  // E[y y^T] = diag(lambda / (lambda + eps)) with the same divisor.
  Model fast;
  fast.add("whiten.weight", {d, c, k, k}, {"patch_whitening", 1e-2, 100, "", 1});
  ASSERT_TRUE(fast.init(0, error, &data)) << error;
  std::vector<double> fastWt = fast.values("whiten.weight");
  ASSERT_EQ(fastWt.size(), static_cast<size_t>(d * d));
  std::vector<double> fastEig;
  WhiteningSettings settings{1e-2, 100, 1, false};
  ASSERT_TRUE(patchWhiteningWeights(data, k, k, exact, &fastEig, error, settings));
  double patches = 0;
  std::vector<double> fastCov = whitenedSecondMoments(data, 100, k, exact, patches);
  for (int64_t r = 0; r < d; ++r) {
    EXPECT_EQ(fastWt[r], static_cast<double>(static_cast<float>(exact[r])));
    for (int64_t s = 0; s < d; ++s)
      EXPECT_NEAR(fastCov[r * d + s] / (patches - 1),
                  r == s ? fastEig[r] / (fastEig[r] + 1e-2) : 0.0, 1e-9)
          << r << "," << s;
  }

  Model wrong;
  wrong.add("whiten.weight", {d + 1, c, k, k},
            {"patch_whitening", kWhiteningEps, kWhiteningImages, ""});
  EXPECT_FALSE(wrong.init(0, error, &data));
  EXPECT_NE(error.find("needs shape [24, 3, 2, 2]"), std::string::npos)
      << error;
  WhiteningData tiny{images.data(), 1, c, 1, 1};
  EXPECT_FALSE(patchWhiteningWeights(tiny, 2, 2, exact, nullptr, error));
}

TEST(Init, ARemovedNonzeroBiasFoldsIntoItsRunningMean) {
  // conv.bias was removed by tcc-bn-bias-elimination; bn.running_mean is the
  // mean the batch norm subtracts in evaluation: (x + b) - m = x - (m - b).
  ModelInfo info;
  StateTensor bias, mean, other;
  bias.name = "conv.bias";
  bias.shape = {3};
  bias.foldedInto = "bn.running_mean";
  bias.offset = 0;
  mean.name = "bn.running_mean";
  mean.shape = {3};
  mean.role = StateRole::Buffer;
  mean.offset = 64;
  other.name = "fc.bias"; // removed too, but loaded as zeros: no note
  other.shape = {3};
  other.foldedInto = "bn.running_mean";
  other.offset = 128;
  info.state = {bias, mean, other};
  float state[48] = {};
  const float b[3] = {0.5f, -1.0f, 0.0f}, m[3] = {1.0f, 1.0f, 2.0f};
  std::memcpy(state, b, sizeof b);
  std::memcpy(state + 16, m, sizeof m);
  std::vector<std::string> notes = foldRemovedBiases(info, state);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("conv.bias is not zero"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("folded into bn.running_mean"), std::string::npos) << notes[0];
  EXPECT_EQ(state[16], 0.5f);
  EXPECT_EQ(state[17], 2.0f);
  EXPECT_EQ(state[18], 2.0f);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(state[i], 0.0f) << "the bias is zero after folding";
  // Folding again changes nothing: the bias is zero now.
  EXPECT_TRUE(foldRemovedBiases(info, state).empty());
  EXPECT_EQ(state[16], 0.5f);
}
