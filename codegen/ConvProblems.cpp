//===- ConvProblems.cpp - The convolution problems of a step --------------===//

#include "codegen/ConvProblems.h"

#include "ir/ModelNode.h"
#include "ir/TccOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
  p.layout = cuda::physicalLayout(p.dtype);
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
  if (auto conv = dyn_cast<Conv2dOp>(op))
    return problemOf(conv, cuda::ConvDirection::Forward, conv.getInput(),
                     conv.getWeight(), conv.getResult());
  if (auto conv = dyn_cast<Conv2dBackwardDataOp>(op))
    return problemOf(conv, cuda::ConvDirection::BackwardData, conv.getResult(),
                     conv.getWeight(), conv.getGrad());
  if (auto conv = dyn_cast<Conv2dBackwardFilterOp>(op))
    return problemOf(conv, cuda::ConvDirection::BackwardFilter, conv.getInput(),
                     conv.getResult(), conv.getGrad());
  return failure();
}

bool mlir::tcc::collectConvProblems(ModuleOp module, std::vector<StepConv> &convs,
                                    std::string &error) {
  for (StringRef name : {"train_step", "eval_step", "eval_step_plain"}) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn)
      continue;
    WalkResult walked = fn.walk([&](Operation *op) {
      if (!isa<Conv2dOp, Conv2dBackwardDataOp, Conv2dBackwardFilterOp>(op))
        return WalkResult::advance();
      FailureOr<cuda::ConvProblem> problem = convProblemOf(op);
      if (failed(problem)) {
        error = "the convolution of '" + modelNodeOf(op->getLoc()) +
                "' (" + op->getName().getStringRef().str() +
                ") mixes element types; the cuda target runs a convolution "
                "in one type";
        return WalkResult::interrupt();
      }
      auto same = llvm::find_if(
          convs, [&](const StepConv &conv) { return conv.problem == *problem; });
      if (same == convs.end())
        same = convs.insert(convs.end(), StepConv{*problem, {}});
      std::string node = modelNodeOf(op->getLoc());
      if (!node.empty() && !llvm::is_contained(same->nodes, node))
        same->nodes.push_back(node);
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return false;
  }
  return true;
}

