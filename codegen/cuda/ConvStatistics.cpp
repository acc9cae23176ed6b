//===- ConvStatistics.cpp - Batch norm statistics from the convolution ----===//
//
// See Passes.td and docs/passes.md (tcc-cuda-conv-statistics). The pass only
// decides which norms take their statistics from their convolution and
// writes that as ordinary ops (tcc.batch_norm_sums, the norm's `statistics`);
// tcc-fusion's cudnn-conv-genstats pattern makes it one cuDNN graph.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Passes.h"

#include "codegen/cuda/StepProblems.h"
#include "ir/ModelNode.h"
#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"
#include "passes/PassReport.h"

#ifdef TCC_HAVE_CUDA
#include "runtime/cuda/ConvPlans.h"
#include "runtime/cuda/GpuDescriptions.h"
#endif

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

#include <map>

namespace mlir::tcc {
#define GEN_PASS_DEF_CUDACONVSTATISTICS
#include "codegen/cuda/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The bias-free fp16 NHWC conv2d whose result `bn` normalises, directly or
/// through the cast that alone widens it (tcc-widen-16bit's), or null.
Conv2dOp statisticsSource(BatchNormOp bn) {
  if (bn.getSum() || bn.getGhostBatch() != 0)
    return Conv2dOp();
  Value y = bn.getInput();
  if (auto widening = y.getDefiningOp<CastOp>();
      widening && !changesLayout(widening.getInput(), widening.getResult()))
    y = widening.getInput();
  auto conv = y.getDefiningOp<Conv2dOp>();
  if (!conv || conv.getBias() || conv->getBlock() != bn->getBlock() ||
      !getElementTypeOrSelf(y.getType()).isF16() || !isChannelsLast(y))
    return Conv2dOp();
  return conv;
}

struct CudaConvStatisticsPass
    : mlir::tcc::impl::CudaConvStatisticsBase<CudaConvStatisticsPass> {
  using CudaConvStatisticsBase::CudaConvStatisticsBase;

  void runOnOperation() override {
#ifdef TCC_HAVE_CUDA
    namespace cuda = ::tcc::cuda;
    ModuleOp module = getOperation();
    std::string error;
    const cuda::GpuDescription *described = cuda::findGpu(gpu, error);
    if (!described) {
      module.emitError(error);
      return signalPassFailure();
    }
    // Whether cuDNN builds the conv + genstats graph, per problem.
    std::map<std::string, bool> buildable;
    auto hasEngine = [&](Conv2dOp conv) {
      FailureOr<cuda::ConvProblem> problem = convProblemOf(conv);
      if (failed(problem))
        return false;
      problem->epilogue = cuda::ConvEpilogue::Statistics;
      auto [known, inserted] = buildable.try_emplace(problem->key(), false);
      if (inserted) {
        cuda::ConvChoice choice;
        std::string why;
        known->second = cuda::chooseConvEngine(*problem, *described,
                                               cuda::kDefaultConvWorkspaceLimit, choice, why);
      }
      return known->second;
    };
    // The sums of each conv, made once however many norms read it.
    std::map<Operation *, std::pair<Value, Value>> sums;
    int64_t fused = 0, noEngine = 0;
    SmallVector<Attribute> withoutEngine;
    module.walk([&](BatchNormOp bn) {
      Conv2dOp conv = statisticsSource(bn);
      if (!conv)
        return;
      if (!hasEngine(conv)) {
        ++noEngine;
        std::string node = modelNodeOf(conv->getLoc());
        if (!node.empty())
          withoutEngine.push_back(StringAttr::get(module.getContext(), node));
        return;
      }
      auto [made, inserted] = sums.try_emplace(conv.getOperation());
      if (inserted) {
        OpBuilder b(conv->getContext());
        b.setInsertionPointAfter(conv);
        Value y = conv.getResult();
        Value sum = b.create<BatchNormSumsOp>(conv.getLoc(), y, Value(), 1);
        Value squared = b.create<BatchNormSumsOp>(conv.getLoc(), y, sum, 1);
        made->second = {sum, squared};
      }
      bn.getSumMutable().assign(made->second.first);
      bn.getSquaredDeviationsMutable().assign(made->second.second);
      ++fused;
    });
    Builder b(module.getContext());
    recordPassResult(module, "cuda-conv-statistics", "norms", b.getI64IntegerAttr(fused));
    recordPassResult(module, "cuda-conv-statistics", "no_engine", b.getI64IntegerAttr(noEngine));
    if (!withoutEngine.empty())
      recordPassResult(module, "cuda-conv-statistics", "no_engine_nodes",
                       b.getArrayAttr(withoutEngine));
#else
    getOperation().emitError("tcc-cuda-conv-statistics asks cuDNN which convolutions it "
                             "fuses; this tcc was built without it: run scripts/setup.sh and "
                             "rebuild");
    signalPassFailure();
#endif
  }
};

} // namespace
