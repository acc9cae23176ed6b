//===- ScratchPacking.cpp - Offsets for the scratch values of a step ------===//
//
// Two greedy orders, as TFLite's and XLA's heap planners try several: first
// fit by start, and largest first where the step is small enough for its
// quadratic scan.
//
//===----------------------------------------------------------------------===//

#include "passes/ScratchPacking.h"

#include "ir/TccPlan.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <tuple>
#include <vector>

using namespace llvm;
using namespace mlir::tcc;

/// Places each interval, in the order of `order`, at the lowest offset that
/// no interval placed before it and live at the same time overlaps; returns
/// the bytes used. Any order; the scan over every placed interval makes it
/// quadratic, so packScratch uses it for the largest-first order of steps
/// of up to kLargestFirstLimit values only.
int64_t mlir::tcc::packing::placeInOrder(MutableArrayRef<ScratchInterval> intervals,
                                         ArrayRef<size_t> order) {
  struct Placed {
    int64_t start, end, offset, limit; // limit: the aligned end of its bytes
  };
  int64_t total = 0;
  std::vector<Placed> placed; // by offset
  for (size_t k : order) {
    ScratchInterval &current = intervals[k];
    int64_t offset = 0;
    for (const Placed &other : placed) {
      if (other.end < current.start || current.end < other.start)
        continue;
      if (offset + current.size <= other.offset)
        break;
      offset = std::max(offset, other.limit);
    }
    current.offset = offset;
    total = std::max(total, offset + current.size);
    auto at = llvm::upper_bound(placed, offset, [](int64_t o, const Placed &p) {
      return o < p.offset;
    });
    placed.insert(at, Placed{current.start, current.end, offset,
                             alignToPlan(offset + current.size)});
  }
  return alignToPlan(total);
}

namespace {

/// The byte ranges of the values live at one time, by offset, for first fit
/// in start order: every range here is live when the next value starts, so
/// they are disjoint and the fit is the lowest gap that is large enough.
/// Kept in blocks of about kBlock ranges, each with an upper bound of its
/// gaps, so that a fit skips whole blocks: a step of 30K values (a ResNet of
/// thousands of blocks) keeps some 10K live, which a scan of every range
/// made the compiler's slowest part.
class LiveRanges {
public:
  /// The lowest offset at which `size` bytes overlap no range.
  int64_t fit(int64_t size) const {
    int64_t below = 0; // the highest limit of the ranges before
    for (const Block &block : blocks) {
      if (block.ranges.front().offset - below >= size)
        return below;
      if (block.gapBound >= size)
        for (const Range &range : block.ranges) {
          if (range.offset - below >= size)
            return below;
          below = std::max(below, range.limit);
        }
      below = std::max(below, block.maxLimit);
    }
    return below;
  }

  void insert(int64_t offset, int64_t limit) {
    Range range{offset, limit};
    if (blocks.empty()) {
      blocks.push_back(Block{{range}, 0, limit});
      return;
    }
    Block &block = blockFor(offset);
    block.ranges.insert(llvm::upper_bound(block.ranges, offset,
                                          [](int64_t o, const Range &r) {
                                            return o < r.offset;
                                          }),
                        range);
    size_t index = &block - blocks.data();
    if (block.ranges.size() <= 2 * kBlock) {
      refresh(block);
      return;
    }
    Block upper;
    upper.ranges.assign(block.ranges.begin() + kBlock, block.ranges.end());
    block.ranges.resize(kBlock);
    refresh(block);
    refresh(upper);
    blocks.insert(blocks.begin() + index + 1, std::move(upper));
  }

  void erase(int64_t offset, int64_t limit) {
    // Ranges of one offset (empty ones beside another) may span blocks.
    auto block = llvm::lower_bound(blocks, offset, [](const Block &b, int64_t o) {
      return b.ranges.back().offset < o;
    });
    for (; block != blocks.end(); ++block) {
      auto it = llvm::find_if(block->ranges, [&](const Range &r) {
        return r.offset == offset && r.limit == limit;
      });
      if (it == block->ranges.end())
        continue;
      block->ranges.erase(it);
      if (block->ranges.empty())
        blocks.erase(block);
      else
        refresh(*block);
      return;
    }
    llvm_unreachable("erasing a range that is not live");
  }

private:
  static constexpr size_t kBlock = 64;
  struct Range {
    int64_t offset, limit;
  };
  struct Block {
    std::vector<Range> ranges;
    /// At least every gap between two ranges of the block (the ranges below
    /// the block can only shrink them).
    int64_t gapBound;
    int64_t maxLimit;
  };

  /// The block whose ranges span `offset`: the last starting at or below it.
  Block &blockFor(int64_t offset) {
    auto after = llvm::upper_bound(blocks, offset, [](int64_t o, const Block &b) {
      return o < b.ranges.front().offset;
    });
    return after == blocks.begin() ? blocks.front() : *std::prev(after);
  }

  static void refresh(Block &block) {
    block.gapBound = 0;
    block.maxLimit = block.ranges.front().limit;
    for (const Range &range : llvm::drop_begin(block.ranges)) {
      block.gapBound = std::max(block.gapBound, range.offset - block.maxLimit);
      block.maxLimit = std::max(block.maxLimit, range.limit);
    }
  }

  std::vector<Block> blocks; // by offset
};

} // namespace

/// First fit in start order (values as they are computed): placeInOrder's
/// result for the order by start, in O(n sqrt n): the ranges that ended
/// before a value starts leave LiveRanges before it is placed.
int64_t mlir::tcc::packing::placeByStart(MutableArrayRef<ScratchInterval> intervals,
                                         ArrayRef<size_t> byStart) {
  LiveRanges live;
  // The placed ranges by end, the earliest first.
  using Ending = std::tuple<int64_t, int64_t, int64_t>; // end, offset, limit
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ending;
  int64_t total = 0;
  for (size_t k : byStart) {
    ScratchInterval &current = intervals[k];
    while (!ending.empty() && std::get<0>(ending.top()) < current.start) {
      live.erase(std::get<1>(ending.top()), std::get<2>(ending.top()));
      ending.pop();
    }
    current.offset = live.fit(current.size);
    total = std::max(total, current.offset + current.size);
    int64_t limit = alignToPlan(current.offset + current.size);
    live.insert(current.offset, limit);
    ending.emplace(current.end, current.offset, limit);
  }
  return alignToPlan(total);
}

/// Above this many values largest first is not tried: placeInOrder is
/// quadratic (a step of 140K values took a minute), and first fit by start
/// alone is what steps that size get.
static constexpr size_t kLargestFirstLimit = 32768;

/// Offline packing of the intervals: the better of two greedy orders, first
/// fit by start (values as they are computed) and largest first (TFLite's
/// "greedy by size", which fragments less when long-lived values of
/// different sizes interleave, as 16-bit values and their f32 copies do).
int64_t mlir::tcc::packScratch(MutableArrayRef<ScratchInterval> intervals) {
  SmallVector<size_t> byStart(intervals.size()), bySize;
  std::iota(byStart.begin(), byStart.end(), 0);
  llvm::stable_sort(byStart, [&](size_t a, size_t b) {
    return intervals[a].start < intervals[b].start;
  });
  int64_t firstFit = packing::placeByStart(intervals, byStart);
  if (intervals.size() > kLargestFirstLimit)
    return firstFit;
  SmallVector<int64_t> firstFitOffsets;
  for (const ScratchInterval &i : intervals)
    firstFitOffsets.push_back(i.offset);
  bySize = byStart;
  llvm::stable_sort(bySize, [&](size_t a, size_t b) {
    return intervals[a].size > intervals[b].size;
  });
  int64_t largestFirst = packing::placeInOrder(intervals, bySize);
  if (largestFirst < firstFit)
    return largestFirst;
  for (auto [interval, offset] : llvm::zip(intervals, firstFitOffsets))
    interval.offset = offset;
  return firstFit;
}

