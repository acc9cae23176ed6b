//===- StepProblems.cpp - The library calls of a step, as problems --------===//

#include "codegen/cuda/StepProblems.h"

#include "codegen/common/KernelArgs.h"
#include "ir/ModelNode.h"
#include "ir/TccAttrNames.h"
#include "ir/PhysicalLayout.h"
#include "ir/TccOps.h"
#include "runtime/cuda/AttentionProducts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tcc;
namespace cuda = ::tcc::cuda;

namespace {

/// The problem of a convolution op in `direction`, whichever way it reads
/// its tensors: x [n, c, h, w], weight [k, c/g, r, s], y [n, k, p, q].
template <typename ConvLike>
FailureOr<cuda::ConvProblem> problemOf(ConvLike op, cuda::ConvDirection direction,
                                       Value x, Value weight, Value y) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto yType = cast<RankedTensorType>(y.getType());
  Type element = xType.getElementType();
  if (wType.getElementType() != element || yType.getElementType() != element)
    return failure();
  cuda::ConvProblem p;
  p.direction = direction;
  p.dtype = element.isBF16()  ? cuda::ConvDataType::BFloat16
            : element.isF16() ? cuda::ConvDataType::Float16
                              : cuda::ConvDataType::Float32;
  // x and y share a layout (tcc-channels-last); one of them may be a tensor
  // that is the same bytes in both ([n, 1, h, w], [n, c, 1, 1]).
  p.layout = isChannelsLast(x) || isChannelsLast(y) ? cuda::ConvLayout::NHWC
                                                    : cuda::ConvLayout::NCHW;
  ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape(),
                    ys = yType.getShape();
  p.n = xs[0], p.c = xs[1], p.h = xs[2], p.w = xs[3];
  p.k = ws[0], p.r = ws[2], p.s = ws[3];
  p.p = ys[2], p.q = ys[3];
  p.padH = op.getPadding()[0], p.padW = op.getPadding()[1];
  p.strideH = op.getStride()[0], p.strideW = op.getStride()[1];
  p.dilationH = op.getDilation()[0], p.dilationW = op.getDilation()[1];
  p.groups = static_cast<int64_t>(op.getGroups());
  return p;
}

} // namespace

FailureOr<cuda::ConvProblem> mlir::tcc::convProblemOf(Operation *op) {
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    FailureOr<cuda::ConvProblem> problem = problemOf(
        conv, cuda::ConvDirection::Forward, conv.getInput(), conv.getWeight(), conv.getResult());
    if (succeeded(problem) && conv.getBias()) {
      if (getElementTypeOrSelf(conv.getBias().getType()) !=
          getElementTypeOrSelf(conv.getResult().getType()))
        return failure();
      auto group = dyn_cast<FusionGroupOp>(op->getParentOp());
      problem->epilogue = group && group.getKind() == FusionGroupOp::kConvEpilogue
                              ? cuda::ConvEpilogue::BiasRelu
                              : cuda::ConvEpilogue::Bias;
    } else if (succeeded(problem)) {
      auto group = dyn_cast<FusionGroupOp>(op->getParentOp());
      if (group && group.getKind() == FusionGroupOp::kConvStatistics)
        problem->epilogue = cuda::ConvEpilogue::Statistics;
    }
    return problem;
  }
  if (auto conv = dyn_cast<Conv2dBackwardDataOp>(op))
    return problemOf(conv, cuda::ConvDirection::BackwardData, conv.getResult(),
                     conv.getWeight(), conv.getGrad());
  if (auto conv = dyn_cast<Conv2dBackwardFilterOp>(op))
    return problemOf(conv, cuda::ConvDirection::BackwardFilter, conv.getInput(),
                     conv.getResult(), conv.getGrad());
  return failure();
}

std::optional<cuda::ConvProblem>
mlir::tcc::bakedConvProblem(const cuda::ConvProblem &problem, ArrayRef<std::string> keys) {
  for (const cuda::ConvProblem &row : {problem, problem.withoutEpilogue()})
    if (llvm::is_contained(keys, row.key()))
      return row;
  return std::nullopt;
}

/// Calls `visit` on every op of the steps a trainer runs, in order; stops
/// when it interrupts.
static WalkResult walkSteps(ModuleOp module, function_ref<WalkResult(Operation *)> visit) {
  for (StringRef name : {StringRef("train_step"), StringRef("eval_step"),
                         StringRef("eval_step_plain"), StringRef(kFrozenStepName)})
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      if (fn.walk(visit).wasInterrupted())
        return WalkResult::interrupt();
  return WalkResult::advance();
}

/// Adds the model node of `op` to `nodes` once.
static void addNodeOf(Operation *op, std::vector<std::string> &nodes) {
  std::string node = modelNodeOf(op->getLoc());
  if (!node.empty() && !llvm::is_contained(nodes, node))
    nodes.push_back(node);
}

bool mlir::tcc::collectConvProblems(ModuleOp module, std::vector<StepConv> &convs,
                                    std::string &error) {
  WalkResult walked = walkSteps(module, [&](Operation *op) {
    if (!isa<Conv2dOp, Conv2dBackwardDataOp, Conv2dBackwardFilterOp>(op))
      return WalkResult::advance();
    FailureOr<cuda::ConvProblem> problem = convProblemOf(op);
    if (failed(problem)) {
      error = "the convolution of '" + modelNodeOf(op->getLoc()) + "' (" +
              op->getName().getStringRef().str() +
              ") mixes element types; the cuda target runs a convolution in one type";
      return WalkResult::interrupt();
    }
    auto same =
        llvm::find_if(convs, [&](const StepConv &conv) { return conv.problem == *problem; });
    if (same == convs.end())
      same = convs.insert(convs.end(), StepConv{*problem, {}});
    addNodeOf(op, same->nodes);
    return WalkResult::advance();
  });
  return !walked.wasInterrupted();
}

cuda::MatmulActivation mlir::tcc::epilogueActivationOf(Operation *linear) {
  auto group = dyn_cast_or_null<FusionGroupOp>(linear->getParentOp());
  if (!group || group.getKind() != FusionGroupOp::kMatmulEpilogue)
    return cuda::MatmulActivation::none;
  if (isa<ReluOp>(*std::next(group.getFusedOps().begin())))
    return cuda::MatmulActivation::relu;
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  return llvm::is_contained(yield.getValues(), linear->getResult(0))
             ? cuda::MatmulActivation::gelu_aux
             : cuda::MatmulActivation::gelu;
}

FailureOr<cuda::MatmulProblem> mlir::tcc::matmulProblemOf(Operation *op) {
  auto dims = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  FailureOr<cuda::MatmulType> type = failure();
  auto typeOf = [&](ValueRange values) -> FailureOr<cuda::MatmulType> {
    Type element = getElementTypeOrSelf(values.front().getType());
    for (Value v : values)
      if (getElementTypeOrSelf(v.getType()) != element)
        return failure();
    if (element.isF32())
      return cuda::MatmulType::f32;
    if (element.isBF16())
      return cuda::MatmulType::bf16;
    if (element.isF16())
      return cuda::MatmulType::f16;
    return failure();
  };
  if (auto linear = dyn_cast<LinearOp>(op)) {
    ArrayRef<int64_t> in = dims(linear.getInput());
    SmallVector<Value> operands = {linear.getInput(), linear.getWeight(), linear.getResult()};
    if (linear.getBias())
      operands.push_back(linear.getBias());
    if (failed(type = typeOf(operands)))
      return failure();
    return cuda::MatmulProblem::linearForward(*type, ShapedType::getNumElements(in.drop_back()),
                                              in.back(), dims(linear.getWeight())[0],
                                              bool(linear.getBias()),
                                              epilogueActivationOf(linear));
  }
  if (auto data = dyn_cast<LinearBackwardDataOp>(op)) {
    ArrayRef<int64_t> w = dims(data.getWeight());
    if (failed(type = typeOf({data.getGrad(), data.getWeight(), data.getResult()})))
      return failure();
    return cuda::MatmulProblem::linearBackwardData(
        *type, ShapedType::getNumElements(dims(data.getGrad())) / w[0], w[1], w[0]);
  }
  if (auto weight = dyn_cast<LinearBackwardWeightOp>(op)) {
    ArrayRef<int64_t> w = dims(weight.getResult());
    if (failed(type = typeOf({weight.getGrad(), weight.getInput(), weight.getResult()})))
      return failure();
    return cuda::MatmulProblem::linearBackwardWeight(
        *type, ShapedType::getNumElements(dims(weight.getGrad())) / w[0], w[1], w[0]);
  }
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    if (failed(type = typeOf({matmul.getLhs(), matmul.getRhs(), matmul.getResult()})) ||
        *type != cuda::MatmulType::f32)
      return failure();
    ArrayRef<int64_t> c = dims(matmul.getResult());
    const int64_t m = c[c.size() - 2], n = c.back();
    const int64_t batch = ShapedType::getNumElements(c) / (m * n);
    const int64_t k = ShapedType::getNumElements(dims(matmul.getLhs())) / batch / m;
    return cuda::MatmulProblem::batchedProduct(*type, batch, m, n, k, matmul.getTransposeA(),
                                               matmul.getTransposeB());
  }
  return failure();
}

std::vector<cuda::MatmulProblem> mlir::tcc::matmulProblemsOf(Operation *op) {
  if (auto attention = dyn_cast<ScaledDotProductAttentionOp>(op))
    return cuda::attentionProblems(kernel_args::attention(attention), false);
  if (auto attention = dyn_cast<ScaledDotProductAttentionBackwardOp>(op))
    return cuda::attentionProblems(kernel_args::attention(attention), true);
  FailureOr<cuda::MatmulProblem> problem = matmulProblemOf(op);
  if (failed(problem)) // not a matmul, or one the cuda target refuses
    return {};
  return {*problem};
}

void mlir::tcc::collectMatmulProblems(ModuleOp module, std::vector<StepMatmul> &matmuls) {
  walkSteps(module, [&](Operation *op) {
    for (const cuda::MatmulProblem &problem : matmulProblemsOf(op)) {
      auto same = llvm::find_if(
          matmuls, [&](const StepMatmul &matmul) { return matmul.problem == problem; });
      if (same == matmuls.end())
        same = matmuls.insert(matmuls.end(), StepMatmul{problem, {}});
      addNodeOf(op, same->nodes);
    }
    return WalkResult::advance();
  });
}

std::string mlir::tcc::quotedNodes(const std::vector<std::string> &nodes) {
  std::string quoted;
  for (const std::string &node : nodes)
    quoted += (quoted.empty() ? "'" : ", '") + node + "'";
  return quoted.empty() ? "the step" : quoted;
}
