//===- CollectiveOps.cpp - The collectives of a distributed step on cuda ---===//
//
// tcc.all_reduce as NCCL calls on the step's stream, captured into its CUDA
// graph (runtime/cuda/device/Collectives.cuh; the communicator is the
// trainer's, runtime/cuda/NcclCommunicator.cpp); a synchronised batch
// norm's sums between them (runtime/cuda/device/SyncNorm.cuh).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// The Collectives.cuh element type of `type`'s elements.
static const char *collectiveType(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isF64())
    return "cuda::CollectiveType::F64";
  if (element.isF16())
    return "cuda::CollectiveType::F16";
  if (element.isBF16())
    return "cuda::CollectiveType::BF16";
  return "cuda::CollectiveType::F32";
}

void mlir::tcc::registerCudaCollectiveOps(CudaOpPrinters &t) {
  t.add<AllReduceOp>([](AllReduceOp o, CudaPrinter &p) -> LogicalResult {
    // One group of calls, each tensor in its own element type.
    auto names = [&](ValueRange values) {
      llvm::interleaveComma(values, p.os, [&](Value v) { p.os << p(v); });
    };
    p.os << "  { const void *inputs[] = {";
    names(o.getInputs());
    p.os << "}; void *results[] = {";
    names(o.getResults());
    p.os << "}; const int64_t sizes[] = {";
    llvm::interleaveComma(o.getResults(), p.os, [&](Value v) { p.os << numElements(v); });
    p.os << "};\n    const cuda::CollectiveType types[] = {";
    llvm::interleaveComma(o.getResults(), p.os,
                          [&](Value v) { p.os << collectiveType(v.getType()); });
    p.os << "};\n    cuda::all_reduce(args.stream, args.comm, " << o.getResults().size()
         << ", inputs, results, sizes, types, "
         << (o.getReduction() == "mean" ? "true" : "false") << "); }\n";
    return success();
  });
  t.add<ShardOp, AllGatherOp, ReduceScatterOp>([](auto o, CudaPrinter &) -> LogicalResult {
    return o.emitOpError("(train.distributed.shard) has no cuda kernel yet: a sharded step "
                         "builds for --target=cpu only so far; use shard \"none\" for the "
                         "cuda target");
  });
  // A synchronised batch norm's sums and its dx (runtime/cuda/device/SyncNorm.cuh).
  t.add<BatchNormSumsOp>([](BatchNormSumsOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_sums(args.stream, " << workspaceOf(o) << ", "
         << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << o.getRanks() << ", "
         << p(o.getInput()) << ", "
         << (o.getCentered() ? p(o.getCentered()) : std::string("nullptr")) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<BatchNormBackwardSumsOp>([](BatchNormBackwardSumsOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_backward_sums<float>(args.stream, " << workspaceOf(o) << ", "
         << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << p(o.getGrad()) << ", "
         << p(o.getInput()) << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd())
         << ", " << p(o.getSums()) << ", " << p.e.nameOrNull(o.getGradWeight()) << ", "
         << p.e.nameOrNull(o.getGradBias()) << ");\n";
    return success();
  });
  t.add<BatchNormBackwardInputOp>([](BatchNormBackwardInputOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_backward_input<float>(args.stream, "
         << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << o.getRanks() << ", "
         << p(o.getGrad()) << ", " << p(o.getInput()) << ", " << p.e.nameOrNull(o.getWeight())
         << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
         << p(o.getSums()) << ", " << p(o.getGradInput()) << ");\n";
    return success();
  });
}
