//===- NormOps.cpp - Batch norm, layer norm and softmax on the GPU --------===//
//
// Batch norm (runtime/cuda/device/Norm.cuh; synchronised over the ranks,
// SyncNorm.cuh): the cpu kernels' per-channel and per-row functions,
// storing through a device lambda. Layer norm
// (Norm.cuh) and softmax (Softmax.cuh): the cpu kernels' per-row and
// per-position functions.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/KernelArgs.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// The kernels hand over (and ask for) a chunk of elements at a time.
std::string storeChunk(CudaPrinter &p, Value y) {
  return "[=] __device__(int64_t i0, int count, const float (&y)[cuda::kChunk]) { "
         "cuda::store_chunk(" +
         p(y) + ", i0, count, y); }";
}

void registerBatchNorm(CudaOpPrinters &t) {
  t.add<BatchNormOp>([](BatchNormOp o, CudaPrinter &p) -> LogicalResult {
    // The kernel updates the running statistics in place.
    p.copyInto(o.getRunningMean(), o.getNewRunningMean());
    p.copyInto(o.getRunningVar(), o.getNewRunningVar());
    if (o.getSum()) { // sync_batch_norm: the statistics of every rank's samples (SyncNorm.cuh)
      p.os << "  cuda::batch_norm_forward_synced<float>(args.stream, "
           << cpp(kernel_args::batchNorm(o)) << ", " << o.getRanks() << ", " << p(o.getInput())
           << ", " << p.e.nameOrNull(o.getWeight()) << ", " << p.e.nameOrNull(o.getBias())
           << ", " << cppDouble(o.getEps()) << ", " << cppDouble(o.getMomentum()) << ", "
           << p(o.getSum()) << ", " << p(o.getSquaredDeviations()) << ", "
           << storeChunk(p, o.getResult()) << ", " << p(o.getSavedMean()) << ", "
           << p(o.getSavedInvstd()) << ", " << p(o.getNewRunningMean()) << ", "
           << p(o.getNewRunningVar()) << ");\n";
      return success();
    }
    p.os << "  cuda::batch_norm_forward_train_with<float>(args.stream, " << workspaceOf(o) << ", "
         << cpp(kernel_args::batchNorm(o)) << ", " << p(o.getInput()) << ", "
         << p.e.nameOrNull(o.getWeight()) << ", " << p.e.nameOrNull(o.getBias()) << ", "
         << cppDouble(o.getEps()) << ", " << cppDouble(o.getMomentum()) << ", "
         << storeChunk(p, o.getResult()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ", " << p(o.getNewRunningMean()) << ", "
         << p(o.getNewRunningVar()) << ");\n";
    return success();
  });
  t.add<BatchNormInferenceOp>([](BatchNormInferenceOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_forward_inference_with<float>(args.stream, "
         << cpp(kernel_args::batchNorm(o)) << ", " << p(o.getInput()) << ", "
         << p.e.nameOrNull(o.getWeight()) << ", " << p.e.nameOrNull(o.getBias()) << ", "
         << p(o.getRunningMean()) << ", " << p(o.getRunningVar()) << ", " << cppDouble(o.getEps())
         << ", " << storeChunk(p, o.getResult()) << ");\n";
    return success();
  });
  t.add<BatchNormApplyOp>([](BatchNormApplyOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_apply_with<float>(args.stream, " << cpp(kernel_args::batchNorm(o))
         << ", " << p(o.getInput()) << ", " << p.e.nameOrNull(o.getWeight()) << ", "
         << p.e.nameOrNull(o.getBias()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ", " << storeChunk(p, o.getResult()) << ");\n";
    return success();
  });
  t.add<BatchNormBackwardOp>([](BatchNormBackwardOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_backward_with<float>(args.stream, " << workspaceOf(o) << ", "
         << cpp(kernel_args::batchNorm(o))
         << ", [=] __device__(int64_t i0, int count, int64_t, int, "
            "float (&dy)[cuda::kChunk]) { cuda::load_chunk("
         << p(o.getGrad()) << ", i0, count, dy); }, " << p(o.getInput()) << ", "
         << p.e.nameOrNull(o.getWeight()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ", " << p.e.nameOrNull(o.getGradInput()) << ", "
         << p.e.nameOrNull(o.getGradWeight()) << ", " << p.e.nameOrNull(o.getGradBias()) << ");\n";
    return success();
  });
}

/// Layer norm's rows: "rows, normalised elements".
std::string rows(ArrayRef<int64_t> in, int64_t normalized) {
  const int64_t inner = product(in.take_back(normalized));
  return std::to_string(product(in) / inner) + ", " + std::to_string(inner);
}

} // namespace

void mlir::tcc::registerCudaNormOps(CudaOpPrinters &t) {
  registerBatchNorm(t);
  t.add<LayerNormOp>([](LayerNormOp o, CudaPrinter &p) {
    p.os << "  cuda::layer_norm_forward<float>(args.stream, "
         << rows(dimsOf(o.getInput()), o.getNormalizedDims()) << ", " << p(o.getInput()) << ", "
         << p.e.nameOrNull(o.getWeight()) << ", " << p.e.nameOrNull(o.getBias()) << ", "
         << cppDouble(o.getEps()) << ", " << p(o.getResult()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ");\n";
    return success();
  });
  t.add<LayerNormBackwardOp>([](LayerNormBackwardOp o, CudaPrinter &p) {
    p.os << "  cuda::layer_norm_backward<float>(args.stream, "
         << rows(dimsOf(o.getInput()), o.getNormalizedDims()) << ", " << p(o.getGrad()) << ", "
         << p(o.getInput()) << ", " << p.e.nameOrNull(o.getWeight()) << ", " << p(o.getSavedMean())
         << ", " << p(o.getSavedInvstd()) << ", " << p(o.getGradInput()) << ", "
         << p(o.getGradWeight()) << ", " << p(o.getGradBias()) << ");\n";
    return success();
  });
  t.add<SoftmaxOp, LogSoftmaxOp>([](auto o, CudaPrinter &p) {
    kernel_args::Around around = kernel_args::around(dimsOf(o.getInput()), o.getAxis());
    p.os << "  cuda::softmax_forward<" << (isa<LogSoftmaxOp>(o.getOperation()) ? "true" : "false")
         << ">(args.stream, " << cpp(around) << ", " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<SoftmaxBackwardOp, LogSoftmaxBackwardOp>([](auto o, CudaPrinter &p) {
    kernel_args::Around around = kernel_args::around(dimsOf(o.getGrad()), o.getAxis());
    p.os << "  cuda::softmax_backward<"
         << (isa<LogSoftmaxBackwardOp>(o.getOperation()) ? "true" : "false") << ">(args.stream, "
         << cpp(around) << ", " << p(o.getResultValue()) << ", " << p(o.getGrad()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
}
