//===- MetricsTest.cpp - Accuracy counts and loss sums --------------------===//
#include "runtime/kernels/Metrics.h"
#include "TestUtil.h"

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

TEST(Metrics, CountCorrectFirstMaxAndValidRows) {
  const Vec logits = {
      0.1, 0.9, 0.3, // argmax 1
      0.5, 0.5, 0.2, // tie: first max, 0
      0.0, 0.1, 0.2, // argmax 2
      3.0, 1.0, 2.0, // argmax 0 (padded row when valid = 3)
  };
  const int64_t labels[] = {1, 1, 2, 0};
  EXPECT_EQ(count_correct(4, 3, logits.data(), labels, 4), 3);
  EXPECT_EQ(count_correct(4, 3, logits.data(), labels, 3), 2);
  EXPECT_EQ(count_correct(4, 3, logits.data(), labels, 0), 0);
  EXPECT_EQ(count_correct(4, 3, logits.data(), labels, 100), 3);
  const int64_t tieLabels[] = {1, 0, 2, 0};
  EXPECT_EQ(count_correct(4, 3, logits.data(), tieLabels, 4), 4);
  int64_t acc = 5;
  count_correct_accumulate(4, 3, logits.data(), labels, 4, &acc);
  EXPECT_EQ(acc, 8);
  // NaN counts as the maximum (torch.argmax).
  const Vec nanRow = {1.0, std::nan(""), 2.0};
  EXPECT_EQ(argmax_row(nanRow.data(), 3), 1);
}

TEST(Metrics, LossSum) {
  const Vec l = {0.5, 1.5, 2.0, 100.0};
  EXPECT_DOUBLE_EQ(loss_sum(4, l.data(), 3), 4.0);
  double s = 1.0;
  loss_sum_accumulate(4, l.data(), 4, &s);
  EXPECT_DOUBLE_EQ(s, 105.0);
}

} // namespace
