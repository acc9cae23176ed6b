//===- EmulatedTokensTest.cpp - Device token kernels against plain loops
//---===//
//
// The cuda target's token kernels (runtime/cuda/device/Embedding.cuh,
// TokenLoss.cuh, the sequence-target gather of StepOps.cuh) under host
// emulation, each against a plain loop written here: repeated ids, an id
// outside the table, the padding row, ignored positions, a batch whose every
// position is ignored, the test batch padded past the end of the data.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/cuda/device/Embedding.cuh"
#include "runtime/cuda/device/StepOps.cuh"
#include "runtime/cuda/device/TokenLoss.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

namespace cuda = tcc::rt::cuda;
using tcc::rt::kernels::Reduction;

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = uniform(rng);
  return v;
}

constexpr int64_t kRows = 6, kDim = 5;
// Repeated ids, the padding row 2, and 9 (outside the table: read as row 0).
const std::vector<float> kIds = {3, 1, 3, 2, 0, 9, 3, 5, 1, 2, 3};

TEST(EmbeddingOnDevice, ForwardGathersRows) {
  const int64_t n = int64_t(kIds.size());
  const auto weight = randomValues(kRows * kDim, 1);
  std::vector<float> out(n * kDim);
  cuda::embedding_forward<float, float>(nullptr, n, kRows, kDim, kIds.data(),
                                        weight.data(), out.data());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = kIds[i] < kRows ? int64_t(kIds[i]) : 0;
    for (int64_t j = 0; j < kDim; ++j)
      ASSERT_EQ(out[i * kDim + j], weight[row * kDim + j])
          << "position " << i << ", column " << j;
  }
}

// The sum of each row in position order, in double, rounded once: the
// bits must be these, not merely close (the kernel promises the cpu's).
TEST(EmbeddingOnDevice,
     BackwardSumsEachRowInPositionOrderWithoutThePaddingRow) {
  const int64_t n = int64_t(kIds.size());
  for (int64_t padding : {int64_t(-1), int64_t(2)}) {
    const auto dout = randomValues(n * kDim, 2);
    std::vector<float> dweight(kRows * kDim,
                               7.0f); // overwritten, every element
    std::vector<char> workspace(
        size_t(tcc::cuda::embeddingWorkspaceBytes(n, kRows)));
    cuda::embedding_backward<float, float>(
        nullptr, workspace.data(), int64_t(workspace.size()), n, kRows, kDim,
        padding, dout.data(), kIds.data(), dweight.data());
    for (int64_t v = 0; v < kRows; ++v)
      for (int64_t j = 0; j < kDim; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < n; ++i)
          if ((kIds[i] < kRows ? int64_t(kIds[i]) : 0) == v && v != padding)
            sum += double(dout[i * kDim + j]);
        ASSERT_EQ(dweight[v * kDim + j], float(sum))
            << "padding " << padding << ", row " << v << ", column " << j;
      }
    // Row 4 is picked by no id; the padding row by two.
    EXPECT_EQ(dweight[4 * kDim], 0.0f);
    if (padding == -1)
      EXPECT_NE(dweight[2 * kDim], 0.0f);
  }
}

TEST(EmbeddingOnDevice, RefusesTooSmallAWorkspace) {
  const int64_t n = int64_t(kIds.size());
  std::vector<float> dout(n * kDim), dweight(kRows * kDim);
  std::vector<char> workspace(
      size_t(tcc::cuda::embeddingWorkspaceBytes(n, kRows)) - 4);
  auto backward = [&] {
    cuda::embedding_backward<float, float>(
        nullptr, workspace.data(), int64_t(workspace.size()), n, kRows, kDim,
        -1, dout.data(), kIds.data(), dweight.data());
  };
  EXPECT_THROW(backward(), std::runtime_error);
}

constexpr int64_t kClasses = 7;

/// The loss of row i (label in range), in double.
double rowLoss(const float *row, int64_t label, double smoothing) {
  double mx = row[0], sum = 0;
  for (int64_t j = 1; j < kClasses; ++j)
    mx = std::max(mx, double(row[j]));
  for (int64_t j = 0; j < kClasses; ++j)
    sum += std::exp(double(row[j]) - mx);
  const double lse = mx + std::log(sum);
  double loss = (1 - smoothing) * (lse - row[label]);
  for (int64_t j = 0; j < kClasses; ++j)
    loss += smoothing / kClasses * (lse - row[j]);
  return loss;
}

struct TokenCase {
  std::vector<int64_t> labels;
  double smoothing;
  Reduction reduction;
};

TEST(TokenLossOnDevice, MatchesPlainLoops) {
  const int64_t ignore = -100;
  const std::vector<TokenCase> cases = {
      {{3, ignore, 0, 6, 6, ignore, 2, 1}, 0.0, Reduction::Mean},
      {{3, ignore, 0, 6, 6, ignore, 2, 1}, 0.1, Reduction::Sum},
      {{1, 2, 3, 4, 5, 6, 0, 1}, 0.0, Reduction::Mean},
      {{ignore, ignore, ignore, ignore, ignore, ignore, ignore, ignore},
       0.0,
       Reduction::Mean}};
  for (const TokenCase &c : cases) {
    const int64_t n = int64_t(c.labels.size());
    const auto logits = randomValues(n * kClasses, 3);
    const float dloss = 0.75f;
    float loss = -1;
    int64_t correct = -1;
    std::vector<float> dlogits(n * kClasses, 7.0f);
    std::vector<char> workspace(size_t(tcc::cuda::tokenLossWorkspaceBytes()));
    cuda::token_cross_entropy_forward(nullptr, n, kClasses, logits.data(),
                                      c.labels.data(), ignore, c.smoothing,
                                      c.reduction, &loss);
    cuda::token_cross_entropy_backward(
        nullptr, workspace.data(), int64_t(workspace.size()), n, kClasses,
        logits.data(), c.labels.data(), ignore, c.smoothing, c.reduction,
        &dloss, dlogits.data());
    cuda::count_correct_tokens(nullptr, n, kClasses, logits.data(),
                               c.labels.data(), ignore, &correct);
    double total = 0;
    int64_t counted = 0, right = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (c.labels[i] == ignore)
        continue;
      const float *row = logits.data() + i * kClasses;
      total += rowLoss(row, c.labels[i], c.smoothing);
      ++counted;
      int64_t best = 0;
      for (int64_t j = 1; j < kClasses; ++j)
        best = row[j] > row[best] ? j : best;
      right += best == c.labels[i];
    }
    const bool mean = c.reduction == Reduction::Mean;
    const double expected = mean ? (counted ? total / counted : 0.0) : total;
    SCOPED_TRACE(testing::Message() << "smoothing " << c.smoothing << ", mean "
                                    << mean << ", counted " << counted);
    EXPECT_NEAR(loss, expected, 1e-6 * std::max(1.0, std::fabs(expected)));
    EXPECT_EQ(correct, right);
    const double scale = dloss / (mean && counted ? double(counted) : 1.0);
    for (int64_t i = 0; i < n; ++i) {
      const float *row = logits.data() + i * kClasses;
      double mx = row[0], sum = 0;
      for (int64_t j = 1; j < kClasses; ++j)
        mx = std::max(mx, double(row[j]));
      for (int64_t j = 0; j < kClasses; ++j)
        sum += std::exp(double(row[j]) - mx);
      for (int64_t j = 0; j < kClasses; ++j) {
        double g = 0;
        if (c.labels[i] != ignore)
          g = scale *
              (std::exp(double(row[j]) - mx) / sum - c.smoothing / kClasses -
               (j == c.labels[i] ? 1 - c.smoothing : 0.0));
        ASSERT_NEAR(dlogits[i * kClasses + j], g, 1e-6)
            << "row " << i << ", class " << j;
      }
    }
  }
}

TEST(TokenLossOnDevice, RefusesTooSmallAWorkspace) {
  std::vector<float> logits(kClasses), dlogits(kClasses);
  const int64_t label = 1;
  const float dloss = 1;
  char workspace[4];
  EXPECT_THROW(cuda::token_cross_entropy_backward(
                   nullptr, workspace, 4, 1, kClasses, logits.data(), &label,
                   -100, 0.0, Reduction::Mean, &dloss, dlogits.data()),
               std::runtime_error);
}

// Sequence targets: the training gather copies each sample's T targets and
// counts the positions not ignored; the test gather pads past the end of
// the data with ignore_index targets, which it does not count.
TEST(TokenBatchOnDevice, GathersTargetsAndCountsThePositionsNotIgnored) {
  constexpr int64_t t = 4, n = 3, size = 2;
  const std::vector<float> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<int64_t> targets = {2,    3,    4,  -100, 6,  7,
                                        -100, -100, 10, 11,   12, 1};
  const float mean = 0, stdev = 1;
  tcc::rt::StepControl control{};
  control.run.stepsPerEpoch = 1;
  tcc::rt::StepBuffers b;
  b.train = b.test = tcc::rt::DataView{ids.data(), true, targets.data(), n};
  b.batch.c = 1, b.batch.h = 1, b.batch.w = t;
  b.batch.shuffle = b.batch.augmentOn = false;
  b.batch.targets = t;
  b.batch.sequence = true;
  b.batch.mean = &mean, b.batch.std = &stdev;
  b.control = &control;
  std::vector<float> images(size * t);
  std::vector<int64_t> labels(size * t);
  const int64_t step = 0;
  cuda::gather_train_batch(nullptr, b, &step, size, images.data(),
                           labels.data());
  EXPECT_EQ(images, std::vector<float>(ids.begin(), ids.begin() + size * t));
  EXPECT_EQ(labels,
            std::vector<int64_t>(targets.begin(), targets.begin() + size * t));
  EXPECT_EQ(control.valid, 5);
  control.evalBatch = 1; // rows 2 and 3: the last row, then padding
  cuda::gather_eval_batch(nullptr, b, size, images.data(), labels.data());
  EXPECT_EQ(images, (std::vector<float>{9, 10, 11, 12, 0, 0, 0, 0}));
  EXPECT_EQ(labels,
            (std::vector<int64_t>{10, 11, 12, 1, -100, -100, -100, -100}));
  EXPECT_EQ(control.valid, 4);
  EXPECT_EQ(control.evalBatch, 2);
}

} // namespace
