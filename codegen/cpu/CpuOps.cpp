//===- CpuOps.cpp - One tcc op as runtime/kernels calls -------------------===//
//
// Shapes are static, so every size is printed as a literal. Results that
// replace a state operand may share its memory (the memory plan decides);
// where an update kernel works in place, the operand is first copied into
// the result unless they already are the same memory.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Emitter.h"
#include "codegen/common/KernelArgs.h"

#include "ir/TccOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// Prints calls with the emitter's names.
struct Printer {
  StepEmitter &e;
  llvm::raw_ostream &os;

  std::string operator()(Value v) const { return e.name(v); }
  std::string opt(Value v) const { return e.nameOrNull(v); }

  /// Copies `from` into `to` unless they are the same memory, so an in-place
  /// kernel can then update `to`.
  void copyInto(Value from, Value to) {
    if (e.name(from) != e.name(to))
      os << "  copy<float>(" << numElements(from) << ", " << e.name(from) << ", "
         << e.name(to) << ");\n";
  }
};

LogicalResult emitNN(Operation *op, Printer &p) {
  llvm::raw_ostream &os = p.os;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](Conv2dOp o) {
        os << "  conv2d_forward<float>("
           << cpp(kernel_args::conv2d(o))
           << ", " << p(o.getInput()) << ", " << p(o.getWeight()) << ", "
           << p.opt(o.getBias()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](Conv2dBackwardDataOp o) {
        os << "  conv2d_backward_data<float>("
           << cpp(kernel_args::conv2d(o))
           << ", " << p(o.getGrad()) << ", " << p(o.getWeight()) << ", "
           << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](Conv2dBackwardFilterOp o) {
        os << "  conv2d_backward_filter<float>("
           << cpp(kernel_args::conv2d(o))
           << ", " << p(o.getInput()) << ", " << p(o.getGrad()) << ", "
           << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](LinearOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  linear_forward<float>(" << product(in.drop_back()) << ", " << in.back()
           << ", " << dimsOf(o.getWeight())[0] << ", " << p(o.getInput()) << ", "
           << p(o.getWeight()) << ", " << p.opt(o.getBias()) << ", "
           << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](LinearBackwardDataOp o) {
        ArrayRef<int64_t> w = dimsOf(o.getWeight());
        os << "  linear_backward_data<float>(" << numElements(o.getGrad()) / w[0]
           << ", " << w[1] << ", " << w[0] << ", " << p(o.getGrad()) << ", "
           << p(o.getWeight()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](LinearBackwardWeightOp o) {
        ArrayRef<int64_t> w = dimsOf(o.getResult());
        os << "  linear_backward_weight<float>(" << numElements(o.getGrad()) / w[0]
           << ", " << w[1] << ", " << w[0] << ", " << p(o.getGrad()) << ", "
           << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](ReduceSumOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        ArrayRef<int64_t> axes = o.getAxes();
        if (std::optional<kernel_args::Around> kept = kernel_args::keptAxis(o)) {
          os << "  reduce_sum_keep<float>(" << cpp(*kept) << ", " << p(o.getInput()) << ", "
             << p(o.getResult()) << ");\n";
          return success();
        }
        os << "  { const int64_t shape[] = {";
        llvm::interleaveComma(in, os);
        os << "}; const bool reduced[] = {";
        for (size_t d = 0; d < in.size(); ++d)
          os << (d ? ", " : "")
             << (llvm::is_contained(axes, static_cast<int64_t>(d)) ? "true" : "false");
        os << "}; reduce_sum_dims<float>(" << in.size() << ", shape, reduced, "
           << p(o.getInput()) << ", " << p(o.getResult()) << ", "
           << numElements(o.getResult()) << "); }\n";
        return success();
      })
      .Case([&](BatchNormOp o) {
        // The kernel updates running statistics in place: start the new ones
        // from the old.
        p.copyInto(o.getRunningMean(), o.getNewRunningMean());
        p.copyInto(o.getRunningVar(), o.getNewRunningVar());
        os << "  batch_norm_forward_train<float>("
           << cpp(kernel_args::batchNorm(o)) << ", "
           << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", "
           << p.opt(o.getBias()) << ", " << cppDouble(o.getEps()) << ", "
           << cppDouble(o.getMomentum()) << ", " << p(o.getResult()) << ", "
           << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
           << p(o.getNewRunningMean()) << ", " << p(o.getNewRunningVar()) << ");\n";
        return success();
      })
      .Case([&](BatchNormInferenceOp o) {
        os << "  batch_norm_forward_inference<float>("
           << cpp(kernel_args::batchNorm(o)) << ", " << p(o.getInput()) << ", "
           << p.opt(o.getWeight()) << ", " << p.opt(o.getBias()) << ", "
           << p(o.getRunningMean()) << ", " << p(o.getRunningVar()) << ", "
           << cppDouble(o.getEps()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](BatchNormApplyOp o) {
        os << "  batch_norm_apply<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
           << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", " << p.opt(o.getBias())
           << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
           << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](BatchNormBackwardOp o) {
        os << "  batch_norm_backward<float>("
           << cpp(kernel_args::batchNorm(o)) << ", "
           << p(o.getGrad()) << ", " << p(o.getInput()) << ", " << p.opt(o.getWeight())
           << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
           << p(o.getGradInput()) << ", " << p(o.getGradWeight()) << ", "
           << p(o.getGradBias()) << ");\n";
        return success();
      })
      .Case([&](LayerNormOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        int64_t inner = product(in.take_back(o.getNormalizedDims()));
        os << "  layer_norm_forward<float>(" << numElements(o.getInput()) / inner
           << ", " << inner << ", " << p(o.getInput()) << ", " << p.opt(o.getWeight())
           << ", " << p.opt(o.getBias()) << ", " << cppDouble(o.getEps()) << ", "
           << p(o.getResult()) << ", " << p(o.getSavedMean()) << ", "
           << p(o.getSavedInvstd()) << ");\n";
        return success();
      })
      .Case([&](LayerNormBackwardOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        int64_t inner = product(in.take_back(o.getNormalizedDims()));
        os << "  layer_norm_backward<float>(" << numElements(o.getInput()) / inner
           << ", " << inner << ", " << p(o.getGrad()) << ", " << p(o.getInput()) << ", "
           << p.opt(o.getWeight()) << ", " << p(o.getSavedMean()) << ", "
           << p(o.getSavedInvstd()) << ", " << p(o.getGradInput()) << ", "
           << p(o.getGradWeight()) << ", " << p(o.getGradBias()) << ");\n";
        return success();
      })
      .Case([&](MaxPool2dOp o) {
        os << "  max_pool2d_forward<float>("
           << cpp(kernel_args::pool2d(o))
           << ", " << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](MaxPool2dBackwardOp o) {
        os << "  max_pool2d_backward<float>("
           << cpp(kernel_args::pool2d(o))
           << ", " << p(o.getInput()) << ", " << p(o.getGrad()) << ", "
           << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](AvgPool2dOp o) {
        os << "  avg_pool2d_forward<float>("
           << cpp(kernel_args::pool2d(o))
           << ", " << (o.getCountIncludePad() ? "true" : "false") << ", "
           << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](AvgPool2dBackwardOp o) {
        os << "  avg_pool2d_backward<float>("
           << cpp(kernel_args::pool2d(o))
           << ", " << (o.getCountIncludePad() ? "true" : "false") << ", "
           << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case<GlobalAvgPoolOp, GlobalMaxPoolOp>([&](auto o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  global_" << (isa<GlobalAvgPoolOp>(op) ? "avg" : "max")
           << "_pool_forward<float>(" << in[0] << ", " << in[1] << ", "
           << in[2] * in[3] << ", " << p(o.getInput()) << ", " << p(o.getResult())
           << ");\n";
        return success();
      })
      // Channel gates (runtime/kernels/ChannelMul.h): [N * C] planes.
      .Case([&](ChannelMulOp o) {
        int64_t planes = numElements(o.getGate());
        os << "  channel_mul<float>(" << planes << ", " << numElements(o.getInput()) / planes
           << ", " << p(o.getInput()) << ", " << p(o.getGate()) << ", " << p(o.getResult())
           << ");\n";
        return success();
      })
      .Case([&](ChannelMulBackwardGateOp o) {
        int64_t planes = numElements(o.getResult());
        os << "  channel_mul_backward_gate<float>(" << planes << ", "
           << numElements(o.getInput()) / planes << ", " << p(o.getGrad()) << ", "
           << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](GlobalAvgPoolBackwardOp o) {
        ArrayRef<int64_t> in = o.getInputShape();
        os << "  global_avg_pool_backward<float>(" << in[0] << ", " << in[1] << ", "
           << in[2] * in[3] << ", " << p(o.getGrad()) << ", " << p(o.getResult())
           << ");\n";
        return success();
      })
      .Case([&](GlobalMaxPoolBackwardOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  global_max_pool_backward<float>(" << in[0] << ", " << in[1] << ", "
           << in[2] * in[3] << ", " << p(o.getInput()) << ", " << p(o.getGrad())
           << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// Activations: forward `name_forward(n, [attr,] x, y)`, backward
/// `name_backward(n, [attr,] value, dy, dx)`.
LogicalResult emitActivation(Operation *op, Printer &p) {
  llvm::raw_ostream &os = p.os;
  Value x = op->getOperand(0);
  std::string n = std::to_string(numElements(op->getResult(0)));
  auto forward = [&](StringRef name, std::string attr = "") {
    os << "  " << name << "_forward<float>(" << n << ", " << attr
       << (attr.empty() ? "" : ", ") << p(x) << ", " << p(op->getResult(0)) << ");\n";
    return success();
  };
  auto backward = [&](StringRef name, std::string attr = "") {
    os << "  " << name << "_backward<float>(" << n << ", " << attr
       << (attr.empty() ? "" : ", ") << p(op->getOperand(1)) << ", " << p(x) << ", "
       << p(op->getResult(0)) << ");\n";
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ReluOp) { return forward("relu"); })
      .Case([&](LeakyReluOp o) { return forward("leaky_relu", cppDouble(o.getNegativeSlope())); })
      .Case([&](EluOp o) { return forward("elu", cppDouble(o.getAlpha())); })
      .Case([&](CeluOp o) { return forward("celu", cppDouble(o.getAlpha())); })
      .Case([&](GeluOp o) {
        return forward(o.getApproximate() == "tanh" ? "gelu_tanh" : "gelu");
      })
      .Case([&](SiluOp) { return forward("silu"); })
      .Case([&](SigmoidOp) { return forward("sigmoid"); })
      .Case([&](TanhOp) { return forward("tanh"); })
      .Case([&](ReluBackwardOp) { return backward("relu"); })
      .Case([&](LeakyReluBackwardOp o) {
        return backward("leaky_relu", cppDouble(o.getNegativeSlope()));
      })
      .Case([&](EluBackwardOp o) { return backward("elu", cppDouble(o.getAlpha())); })
      .Case([&](CeluBackwardOp o) { return backward("celu", cppDouble(o.getAlpha())); })
      .Case([&](GeluBackwardOp o) {
        return backward(o.getApproximate() == "tanh" ? "gelu_tanh" : "gelu");
      })
      .Case([&](SiluBackwardOp) { return backward("silu"); })
      .Case([&](SigmoidBackwardOp) { return backward("sigmoid"); })
      .Case([&](TanhBackwardOp) { return backward("tanh"); })
      .Default([](Operation *) { return failure(); });
}

} // namespace

LogicalResult mlir::tcc::emitCpuOp(Operation *op, StepEmitter &e) {
  if (auto group = dyn_cast<FusionGroupOp>(op))
    return emitCpuFusionGroup(group, e);
  Printer p{e, e.os};
  if (succeeded(emitNN(op, p)) || succeeded(emitActivation(op, p)) ||
      succeeded(emitCpuTrainOp(op, e)))
    return success();
  return op->emitError("the cpu target cannot run this op yet");
}
