//===- CudaGroups.cpp - A tcc.fusion_group as launches on the GPU ---------===//
//
// Each kind of group the cuda target runs: an elementwise group in one
// launch, a linear's or a convolution's epilogue in its library call,
// multi-tensor casts and updates in one launch per table, a norm's
// epilogue or prologue in its kernel's lambda.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// An elementwise group: its loop body (the cpu target's) in one launch.
LogicalResult printElementwiseGroup(FusionGroupOp group, CudaPrinter &p) {
  ChunkedElementwise chunked;
  if (failed(printChunkedElementwiseBody(group, p.e, chunked)))
    return failure();
  p.os << "  {\n" << chunked.functors;
  p.forEachChunk(numElements(group.getResult(0)), chunked.loads, chunked.stores, chunked.body);
  p.os << "  }\n";
  return success();
}

/// The group yields the activation's output, last (and before it the
/// linear's result, where the backward reads it).
LogicalResult printMatmulEpilogue(FusionGroupOp group, CudaPrinter &p) {
  auto linear = cast<LinearOp>(&*group.getFusedOps().begin());
  if (std::string why = unsupportedTypes(linear); !why.empty())
    return linear->emitError("the cuda target cannot run tcc.linear ") << why;
  printLinearForward(linear, p, group.getResults().back(),
                     group.getNumResults() == 2 ? group.getResult(0) : Value(), group);
  return success();
}

/// The group yields the ReLU's output (of its narrowing cast under 16-bit
/// storage), the conv's type: the conv's epilogue stores it.
LogicalResult printConvEpilogue(FusionGroupOp group, CudaPrinter &p) {
  Operation *conv = &*group.getFusedOps().begin();
  if (std::string why = unsupportedTypes(conv); !why.empty())
    return conv->emitError("the cuda target cannot run tcc.conv2d ") << why;
  return printConv(conv, p, group.getResult(0), group);
}

/// A multi_tensor_cast group: its casts in one launch
/// (runtime/cuda/device/MultiTensor.cuh), each into the group's result
/// that yields it.
LogicalResult printMultiTensorCast(FusionGroupOp group, CudaPrinter &p) {
  for (Operation &c : group.getFusedOps())
    if (std::string why = unsupportedTypes(&c); !why.empty())
      return c.emitError("the cuda target cannot run tcc.cast ") << why;
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  std::string rows;
  int count = 0;
  for (Operation &op : group.getFusedOps()) {
    auto c = cast<CastOp>(op);
    auto yielded = llvm::find(yield.getValues(), c.getResult());
    if (yielded == yield.getValues().end())
      continue; // read by nobody
    const std::string from = storageName(c.getInput()), to = storageName(c.getResult());
    const char *kind = from == "f32"    ? (to == "bf16" ? "FloatToBf16" : "FloatToF16")
                       : from == "bf16" ? "Bf16ToFloat"
                                        : "F16ToFloat";
    rows += "      {cuda::TensorCast::" + std::string(kind) + ", " + p(c.getInput()) + ", " +
            p(group.getResult(yielded - yield.getValues().begin())) + ", " +
            std::to_string(numElements(c.getResult())) + "},\n";
    ++count;
  }
  if (count)
    p.os << "  { cuda::CastTable<" << count << "> table{{\n" << rows
         << "      }, {}};\n    cuda::multi_tensor_cast(args.stream, table); }\n";
  return success();
}

LogicalResult printMultiTensorUpdate(FusionGroupOp group, CudaPrinter &p) {
  MultiTensorChains plan;
  if (failed(planMultiTensorUpdate(group, p.e, plan)))
    return failure();
  printUpdateChains(plan, p);
  return success();
}

} // namespace

LogicalResult mlir::tcc::emitCudaFusionGroup(FusionGroupOp group, CudaPrinter &p) {
  StringRef kind = group.getKind();
  if (kind == FusionGroupOp::kElementwise)
    return printElementwiseGroup(group, p);
  if (kind == FusionGroupOp::kMatmulEpilogue)
    return printMatmulEpilogue(group, p);
  if (kind == FusionGroupOp::kConvEpilogue)
    return printConvEpilogue(group, p);
  if (kind == FusionGroupOp::kConvStatistics)
    return printConvStatistics(group, p);
  if (kind == FusionGroupOp::kMultiTensorCast)
    return printMultiTensorCast(group, p);
  if (kind == FusionGroupOp::kMultiTensorUpdate)
    return printMultiTensorUpdate(group, p);
  if (kind == FusionGroupOp::kNormEpilogue || kind == FusionGroupOp::kNormBackwardPrologue)
    return emitNormGroup(
        group, p.e,
        {"[=] __device__", "cuda::", "args.stream, ", workspaceOf(group) + ", ", true});
  return group.emitError("the cuda target cannot run a fusion group of kind '")
         << kind << "' yet (docs/cuda.md lists what it runs); compile with --target=cpu";
}
