//===- BucketCollectives.cpp - The gradients' all-reduce in buckets -------===//
//
// See Passes.td and docs/passes.md. PyTorch DDP's reducer, at compile time:
// the one `tcc.all_reduce` of every gradient that tcc-build-train-step puts
// after the backward (ZeRO-2's `tcc.reduce_scatter`) becomes buckets in the
// order the backward computes the gradients, each placed right after the
// last of its gradients, so that its communication can overlap the rest of
// the backward. Every rank compiles the same program, so the placement is
// the same on every rank.
//
//===----------------------------------------------------------------------===//

#include "passes/DistributedStep.h"
#include "passes/HoistConversions.h"
#include "passes/PassReport.h"
#include "passes/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_BUCKETCOLLECTIVES
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The ops from `begin` up to `end` (excluded) that compute, counted as
/// kernelsPerStep counts kernels, collectives left out.
int64_t computeOpsBetween(Operation *begin, Operation *end) {
  int64_t ops = 0;
  for (Operation *op = begin; op && op != end; op = op->getNextNode())
    if (!isa<AllReduceOp, ReduceScatterOp>(op))
      ops += kernelsOf(*op);
  return ops;
}

/// Whether `op` is the gradients' one collective of a step function's
/// body, not split yet: its all-reduce, or ZeRO-2's reduce-scatter (FSDP's
/// are tcc-gather-parameters', per node). A micro-batch loop's collectives
/// are not the gradients'.
bool isWholeGradientReduction(Operation *op) {
  if (!isa<AllReduceOp, ReduceScatterOp>(op) || !op->hasAttr(kGradientsAttr) ||
      op->hasAttr(kBucketAttr) || !isa<func::FuncOp>(op->getParentOp()))
    return false;
  return isa<AllReduceOp>(op) || !gathersParameters(op->getParentOp());
}

/// The collective of `whole`'s kind over its operands `operands`, at `b`.
Operation *createBucket(OpBuilder &b, Operation *whole, ArrayRef<unsigned> operands) {
  SmallVector<Value> inputs;
  SmallVector<Type> chunks;
  for (unsigned i : operands) {
    inputs.push_back(whole->getOperand(i));
    chunks.push_back(whole->getResult(i).getType());
  }
  if (auto reduce = dyn_cast<AllReduceOp>(whole))
    return b.create<AllReduceOp>(whole->getLoc(), inputs, reduce.getReductionAttr());
  return b.create<ReduceScatterOp>(whole->getLoc(), chunks, inputs,
                                   cast<ReduceScatterOp>(whole).getRanks());
}

/// One gradient of the collective: its operand, the position of the op
/// that computes it (-1: an argument), its bytes in the message.
struct Gradient {
  unsigned operand;
  int64_t ready;
  int64_t bytes;
};

struct BucketCollectivesPass : mlir::tcc::impl::BucketCollectivesBase<BucketCollectivesPass> {
  using BucketCollectivesBase::BucketCollectivesBase;

  LogicalResult initialize(MLIRContext *context) override {
    if (bucketBytes <= 0 || firstBucketBytes < 0)
      return emitError(UnknownLoc::get(context))
             << "tcc-bucket-collectives: bucket-bytes must be positive and "
                "first-bucket-bytes at least 0, got "
             << static_cast<int64_t>(bucketBytes) << " and "
             << static_cast<int64_t>(firstBucketBytes);
    return success();
  }

  void runOnOperation() override {
    tensors.clear();
    bytes.clear();
    opsAfter.clear();
    hoisted = 0;
    SmallVector<Operation *> whole;
    getOperation().walk([&](Operation *op) {
      if (isWholeGradientReduction(op))
        whole.push_back(op);
    });
    if (whole.empty())
      return;
    for (Operation *op : whole)
      split(op);
    Builder b(&getContext());
    ModuleOp module = getOperation();
    recordPassResult(module, "bucket-collectives", "buckets",
                     b.getI64IntegerAttr(static_cast<int64_t>(tensors.size())));
    recordPassResult(module, "bucket-collectives", "tensors", b.getI64ArrayAttr(tensors));
    recordPassResult(module, "bucket-collectives", "bytes", b.getI64ArrayAttr(bytes));
    recordPassResult(module, "bucket-collectives", "ops_after", b.getI64ArrayAttr(opsAfter));
    recordPassResult(module, "bucket-collectives", "hoisted", b.getI64IntegerAttr(hoisted));
  }

  /// Replaces `whole` with its buckets.
  void split(Operation *whole) {
    Block &block = *whole->getBlock();
    for (Value v : whole->getOperands())
      hoisted += hoistConversions(block, v);

    SmallVector<Operation *> ops;
    DenseMap<Operation *, int64_t> position;
    for (Operation &op : block) {
      position[&op] = static_cast<int64_t>(ops.size());
      ops.push_back(&op);
    }
    SmallVector<Gradient> gradients;
    for (auto [i, v] : llvm::enumerate(whole->getOperands())) {
      Operation *producer = producerIn(block, v);
      gradients.push_back(
          {static_cast<unsigned>(i), producer ? position[producer] : -1, tensorBytes(v.getType())});
    }
    // The order the backward computes them; ties in state order.
    llvm::stable_sort(gradients,
                      [](const Gradient &a, const Gradient &b) { return a.ready < b.ready; });

    SmallVector<SmallVector<Gradient>> buckets(1);
    int64_t cap = firstBucketBytes > 0 ? std::min<int64_t>(firstBucketBytes, bucketBytes)
                                       : static_cast<int64_t>(bucketBytes);
    int64_t held = 0;
    for (const Gradient &g : gradients) {
      if (!buckets.back().empty() && held + g.bytes > cap) {
        buckets.emplace_back();
        held = 0;
        cap = bucketBytes;
      }
      buckets.back().push_back(g);
      held += g.bytes;
    }

    // Each right after its last gradient, and after the bucket before it.
    OpBuilder b(whole);
    Operation *previous = nullptr;
    SmallVector<Operation *> formed;
    for (ArrayRef<Gradient> bucket : buckets) {
      int64_t ready = -1;
      SmallVector<unsigned> operands;
      for (const Gradient &g : bucket) {
        ready = std::max(ready, g.ready);
        operands.push_back(g.operand);
      }
      Operation *after = ready >= 0 ? ops[ready] : nullptr;
      if (previous && (!after || after->isBeforeInBlock(previous)))
        after = previous;
      // Not in front of a collective the backward waits for (a synchronised
      // norm's sums, issued right after the op that computes them): where
      // the two share a communicator, a bucket there would delay it.
      for (Operation *next = after ? after->getNextNode() : &block.front();
           next && next != whole && isa<AllReduceOp>(next) && !next->hasAttr(kGradientsAttr);
           next = next->getNextNode())
        after = next;
      if (after)
        b.setInsertionPointAfter(after);
      else
        b.setInsertionPointToStart(&block);
      Operation *op = createBucket(b, whole, operands);
      for (NamedAttribute attr : whole->getDiscardableAttrs())
        op->setAttr(attr.getName(), attr.getValue());
      op->setAttr(kBucketAttr, b.getI64IntegerAttr(static_cast<int64_t>(tensors.size())));
      for (auto [result, g] : llvm::zip(op->getResults(), bucket))
        whole->getResult(g.operand).replaceAllUsesWith(result);
      int64_t size = 0;
      for (const Gradient &g : bucket)
        size += g.bytes;
      tensors.push_back(static_cast<int64_t>(bucket.size()));
      bytes.push_back(size);
      formed.push_back(op);
      previous = op;
    }
    // The end of the backward is where the gradients were reduced before.
    for (Operation *op : formed)
      opsAfter.push_back(computeOpsBetween(op->getNextNode(), whole));
    whole->erase();
  }

  SmallVector<int64_t> tensors, bytes, opsAfter;
  int64_t hoisted = 0;
};

} // namespace
