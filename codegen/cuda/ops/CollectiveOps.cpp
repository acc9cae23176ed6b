//===- CollectiveOps.cpp - The collectives of a distributed step on cuda ---===//
//
// tcc.all_reduce, and a sharded state's tcc.all_gather and
// tcc.reduce_scatter, as NCCL calls on the step's stream, captured into its
// CUDA graph (runtime/cuda/device/Collectives.cuh; the communicator is the
// trainer's, runtime/cuda/NcclCommunicator.cpp); a gradient bucket (an
// all-reduce or ZeRO-2's reduce-scatter) marked tcc.side_stream on the
// step's second stream, forked after its gradients
// and joined before its first reader (runtime/cuda/device/SideStream.cuh);
// a synchronised batch norm's sums between them (runtime/cuda/device/SyncNorm.cuh).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"

#include "mlir/IR/TypeUtilities.h"

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

/// `v`'s pointer as its element type: float, or the 16-bit type.
static std::string tensor(CudaPrinter &p, Value v) { return updatePointer(p.e, v, v); }


/// The index of the side-stream bucket `op`, else -1.
static int64_t sideStreamBucket(Operation *op) {
  auto bucket = op->getAttrOfType<IntegerAttr>(kBucketAttr);
  return bucket && op->hasAttr(kSideStreamAttr) ? bucket.getInt() : -1;
}

std::string mlir::tcc::sideStreamJoins(Operation *op) {
  std::string joins;
  SmallVector<Operation *> buckets;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && sideStreamBucket(def) >= 0 && !llvm::is_contained(buckets, def) &&
          sideStreamJoin(def) == op)
        buckets.push_back(def);
    }
  });
  llvm::sort(buckets, [](Operation *a, Operation *b) {
    return sideStreamBucket(a) < sideStreamBucket(b);
  });
  for (Operation *bucket : buckets)
    joins += "  cuda::join(args.stream, args.buckets, " +
             std::to_string(sideStreamBucket(bucket)) + ");\n";
  return joins;
}

void mlir::tcc::registerCudaCollectiveOps(CudaOpPrinters &t) {
  t.add<AllReduceOp>([](AllReduceOp o, CudaPrinter &p) -> LogicalResult {
    // One group of calls, each tensor in its own element type.
    auto names = [&](ValueRange values) {
      llvm::interleaveComma(values, p.os, [&](Value v) { p.os << p(v); });
    };
    // A bucket beside the backward: on the side stream, forked here.
    const int64_t bucket = sideStreamBucket(o);
    if (bucket >= 0)
      p.os << "  cuda::fork(args.stream, args.buckets, " << bucket << ");\n";
    p.os << "  { const void *inputs[] = {";
    names(o.getInputs());
    p.os << "}; void *results[] = {";
    names(o.getResults());
    p.os << "}; const int64_t sizes[] = {";
    llvm::interleaveComma(o.getResults(), p.os, [&](Value v) { p.os << numElements(v); });
    p.os << "};\n    const cuda::CollectiveType types[] = {";
    llvm::interleaveComma(o.getResults(), p.os,
                          [&](Value v) { p.os << collectiveType(v.getType()); });
    p.os << "};\n    cuda::all_reduce("
         << (bucket >= 0 ? "args.buckets->stream()" : "args.stream") << ", args.comm, "
         << o.getResults().size() << ", inputs, results, sizes, types, "
         << (o.getReduction() == "mean" ? "true" : "false") << (bucket >= 0 ? ", true" : "")
         << "); }\n";
    // Where a profiled step times the bucket's end (EventOpClock.cuh).
    if (bucket >= 0)
      p.os << "  cuda::bucket_end(args.buckets, " << bucket << ");\n";
    return success();
  });
  // Sharded state (ZeRO, docs/distributed.md): f32 or 16-bit tensors, each
  // in its element type (a 16-bit reduce-scatter sums in 16 bits, as the
  // all-reduce).
  t.add<ShardOp>([](ShardOp o, CudaPrinter &p) -> LogicalResult {
    Type element = getElementTypeOrSelf(o.getInput().getType());
    if (!element.isF32() && !element.isF16() && !element.isBF16())
      return o.emitOpError("shards f32, f16 or bf16 tensors only on the cuda target, got ")
             << o.getInput().getType();
    p.os << "  cuda::shard(args.stream, args.comm, " << numElements(o.getInput()) << ", "
         << numElements(o.getResult()) << ", " << (element.isF32() ? 4 : 2) << ", "
         << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<AllGatherOp, ReduceScatterOp>([](auto o, CudaPrinter &p) -> LogicalResult {
    constexpr bool gather = std::is_same_v<decltype(o), AllGatherOp>;
    for (Value v : o.getInputs())
      if (getElementTypeOrSelf(v.getType()).isF64())
        return o.emitOpError("moves f32 or 16-bit tensors only on the cuda target, got ")
               << v.getType();
    // A ZeRO-2 bucket beside the backward, as an all-reduce's.
    const int64_t bucket = sideStreamBucket(o);
    if (bucket >= 0)
      p.os << "  cuda::fork(args.stream, args.buckets, " << bucket << ");\n";
    p.os << chunkCollectiveArrays(p.e, o.getInputs(), o.getResults(), gather, "void")
         << "    const cuda::CollectiveType types[] = {";
    llvm::interleaveComma(o.getInputs(), p.os,
                          [&](Value v) { p.os << collectiveType(v.getType()); });
    p.os << "};\n    cuda::" << (gather ? "all_gather" : "reduce_scatter") << "("
         << (bucket >= 0 ? "args.buckets->stream()" : "args.stream") << ", args.comm, "
         << o.getResults().size() << ", inputs, results, sizes, wholes, types, "
         << workspaceOf(o) << (bucket >= 0 ? ", true" : "") << "); }\n";
    if (bucket >= 0)
      p.os << "  cuda::bucket_end(args.buckets, " << bucket << ");\n";
    return success();
  });
  // A synchronised batch norm's sums and its dx (runtime/cuda/device/SyncNorm.cuh);
  // dy, x and dx may be 16-bit (tcc-cuda-dgrad-statistics'), widened as loaded.
  t.add<BatchNormSumsOp>([](BatchNormSumsOp o, CudaPrinter &p) {
    printBatchNormSums(o, p, o);
    return success();
  });
  t.add<BatchNormBackwardSumsOp>([](BatchNormBackwardSumsOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_backward_sums<float>(args.stream, " << workspaceOf(o) << ", "
         << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << tensor(p, o.getGrad()) << ", "
         << tensor(p, o.getInput()) << ", " << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd())
         << ", " << p(o.getSums()) << ", " << p.e.nameOrNull(o.getGradWeight()) << ", "
         << p.e.nameOrNull(o.getGradBias()) << ");\n";
    return success();
  });
  t.add<BatchNormBackwardInputOp>([](BatchNormBackwardInputOp o, CudaPrinter &p) {
    p.os << "  cuda::batch_norm_backward_input<float>(args.stream, "
         << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << o.getRanks() << ", "
         << tensor(p, o.getGrad()) << ", " << tensor(p, o.getInput()) << ", "
         << p.e.nameOrNull(o.getWeight()) << ", " << p(o.getSavedMean()) << ", "
         << p(o.getSavedInvstd()) << ", " << p(o.getSums()) << ", "
         << tensor(p, o.getGradInput()) << ");\n";
    return success();
  });
}
