//===- ScratchPackingTest.cpp - The memory plan's packing ----------------===//
//
// placeByStart (blocks of live ranges, O(n sqrt n)) must place every value
// where the quadratic reference placeInOrder does, for random steps with
// empty values, equal starts and ranges spanning many blocks.
//
//===----------------------------------------------------------------------===//

#include "passes/ScratchPacking.h"

#include "ir/TccPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

using namespace mlir::tcc;

namespace {

std::vector<ScratchInterval> randomStep(std::mt19937_64 &rng, int values, int64_t ops) {
  std::vector<ScratchInterval> step;
  for (int i = 0; i < values; ++i) {
    int64_t start = rng() % ops;
    // A quarter long-lived (activations kept for the backward), the rest
    // temporaries; a tenth empty, a third whole alignment units.
    int64_t length = rng() % 4 == 0 ? rng() % ops : rng() % 5;
    int64_t size = rng() % 10 == 0  ? 0
                   : rng() % 3 == 0 ? kPlanAlignment * int64_t(1 + rng() % 4)
                                    : int64_t(1 + rng() % 300);
    step.push_back({start, start + length, size});
  }
  std::stable_sort(step.begin(), step.end(),
                   [](const auto &a, const auto &b) { return a.start < b.start; });
  return step;
}

TEST(ScratchPacking, ByStartPlacesAsTheReferenceScan) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    // Up to 600 values, so that hundreds are live at once (many blocks).
    std::vector<ScratchInterval> reference =
        randomStep(rng, 1 + rng() % 600, 1 + rng() % 300);
    std::vector<ScratchInterval> fast = reference;
    std::vector<size_t> order(reference.size());
    std::iota(order.begin(), order.end(), 0);
    int64_t referenceBytes = packing::placeInOrder(reference, order);
    ASSERT_EQ(packing::placeByStart(fast, order), referenceBytes) << "trial " << trial;
    for (size_t i = 0; i < fast.size(); ++i)
      ASSERT_EQ(fast[i].offset, reference[i].offset) << "trial " << trial << " value " << i;
  }
}

TEST(ScratchPacking, NoTwoLiveValuesShareBytes) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ScratchInterval> step = randomStep(rng, 1 + rng() % 300, 1 + rng() % 100);
    int64_t bytes = packScratch(step);
    EXPECT_EQ(bytes % kPlanAlignment, 0);
    for (size_t i = 0; i < step.size(); ++i) {
      const ScratchInterval &a = step[i];
      ASSERT_EQ(a.offset % kPlanAlignment, 0);
      ASSERT_LE(a.offset + a.size, bytes);
      for (size_t j = i + 1; j < step.size(); ++j) {
        const ScratchInterval &b = step[j];
        bool together = !(a.end < b.start || b.end < a.start);
        bool shared = a.size && b.size && a.offset < b.offset + b.size &&
                      b.offset < a.offset + a.size;
        ASSERT_FALSE(together && shared) << "trial " << trial << ": values " << i << ", " << j;
      }
    }
  }
}

} // namespace
