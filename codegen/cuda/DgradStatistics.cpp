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

#include "codegen/cuda/StepProblems.h"
#include "ir/ModelNode.h"
#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"
#include "passes/PassReport.h"

#ifdef TCC_HAVE_CUDA
#include "runtime/cuda/DgradDbnGraph.h"
#include "runtime/cuda/GpuDescriptions.h"
#endif

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

#include <optional>

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

/// `v`, or the value it is widened from, stored fp16 NHWC (a tensor the
/// graph can read as it is: `v` is its exact f32 copy), or null.
Value storedF16(Value v) {
  while (!isF16ChannelsLast(v)) {
    auto cast = v.getDefiningOp<CastOp>();
    if (!getElementTypeOrSelf(v.getType()).isF32())
      return Value();
    if (!cast || changesLayout(cast.getInput(), cast.getResult()))
      return Value();
    v = cast.getInput();
  }
  return v;
}

/// The fp16 tensors cuDNN's dgrad + drelu + dbn_weight graph reads and
/// writes for `bwd`: dy (the drelu output, stored) and x (the norm's input).
struct Operands {
  Value dy, x;
  Conv2dBackwardDataOp dgrad;
};

/// `bwd`'s operands as the graph takes them, where its output gradient is
/// the ReLU backward of an fp16 NHWC conv2d_backward_data and the ReLU's
/// result and the norm's input are stored fp16 NHWC; else nothing.
std::optional<Operands> fromDgrad(BatchNormBackwardOp bwd) {
  if (bwd.getGhostBatch() != 0 || !isChannelsLast(bwd.getInput()))
    return std::nullopt;
  Value reluGrad = throughCasts(bwd.getGrad(), /*sole=*/false);
  auto relu = reluGrad.getDefiningOp<ReluBackwardOp>();
  if (!relu || relu->getBlock() != bwd->getBlock())
    return std::nullopt;
  // Nothing else reads the path relu_backward -> dy, and dy is stored fp16
  // on it (the graph's drelu output, which dx reads again).
  Value dy16;
  for (Value v = bwd.getGrad();; v = v.getDefiningOp<CastOp>().getInput()) {
    if (!v.hasOneUse())
      return std::nullopt;
    if (!dy16 && isF16ChannelsLast(v))
      dy16 = v;
    else if (!dy16 && !getElementTypeOrSelf(v.getType()).isF32())
      return std::nullopt; // the norm's dy would not be dy16's exact copy
    if (v == reluGrad)
      break;
  }
  Value dz = throughCasts(relu.getGrad(), /*sole=*/true);
  auto dgrad = dz ? dz.getDefiningOp<Conv2dBackwardDataOp>() : Conv2dBackwardDataOp();
  Value x16 = storedF16(bwd.getInput());
  if (!dy16 || !dgrad || !isF16ChannelsLast(dz) || !storedF16(relu.getValue()) || !x16)
    return std::nullopt;
  return Operands{dy16, x16, dgrad};
}

struct CudaDgradStatisticsPass
    : mlir::tcc::impl::CudaDgradStatisticsBase<CudaDgradStatisticsPass> {
  using CudaDgradStatisticsBase::CudaDgradStatisticsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<BatchNormBackwardOp, Operands>> norms;
    module.walk([&](BatchNormBackwardOp bwd) {
      if (std::optional<Operands> operands = fromDgrad(bwd))
        norms.push_back({bwd, *operands});
    });
    // Whether cuDNN builds the graph on the described GPU, asked as the
    // forward statistics' is; none does with cuDNN 9.19 (docs/cuda.md): the
    // split then runs as the sync-norm kernels, and the report says so.
    int64_t noEngine = 0;
    SmallVector<Attribute> withoutEngine;
#ifdef TCC_HAVE_CUDA
    std::string error;
    const ::tcc::cuda::GpuDescription *described = ::tcc::cuda::findGpu(gpu, error);
    if (!described) {
      module.emitError(error);
      return signalPassFailure();
    }
#endif
    for (auto [bwd, operands] : norms) {
      bool engine = false;
#ifdef TCC_HAVE_CUDA
      FailureOr<::tcc::cuda::ConvProblem> problem = convProblemOf(operands.dgrad);
      std::string why;
      engine = succeeded(problem) && ::tcc::cuda::dgradDbnHasEngine(*problem, *described, why);
#endif
      if (!engine) {
        ++noEngine;
        std::string node = modelNodeOf(operands.dgrad->getLoc());
        if (!node.empty())
          withoutEngine.push_back(StringAttr::get(module.getContext(), node));
      }
      OpBuilder b(bwd);
      Location loc = bwd.getLoc();
      // Both read the fp16 tensors, widening as they load: no f32 copy of
      // dy or x is stored.
      auto sums = b.create<BatchNormBackwardSumsOp>(loc, operands.dy, operands.x,
                                                    bwd.getSavedMean(), bwd.getSavedInvstd());
      auto dx = b.create<BatchNormBackwardInputOp>(
          loc, operands.dy, operands.x, bwd.getWeight(), bwd.getSavedMean(),
          bwd.getSavedInvstd(), sums.getSums(), b.getI64IntegerAttr(1));
      for (Operation *made : {sums.getOperation(), dx.getOperation()})
        made->setAttr(kChannelsLastAttr, b.getUnitAttr());
      // dx is fp16 now: the casts that narrowed the f32 one read it as it
      // is, anything else a widened copy.
      Value wide;
      for (OpOperand &use : llvm::make_early_inc_range(bwd.getGradInput().getUses())) {
        auto narrowing = dyn_cast<CastOp>(use.getOwner());
        if (narrowing && narrowing.getType() == dx.getType() &&
            !changesLayout(narrowing.getInput(), narrowing.getResult())) {
          narrowing.getResult().replaceAllUsesWith(dx.getGradInput());
          narrowing.erase();
          continue;
        }
        if (!wide) {
          b.setInsertionPointAfter(dx);
          auto cast = b.create<CastOp>(
              loc, dx.getGradInput(),
              TypeAttr::get(getElementTypeOrSelf(bwd.getGradInput().getType())));
          cast->setAttr(kChannelsLastAttr, b.getUnitAttr());
          wide = cast.getResult();
        }
        use.set(wide);
      }
      bwd.getGradWeight().replaceAllUsesWith(sums.getGradWeight());
      bwd.getGradBias().replaceAllUsesWith(sums.getGradBias());
      // The casts that widened dy and x for it, if nothing else reads them.
      SmallVector<Value> widened = {bwd.getGrad(), bwd.getInput()};
      bwd.erase();
      for (Value v : widened)
        while (v.use_empty() && v.getDefiningOp<CastOp>()) {
          Operation *cast = v.getDefiningOp();
          v = cast->getOperand(0);
          cast->erase();
        }
    }
    Builder b(module.getContext());
    recordPassResult(module, "cuda-dgrad-statistics", "norms",
                     b.getI64IntegerAttr(int64_t(norms.size())));
    recordPassResult(module, "cuda-dgrad-statistics", "no_engine", b.getI64IntegerAttr(noEngine));
    if (!withoutEngine.empty())
      recordPassResult(module, "cuda-dgrad-statistics", "no_engine_nodes",
                       b.getArrayAttr(withoutEngine));
  }
};

} // namespace
