//===- ChannelsLast.cpp - NHWC storage around 16-bit convolutions ---------===//
//
// See Passes.td and docs/passes.md. A union-find over the values whose
// layout matters: the ops that need one layout for several values join
// their classes, the values that must stay NCHW pin theirs, and a class
// with an activation of a 16-bit convolution and no pin is stored NHWC.
// Casts join last, only where that pins no class that wants NHWC: where
// they do not join, they convert.
//
//===----------------------------------------------------------------------===//

#include "passes/PassReport.h"
#include "passes/Passes.h"
#include "passes/SixteenBit.h"

#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CHANNELSLAST
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The classes of one step function's layout-sensitive values.
class LayoutClasses {
public:
  /// `v`'s class (a new one the first time), or -1 if its layout does not
  /// matter.
  int classOf(Value v) {
    if (!layoutMatters(v))
      return -1;
    auto [it, added] = index.try_emplace(v, int(parent.size()));
    if (added) {
      parent.push_back(it->second);
      pinned.push_back(false);
      wanted.push_back(false);
    }
    return find(it->second);
  }
  void join(Value a, Value b) {
    int x = classOf(a), y = classOf(b);
    if (x < 0 || y < 0 || x == y)
      return;
    parent[y] = x;
    pinned[x] = pinned[x] || pinned[y];
    wanted[x] = wanted[x] || wanted[y];
  }
  /// Joins the classes of `a` and `b` unless that would pin a class that
  /// would be NHWC; false if it did not.
  bool joinIfAgreeing(Value a, Value b) {
    int x = classOf(a), y = classOf(b);
    if (x < 0 || y < 0 || x == y)
      return true;
    auto last = [&](int c) { return wanted[c] && !pinned[c]; };
    if ((last(x) && pinned[y]) || (last(y) && pinned[x]))
      return false;
    join(a, b);
    return true;
  }
  void pin(Value v) {
    if (int x = classOf(v); x >= 0)
      pinned[x] = true;
  }
  void want(Value v) {
    if (int x = classOf(v); x >= 0)
      wanted[x] = true;
  }
  bool wants(Value v) {
    int x = classOf(v);
    return x >= 0 && wanted[x];
  }
  bool channelsLast(Value v) {
    int x = classOf(v);
    return x >= 0 && wanted[x] && !pinned[x];
  }

private:
  int find(int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  llvm::DenseMap<Value, int> index;
  std::vector<int> parent;
  std::vector<bool> pinned, wanted;
};

/// The values of `op` that must share one layout, if it can run on either:
/// for a convolution its activations (input, output and their gradients:
/// the weight and its gradient are left out and pinned by the caller).
/// False if the op reads and writes NCHW only.
bool layoutFreeValues(Operation *op, SmallVectorImpl<Value> &values) {
  auto all = [&] {
    values.append(op->operand_begin(), op->operand_end());
    values.append(op->result_begin(), op->result_end());
    return true;
  };
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    values.append({conv.getInput(), conv.getResult()});
    return isSixteenBit(conv.getInput());
  }
  if (auto conv = dyn_cast<Conv2dBackwardDataOp>(op)) {
    values.append({conv.getGrad(), conv.getResult()});
    return isSixteenBit(conv.getGrad());
  }
  if (auto conv = dyn_cast<Conv2dBackwardFilterOp>(op)) {
    values.append({conv.getGrad(), conv.getInput()});
    return isSixteenBit(conv.getGrad());
  }
  // Indexed by channel (batch norm; a bias gradient: the sum over all axes
  // but the channels) or by pixel (the pools): the kernels take either.
  if (isa<BatchNormOp, BatchNormInferenceOp, BatchNormApplyOp, BatchNormBackwardOp,
          MaxPool2dOp, MaxPool2dBackwardOp, AvgPool2dOp, AvgPool2dBackwardOp, GlobalAvgPoolOp,
          GlobalMaxPoolOp, GlobalAvgPoolBackwardOp, GlobalMaxPoolBackwardOp>(op))
    return all();
  if (auto sum = dyn_cast<ReduceSumOp>(op))
    return sum.getAxes() == ArrayRef<int64_t>{0, 2, 3} && all();
  // Zero channels after each sample's planes or each pixel's channels.
  if (isa<PadChannelsOp>(op))
    return all();
  // Element i of the result from element i of the operands (a cast too,
  // but casts join last).
  if (op->hasTrait<mlir::OpTrait::Elementwise>() || isa<ScaleByOp>(op))
    return all();
  return false;
}

/// The convolutions' weights and weight gradients (KCRS, as cuDNN's
/// engines take them next to NHWC activations).
Value convWeight(Operation *op) {
  if (auto conv = dyn_cast<Conv2dOp>(op))
    return conv.getWeight();
  if (auto conv = dyn_cast<Conv2dBackwardDataOp>(op))
    return conv.getWeight();
  if (auto conv = dyn_cast<Conv2dBackwardFilterOp>(op))
    return conv.getResult();
  return nullptr;
}

struct Counts {
  int64_t values = 0, relayouts = 0, keptNchw = 0;
};

void assignLayouts(func::FuncOp fn, Counts &counts) {
  LayoutClasses classes;
  SmallVector<Block *> blocks; // the body and nested ones (a micro-batch loop's)
  fn.getBody().walk([&](Block *block) { blocks.push_back(block); });
  SmallVector<CastOp> casts;
  for (Block *block : blocks)
    for (BlockArgument arg : block->getArguments())
      classes.pin(arg);
  for (Block *block : blocks)
    for (Operation &op : *block) {
      if (auto cast = dyn_cast<CastOp>(op)) {
        casts.push_back(cast);
        continue;
      }
      SmallVector<Value> values;
      if (!layoutFreeValues(&op, values)) {
        for (Value v : op.getOperands())
          classes.pin(v);
        for (Value v : op.getResults())
          classes.pin(v);
        continue;
      }
      if (Value weight = convWeight(&op)) {
        classes.pin(weight);
        for (Value v : values)
          classes.want(v);
      }
      if (Value *first = llvm::find_if(values, layoutMatters); first != values.end())
        for (Value v : values)
          classes.join(*first, v);
    }
  // The terminators' operands and the values an op with a region reads or
  // returns were pinned above (no layout free op). The casts join where
  // they agree, in order.
  llvm::DenseSet<Operation *> converting;
  for (CastOp cast : casts)
    if (!classes.joinIfAgreeing(cast.getInput(), cast.getResult()))
      converting.insert(cast);

  fn.getBody().walk([&](Operation *inner) {
    Operation &op = *inner;
    bool last = llvm::any_of(op.getResults(), [&](Value v) { return classes.channelsLast(v); });
    for (Value v : op.getResults()) {
      if (classes.channelsLast(v))
        ++counts.values;
      else if (classes.wants(v))
        ++counts.keptNchw;
    }
    if (last)
      op.setAttr(kChannelsLastAttr, UnitAttr::get(op.getContext()));
    if (converting.contains(&op) && (classes.channelsLast(op.getOperand(0)) ||
                                     classes.channelsLast(op.getResult(0))))
      ++counts.relayouts;
  });
}

struct ChannelsLastPass : mlir::tcc::impl::ChannelsLastBase<ChannelsLastPass> {
  void runOnOperation() override {
    Counts counts;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal())
        assignLayouts(fn, counts);
    Builder b(&getContext());
    recordPassResult(getOperation(), "channels-last", "values",
                     b.getI64IntegerAttr(counts.values));
    recordPassResult(getOperation(), "channels-last", "relayouts",
                     b.getI64IntegerAttr(counts.relayouts));
    recordPassResult(getOperation(), "channels-last", "kept_nchw",
                     b.getI64IntegerAttr(counts.keptNchw));
  }
};

} // namespace
