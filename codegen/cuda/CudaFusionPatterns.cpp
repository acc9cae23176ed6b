//===- CudaFusionPatterns.cpp - What cuBLASLt and cuDNN fuse --------------===//
//
// The cuda target's pattern table for tcc-fusion (target/FusionPattern.h):
// the epilogues its library calls apply to an out-fusable anchor's result,
// as TVM's cublas.py and cudnn.py list theirs. The groups they form are
// emitted as the library call with that epilogue (CudaOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaFusionPatterns.h"

#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// An f32 linear and the activation of its result that cuBLASLt applies
/// after the bias: a ReLU that alone reads it (RELU_BIAS), or a
/// tanh-approximated GELU, cuBLASLt's GELU (GELU_BIAS, or GELU_AUX_BIAS
/// where the backward reads the linear's result too).
bool matchLinearActivation(Operation *anchor, function_ref<bool(Operation *)> free,
                           llvm::SetVector<Operation *> &members) {
  auto linear = dyn_cast<LinearOp>(anchor);
  if (!linear)
    return false;
  Value y = linear.getResult();
  auto type = cast<RankedTensorType>(y.getType());
  if (!type.getElementType().isF32())
    return false;
  for (Operation *user : y.getUsers()) {
    if (!free(user))
      continue;
    auto gelu = dyn_cast<GeluOp>(user);
    // GELU_AUX stores the linear's result in rows of a multiple of 8.
    if ((isa<ReluOp>(user) && y.hasOneUse()) ||
        (gelu && gelu.getApproximate() == "tanh" &&
         (y.hasOneUse() || type.getShape().back() % 8 == 0))) {
      members.insert(linear);
      members.insert(user);
      return true;
    }
  }
  return false;
}

/// A convolution with bias and the ReLU that alone reads its result,
/// which cuDNN's fused engines apply to the f32 sums; under 16-bit storage
/// the ReLU runs on an f32 copy, so: the cast that alone widens the
/// result, the ReLU of that, the cast that alone narrows it back (the ReLU
/// of the rounded sum is the rounded ReLU of the sum). No other
/// activation: cuDNN builds those engines only on a GPU, at run time.
bool matchConvBiasRelu(Operation *anchor, function_ref<bool(Operation *)> free,
                       llvm::SetVector<Operation *> &members) {
  auto conv = dyn_cast<Conv2dOp>(anchor);
  if (!conv || !conv.getBias())
    return false;
  auto soleReader = [&](Value v) -> Operation * {
    if (!v.hasOneUse())
      return nullptr;
    Operation *user = *v.getUsers().begin();
    return free(user) ? user : nullptr;
  };
  Value y = conv.getResult();
  if (getElementTypeOrSelf(y.getType()).isF32()) {
    auto relu = dyn_cast_or_null<ReluOp>(soleReader(y));
    if (!relu)
      return false;
    members.insert(conv);
    members.insert(relu);
    return true;
  }
  auto widening = dyn_cast_or_null<CastOp>(soleReader(y));
  if (!widening || changesLayout(y, widening.getResult()) ||
      !getElementTypeOrSelf(widening.getType()).isF32())
    return false;
  auto relu = dyn_cast_or_null<ReluOp>(soleReader(widening.getResult()));
  auto narrowing = relu ? dyn_cast_or_null<CastOp>(soleReader(relu.getResult())) : CastOp();
  if (!narrowing || narrowing.getType() != y.getType() ||
      changesLayout(relu.getResult(), narrowing.getResult()))
    return false;
  members.insert(conv);
  members.insert(widening);
  members.insert(relu);
  members.insert(narrowing);
  return true;
}

/// A bias-free fp16 convolution and the two sums a batch norm takes its
/// statistics from (tcc-cuda-conv-statistics writes them): the sum of its
/// result and the centered sum around that, one rank. cuDNN's genstats
/// gathers them as the convolution stores its result (one graph).
bool matchConvGenstats(Operation *anchor, function_ref<bool(Operation *)> free,
                       llvm::SetVector<Operation *> &members) {
  auto conv = dyn_cast<Conv2dOp>(anchor);
  if (!conv || conv.getBias() || !getElementTypeOrSelf(conv.getType()).isF16())
    return false;
  Value y = conv.getResult();
  for (Operation *user : y.getUsers()) {
    auto sum = dyn_cast<BatchNormSumsOp>(user);
    if (!sum || sum.getCentered() || sum.getRanks() != 1 || !free(sum))
      continue;
    for (Operation *reader : sum.getResult().getUsers()) {
      auto squared = dyn_cast<BatchNormSumsOp>(reader);
      if (!squared || squared.getInput() != y || squared.getRanks() != 1 || !free(squared))
        continue;
      members.insert(conv);
      members.insert(sum);
      members.insert(squared);
      return true;
    }
  }
  return false;
}

const FusionPattern kPatterns[] = {
    {"cublaslt-linear-activation", FusionGroupOp::kMatmulEpilogue, FusionKind::OutFusable,
     matchLinearActivation},
    {"cudnn-conv-bias-relu", FusionGroupOp::kConvEpilogue, FusionKind::OutFusable,
     matchConvBiasRelu},
    {"cudnn-conv-genstats", FusionGroupOp::kConvStatistics, FusionKind::OutFusable,
     matchConvGenstats},
};

} // namespace

ArrayRef<FusionPattern> mlir::tcc::cudaEpiloguePatterns() { return kPatterns; }
