//===- DgradStatistics.cpp - Batch norm backward sums from the dgrad ------===//
//
// See Passes.td and docs/passes.md (tcc-cuda-dgrad-statistics). The pass
// only decides which norms' backward sums are taken where their output
// gradient is written, and writes that as ordinary ops: the synchronised
// norm's backward (tcc.batch_norm_backward_sums, tcc.batch_norm_backward_input)
// for one rank.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Passes.h"

#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"
#include "passes/PassReport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CUDADGRADSTATISTICS
#include "codegen/cuda/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

bool isF16ChannelsLast(Value v) {
  return getElementTypeOrSelf(v.getType()).isF16() && isChannelsLast(v);
}

/// `v` through the casts that only change its precision. With `sole`, each
/// value on the way (`v` too) has no other reader: what a fused graph
/// keeps in registers must not be wanted elsewhere.
Value throughCasts(Value v, bool sole) {
  while (true) {
    if (sole && !v.hasOneUse())
      return Value();
    auto cast = v.getDefiningOp<CastOp>();
    if (!cast || changesLayout(cast.getInput(), cast.getResult()))
      return v;
    v = cast.getInput();
  }
}

/// True if `v`, or a value it is cast from, is stored fp16 NHWC: a tensor
/// the graph can read as it is.
bool storedF16(Value v) {
  while (true) {
    if (isF16ChannelsLast(v))
      return true;
    auto cast = v.getDefiningOp<CastOp>();
    if (!cast || changesLayout(cast.getInput(), cast.getResult()))
      return false;
    v = cast.getInput();
  }
}

/// True if `bwd`'s output gradient is the ReLU backward of an fp16 NHWC
/// conv2d_backward_data, with the ReLU's result and the norm's input fp16
/// NHWC: cuDNN's dgrad + drelu + dbn_weight graph, each operand as it reads it.
bool fromDgrad(BatchNormBackwardOp bwd) {
  if (bwd.getGhostBatch() != 0 || !isChannelsLast(bwd.getInput()))
    return false;
  Value dy = bwd.getGrad();
  Value reluGrad = throughCasts(dy, /*sole=*/false);
  auto relu = reluGrad.getDefiningOp<ReluBackwardOp>();
  if (!relu || relu->getBlock() != bwd->getBlock())
    return false;
  // Nothing else reads the path relu_backward -> dy, and dy is stored fp16
  // on it (the graph's drelu output, which dx reads again).
  bool stored16 = false;
  for (Value v = dy;; v = v.getDefiningOp<CastOp>().getInput()) {
    if (!v.hasOneUse())
      return false;
    stored16 |= isF16ChannelsLast(v);
    if (v == reluGrad)
      break;
  }
  if (!stored16)
    return false;
  Value dz = throughCasts(relu.getGrad(), /*sole=*/true);
  auto dgrad = dz ? dz.getDefiningOp<Conv2dBackwardDataOp>() : Conv2dBackwardDataOp();
  if (!dgrad || !isF16ChannelsLast(dz))
    return false;
  return storedF16(relu.getValue()) && storedF16(bwd.getInput());
}

struct CudaDgradStatisticsPass
    : mlir::tcc::impl::CudaDgradStatisticsBase<CudaDgradStatisticsPass> {
  using CudaDgradStatisticsBase::CudaDgradStatisticsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<BatchNormBackwardOp> norms;
    module.walk([&](BatchNormBackwardOp bwd) {
      if (fromDgrad(bwd))
        norms.push_back(bwd);
    });
    for (BatchNormBackwardOp bwd : norms) {
      OpBuilder b(bwd);
      Location loc = bwd.getLoc();
      auto sums = b.create<BatchNormBackwardSumsOp>(loc, bwd.getGrad(), bwd.getInput(),
                                                    bwd.getSavedMean(), bwd.getSavedInvstd());
      auto dx = b.create<BatchNormBackwardInputOp>(
          loc, bwd.getGrad(), bwd.getInput(), bwd.getWeight(), bwd.getSavedMean(),
          bwd.getSavedInvstd(), sums.getSums(), b.getI64IntegerAttr(1));
      // The layout mark goes with the tensors the new ops read and write.
      if (Attribute mark = bwd->getAttr(kChannelsLastAttr)) {
        sums->setAttr(kChannelsLastAttr, mark);
        dx->setAttr(kChannelsLastAttr, mark);
      }
      bwd.getGradInput().replaceAllUsesWith(dx.getGradInput());
      bwd.getGradWeight().replaceAllUsesWith(sums.getGradWeight());
      bwd.getGradBias().replaceAllUsesWith(sums.getGradBias());
      bwd.erase();
    }
    Builder b(module.getContext());
    recordPassResult(module, "cuda-dgrad-statistics", "norms",
                     b.getI64IntegerAttr(int64_t(norms.size())));
  }
};

} // namespace
