//===- NormOps.cpp - Batch norm, layer norm and softmax on the cpu --------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// Layer norm's rows: "rows, normalised elements".
std::string rows(ArrayRef<int64_t> in, int64_t normalizedDims) {
  const int64_t inner = product(in.take_back(normalizedDims));
  return std::to_string(product(in) / inner) + ", " + std::to_string(inner);
}

void registerBatchNorm(CpuOpPrinters &t) {
  t.add<BatchNormOp>([](BatchNormOp o, CpuPrinter &p) {
    // The kernel updates running statistics in place: start the new ones
    // from the old.
    p.copyInto(o.getRunningMean(), o.getNewRunningMean());
    p.copyInto(o.getRunningVar(), o.getNewRunningVar());
    if (o.getSum()) {
      p.os << "  batch_norm_forward_synced<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
           << o.getRanks() << ", " << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", "
           << p.opt(o.getBias()) << ", " << cppDouble(o.getEps()) << ", "
           << cppDouble(o.getMomentum()) << ", " << p(o.getSum()) << ", "
           << p(o.getSquaredDeviations()) << ", " << p(o.getResult()) << ", "
           << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
           << p(o.getNewRunningMean()) << ", " << p(o.getNewRunningVar()) << ");\n";
      return success();
    }
    p.os << "  batch_norm_forward_train<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", " << p.opt(o.getBias()) << ", "
         << cppDouble(o.getEps()) << ", " << cppDouble(o.getMomentum()) << ", " << p(o.getResult())
         << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
         << p(o.getNewRunningMean()) << ", " << p(o.getNewRunningVar()) << ");\n";
    return success();
  });
  t.add<BatchNormInferenceOp>([](BatchNormInferenceOp o, CpuPrinter &p) {
    p.os << "  batch_norm_forward_inference<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", " << p.opt(o.getBias()) << ", "
         << p(o.getRunningMean()) << ", " << p(o.getRunningVar()) << ", " << cppDouble(o.getEps())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<BatchNormApplyOp>([](BatchNormApplyOp o, CpuPrinter &p) {
    p.os << "  batch_norm_apply<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", " << p.opt(o.getBias()) << ", "
         << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  // Synchronised batch norm (runtime/kernels/SyncNorm.h).
  t.add<BatchNormSumsOp>([](BatchNormSumsOp o, CpuPrinter &p) {
    p.os << "  batch_norm_sums<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << o.getRanks() << ", " << p(o.getInput()) << ", "
         << (o.getCentered() ? p(o.getCentered()) : "nullptr") << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<BatchNormBackwardSumsOp>([](BatchNormBackwardSumsOp o, CpuPrinter &p) {
    p.os << "  batch_norm_backward_sums<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << p(o.getGrad()) << ", " << p(o.getInput()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ", " << p(o.getSums()) << ", " << p(o.getGradWeight())
         << ", " << p(o.getGradBias()) << ");\n";
    return success();
  });
  t.add<BatchNormBackwardInputOp>([](BatchNormBackwardInputOp o, CpuPrinter &p) {
    p.os << "  batch_norm_backward_input<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << o.getRanks() << ", " << p(o.getGrad()) << ", " << p(o.getInput()) << ", "
         << p.opt(o.getWeight()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ", " << p(o.getSums()) << ", " << p(o.getGradInput())
         << ");\n";
    return success();
  });
  t.add<BatchNormBackwardOp>([](BatchNormBackwardOp o, CpuPrinter &p) {
    p.os << "  batch_norm_backward<float>(" << cpp(kernel_args::batchNorm(o)) << ", "
         << p(o.getGrad()) << ", " << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", "
         << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", " << p(o.getGradInput())
         << ", " << p(o.getGradWeight()) << ", " << p(o.getGradBias()) << ");\n";
    return success();
  });
}

} // namespace

void mlir::tcc::registerCpuNormOps(CpuOpPrinters &t) {
  registerBatchNorm(t);
  t.add<LayerNormOp>([](LayerNormOp o, CpuPrinter &p) {
    p.os << "  layer_norm_forward<float>(" << rows(dimsOf(o.getInput()), o.getNormalizedDims())
         << ", " << p(o.getInput()) << ", " << p.opt(o.getWeight()) << ", " << p.opt(o.getBias())
         << ", " << cppDouble(o.getEps()) << ", " << p(o.getResult()) << ", " << p(o.getSavedMean())
         << ", " << p(o.getSavedInvstd()) << ");\n";
    return success();
  });
  t.add<LayerNormBackwardOp>([](LayerNormBackwardOp o, CpuPrinter &p) {
    p.os << "  layer_norm_backward<float>(" << rows(dimsOf(o.getInput()), o.getNormalizedDims())
         << ", " << p(o.getGrad()) << ", " << p(o.getInput()) << ", " << p.opt(o.getWeight())
         << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
         << p(o.getGradInput()) << ", " << p(o.getGradWeight()) << ", " << p(o.getGradBias())
         << ");\n";
    return success();
  });
  t.add<SoftmaxOp, LogSoftmaxOp>([](auto o, CpuPrinter &p) {
    kernel_args::Around around = kernel_args::around(dimsOf(o.getInput()), o.getAxis());
    p.os << "  " << (isa<SoftmaxOp>(o.getOperation()) ? "softmax" : "log_softmax")
         << "_forward<float>(" << cpp(around) << ", " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<SoftmaxBackwardOp, LogSoftmaxBackwardOp>([](auto o, CpuPrinter &p) {
    kernel_args::Around around = kernel_args::around(dimsOf(o.getGrad()), o.getAxis());
    p.os << "  " << (isa<SoftmaxBackwardOp>(o.getOperation()) ? "softmax" : "log_softmax")
         << "_backward<float>(" << cpp(around) << ", " << p(o.getResultValue()) << ", "
         << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
