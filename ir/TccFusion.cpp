//===- TccFusion.cpp - Fusion kinds of the ops; tcc.fusion_group ----------===//
//
// The kinds that are not the default of FusionOpInterface (Elementwise for
// an op with the Elementwise trait): one line per op, so the table of what
// fuses with what reads in one place.
//
//===----------------------------------------------------------------------===//

#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tcc;

StringRef mlir::tcc::stringifyFusionKind(FusionKind kind) {
  switch (kind) {
  case FusionKind::Elementwise: return "elementwise";
  case FusionKind::Broadcast: return "broadcast";
  case FusionKind::Injective: return "injective";
  case FusionKind::Reduction: return "reduction";
  case FusionKind::OutFusable: return "out_fusable";
  case FusionKind::Opaque: return "opaque";
  }
  llvm_unreachable("a FusionKind");
}

bool mlir::tcc::isMultiTensorUpdate(Operation *op) {
  return fusionKindOf(op) == FusionKind::Broadcast &&
         op->hasTrait<mlir::tcc::OpTrait::InPlaceStateUpdate>();
}

FusionKind mlir::tcc::fusionKindOf(Operation *op) {
  if (auto fusible = dyn_cast<FusionOpInterface>(op))
    return fusible.getFusionKind();
  return FusionKind::Opaque;
}

// Compute-bound anchors: their consumers may run in their epilogue.
FusionKind Conv2dOp::getFusionKind() { return FusionKind::OutFusable; }
FusionKind Conv2dBackwardDataOp::getFusionKind() { return FusionKind::OutFusable; }
FusionKind Conv2dBackwardFilterOp::getFusionKind() { return FusionKind::OutFusable; }
FusionKind LinearOp::getFusionKind() { return FusionKind::OutFusable; }
FusionKind LinearBackwardDataOp::getFusionKind() { return FusionKind::OutFusable; }
FusionKind LinearBackwardWeightOp::getFusionKind() { return FusionKind::OutFusable; }

// Per-channel statistics over the batch, then an elementwise pass.
// A batch norm synchronised over ranks has no fused forms yet; one that
// takes its statistics from its own input's sums (tcc-cuda-conv-statistics)
// normalises with its epilogue and widening load as any other.
FusionKind BatchNormOp::getFusionKind() {
  return getSum() && getRanks() != 1 ? FusionKind::Opaque : FusionKind::Reduction;
}
FusionKind BatchNormBackwardOp::getFusionKind() { return FusionKind::Reduction; }
// Per-row statistics, then an elementwise pass over the row.
FusionKind LayerNormOp::getFusionKind() { return FusionKind::Reduction; }
FusionKind LayerNormBackwardOp::getFusionKind() { return FusionKind::Reduction; }
FusionKind CrossEntropyOp::getFusionKind() { return FusionKind::Reduction; }
// y = x * scale[c] + shift[c]: elementwise with per-channel vectors.
FusionKind BatchNormInferenceOp::getFusionKind() { return FusionKind::Broadcast; }
FusionKind BatchNormApplyOp::getFusionKind() { return FusionKind::Broadcast; }

// The norms' kernels apply the elementwise ops after the forward and
// compute those before the backward, element by element, loading the input
// from 16-bit storage; the backward stores dx narrowed.
Value BatchNormOp::getEpilogueResult() {
  return getSum() && getRanks() != 1 ? Value() : getResult();
}
OpOperand *BatchNormOp::getWideningLoadOperand() {
  return getSum() && getRanks() != 1 ? nullptr : &getInputMutable();
}
Value BatchNormInferenceOp::getEpilogueResult() { return getResult(); }
OpOperand *BatchNormInferenceOp::getWideningLoadOperand() { return &getInputMutable(); }
OpOperand *BatchNormBackwardOp::getPrologueOperand() { return &getGradMutable(); }
OpOperand *BatchNormBackwardOp::getWideningLoadOperand() { return &getInputMutable(); }
Value BatchNormBackwardOp::getNarrowingStoreResult() { return getGradInput(); }

// A layer norm's kernel also computes its input from the elementwise ops
// before it (it reads each row three times and computes it each time).
Value LayerNormOp::getEpilogueResult() { return getResult(); }
OpOperand *LayerNormOp::getPrologueOperand() { return &getInputMutable(); }
OpOperand *LayerNormBackwardOp::getPrologueOperand() { return &getGradMutable(); }

FusionKind FlattenOp::getFusionKind() { return FusionKind::Injective; }
FusionKind ReshapeOp::getFusionKind() { return FusionKind::Injective; }
FusionKind TransposeOp::getFusionKind() { return FusionKind::Injective; }

// Optimizer and averaging updates: elementwise over the parameter, with the
// learning rate and the step counter broadcast. LAMB's trust ratio needs two
// norms over the whole parameter first.
FusionKind SgdUpdateOp::getFusionKind() { return FusionKind::Broadcast; }
FusionKind AdamwUpdateOp::getFusionKind() { return FusionKind::Broadcast; }
FusionKind LambUpdateOp::getFusionKind() { return FusionKind::Reduction; }
FusionKind EmaUpdateOp::getFusionKind() { return FusionKind::Broadcast; }
FusionKind LookaheadUpdateOp::getFusionKind() { return FusionKind::Broadcast; }
FusionKind ScaleByOp::getFusionKind() { return FusionKind::Broadcast; }

namespace {

bool isElementwise(Operation &op) {
  return fusionKindOf(&op) == FusionKind::Elementwise;
}

} // namespace

Operation *FusionGroupOp::getNormBackward() {
  if (getKind() != kNormBackwardPrologue)
    return nullptr;
  for (Operation &op : getFusedOps())
    if (isa<BatchNormBackwardOp, LayerNormBackwardOp>(op))
      return &op;
  return nullptr;
}

LogicalResult FusionGroupOp::verify() {
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with tcc.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << yield.getValues().getTypes()
                                  << " but its results are " << getResultTypes();
  auto ops = llvm::make_pointer_range(getFusedOps());
  SmallVector<Operation *> fused(ops.begin(), ops.end());
  if (fused.empty())
    return emitOpError("body holds no op");
  for (Operation *op : fused)
    if (op->getNumRegions() != 0)
      return op->emitOpError("cannot be in a tcc.fusion_group (it has a region)");

  StringRef kind = getKind();
  auto allElementwise = [](ArrayRef<Operation *> range) {
    return llvm::all_of(range, [](Operation *op) { return isElementwise(*op); });
  };
  if (kind == kElementwise) {
    if (!allElementwise(fused))
      return emitOpError("of kind elementwise holds a non-elementwise op");
    return success();
  }
  if (kind == kNormEpilogue) {
    // A layer norm computes its input from the elementwise ops before it.
    auto layerNorms = llvm::make_filter_range(fused, [](Operation *op) {
      return isa<LayerNormOp>(op);
    });
    if (!layerNorms.empty()) {
      if (std::distance(layerNorms.begin(), layerNorms.end()) != 1 ||
          !llvm::all_of(fused, [](Operation *op) {
            return isa<LayerNormOp>(op) || isElementwise(*op);
          }))
        return emitOpError("of kind norm_epilogue with a layer norm must hold one layer norm "
                           "and elementwise ops");
      return success();
    }
    // Before the norm, the widening of its 16-bit input, which its kernel
    // does as it loads, and what the ops after it read (tcc-fusion).
    auto isNorm = [](Operation *op) {
      return isa<BatchNormOp, BatchNormInferenceOp, BatchNormApplyOp>(op);
    };
    SmallVector<Operation *> others;
    llvm::copy_if(fused, std::back_inserter(others), [&](Operation *op) { return !isNorm(op); });
    auto fromOutside = [&](Value v) { return v.getParentRegion() != &getBody(); };
    auto readsFromOutside = [&](Operation *norm) {
      Value input = norm->getOperand(0);
      auto widening = input.getDefiningOp<CastOp>();
      return fromOutside(input) || (widening && fromOutside(widening.getInput()));
    };
    if (fused.size() - others.size() != 1 || !allElementwise(others) ||
        !readsFromOutside(*llvm::find_if(fused, isNorm)))
      return emitOpError("of kind norm_epilogue must hold one batch norm, its input read from "
                         "outside the group (or widened from there), and elementwise ops");
    return success();
  }
  if (kind == kNormBackwardPrologue) {
    // A batch_norm_apply there recomputes, per element, a normalised value
    // the prologue reads (tcc-recompute).
    auto prologueOp = [](Operation *op) {
      return isElementwise(*op) || isa<BatchNormApplyOp>(op);
    };
    ArrayRef<Operation *> rest(fused);
    if (auto narrowing = dyn_cast<CastOp>(rest.back());
        narrowing && rest.size() > 1 && isa<BatchNormBackwardOp>(rest.drop_back().back()) &&
        narrowing.getInput() == rest.drop_back().back()->getResult(0) &&
        narrowing.getInput().hasOneUse())
      rest = rest.drop_back();
    if (isa<LayerNormBackwardOp>(fused.back())) {
      if (!allElementwise(ArrayRef(fused).drop_back()))
        return emitOpError("of kind norm_backward_prologue must hold elementwise ops, then "
                           "a layer_norm_backward");
      return success();
    }
    if (!isa<BatchNormBackwardOp>(rest.back()) ||
        !llvm::all_of(rest.drop_back(), prologueOp))
      return emitOpError("of kind norm_backward_prologue must hold elementwise "
                         "ops and batch_norm_apply, then a batch_norm_backward (or a "
                         "layer_norm_backward), then at most the cast that alone reads its "
                         "grad_input");
    return success();
  }
  if (kind == kMatmulEpilogue) {
    auto gelu = fused.size() == 2 ? dyn_cast<GeluOp>(fused[1]) : GeluOp();
    bool activation = fused.size() == 2 && (isa<ReluOp>(fused[1]) ||
                                            (gelu && gelu.getApproximate() == "tanh"));
    if (!activation || !isa<LinearOp>(fused[0]) ||
        fused[1]->getOperand(0) != fused[0]->getResult(0))
      return emitOpError("of kind matmul_epilogue must hold a linear, then the relu or the "
                         "tanh-approximated gelu of its result");
    return success();
  }
  if (kind == kConvEpilogue) {
    auto conv = dyn_cast<Conv2dOp>(fused[0]);
    bool chain = conv && conv.getBias() && (fused.size() == 2 || fused.size() == 4);
    for (size_t i = 1; chain && i < fused.size(); ++i)
      chain = fused[i]->getNumOperands() == 1 &&
              fused[i]->getOperand(0) == fused[i - 1]->getResult(0) &&
              fused[i - 1]->getResult(0).hasOneUse();
    if (chain && fused.size() == 2)
      chain = isa<ReluOp>(fused[1]);
    if (chain && fused.size() == 4)
      chain = isa<CastOp>(fused[1]) && isa<ReluOp>(fused[2]) && isa<CastOp>(fused[3]) &&
              getElementTypeOrSelf(fused[1]->getResult(0).getType()).isF32() &&
              fused[3]->getResult(0).getType() == conv.getType();
    if (!chain || yield.getValues() != ValueRange(fused.back()->getResults()))
      return emitOpError("of kind conv_epilogue must hold a conv2d with a bias, then the relu "
                         "of its result (under 16-bit storage: the cast that widens it to "
                         "f32, the relu, the cast back), each result read by the next op "
                         "only, and yield the last");
    return success();
  }
  if (kind == kConvStatistics) {
    auto conv = fused.size() == 3 ? dyn_cast<Conv2dOp>(fused[0]) : Conv2dOp();
    auto sum = conv ? dyn_cast<BatchNormSumsOp>(fused[1]) : BatchNormSumsOp();
    auto squared = sum ? dyn_cast<BatchNormSumsOp>(fused[2]) : BatchNormSumsOp();
    if (!squared || conv.getBias() || sum.getInput() != conv.getResult() || sum.getCentered() ||
        squared.getInput() != conv.getResult() || squared.getCentered() != sum.getResult() ||
        sum.getRanks() != 1 || squared.getRanks() != 1 ||
        !llvm::is_contained(yield.getValues(), sum.getResult()) ||
        !llvm::is_contained(yield.getValues(), squared.getResult()))
      return emitOpError("of kind conv_statistics must hold a conv2d without a bias, the "
                         "batch_norm_sums of its result and the centered batch_norm_sums "
                         "around that sum (one rank), and yield both sums");
    return success();
  }
  if (kind == kMultiTensorCast) {
    auto independentCast = [&](Operation *op) {
      auto cast = dyn_cast<CastOp>(op);
      if (!cast || cast.getInput().getParentRegion() == &getBody() ||
          changesLayout(cast.getInput(), cast.getResult()))
        return false;
      Type from = getElementTypeOrSelf(cast.getInput().getType()),
           to = getElementTypeOrSelf(cast.getType());
      auto sixteen = [](Type t) { return t.isF16() || t.isBF16(); };
      return (from.isF32() && sixteen(to)) || (sixteen(from) && to.isF32());
    };
    if (fused.size() < 2 || !llvm::all_of(fused, independentCast))
      return emitOpError("of kind multi_tensor_cast must hold two or more casts between f32 "
                         "and a 16-bit type that keep their layout, none reading another's "
                         "result");
    return success();
  }
  if (kind == kMultiTensorUpdate) {
    if (!llvm::all_of(fused, isMultiTensorUpdate))
      return emitOpError("of kind multi_tensor_update must hold sgd, adamw, ema "
                         "and lookahead updates only");
    return success();
  }
  return emitOpError("kind must be \"")
         << kElementwise << "\", \"" << kNormEpilogue << "\", \"" << kNormBackwardPrologue
         << "\", \"" << kMultiTensorUpdate << "\", \"" << kMatmulEpilogue << "\", \""
         << kConvEpilogue << "\", \"" << kConvStatistics << "\" or \"" << kMultiTensorCast << "\", got \""
         << kind << "\"";
}
