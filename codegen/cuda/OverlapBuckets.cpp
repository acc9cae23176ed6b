//===- OverlapBuckets.cpp - The gradient buckets on a second stream -------===//
//
// See Passes.td and docs/distributed.md. Marks each bucket of
// tcc-bucket-collectives to run on a side stream of the step's CUDA graph,
// from its place in the backward to its first reader; the memory plan keeps
// its inputs live until then and the code generator prints the fork and the
// join (codegen/cuda/ops/CollectiveOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"
#include "passes/PassReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CUDAOVERLAPBUCKETS
#include "codegen/cuda/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

struct CudaOverlapBucketsPass
    : mlir::tcc::impl::CudaOverlapBucketsBase<CudaOverlapBucketsPass> {
  void runOnOperation() override {
    int64_t marked = 0;
    getOperation().walk([&](Operation *op) {
      // Only the gradients' buckets (all-reduces, or ZeRO-2's
      // reduce-scatters): a synchronised norm's sums and the running
      // statistics' mean are read by the next op, and stay on the step's
      // stream, on its communicator, in program order.
      if (!isa<AllReduceOp, ReduceScatterOp>(op) || !op->hasAttr(kBucketAttr) ||
          !isa<func::FuncOp>(op->getParentOp()) || !sideStreamJoin(op))
        return;
      op->setAttr(kSideStreamAttr, UnitAttr::get(op->getContext()));
      ++marked;
    });
    if (marked > 0)
      recordPassResult(getOperation(), "cuda-overlap-buckets", "side_stream",
                       Builder(&getContext()).getI64IntegerAttr(marked));
  }
};

} // namespace
