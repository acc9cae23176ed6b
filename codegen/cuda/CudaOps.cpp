//===- CudaOps.cpp - One tcc op as launches on the model's stream ---------===//
//
// The cuda target's dispatch: a fusion group by its kind (CudaGroups.cpp),
// any other op by the table its families register (cuda/ops/), and the
// element types each op may run on.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaEmitter.h"

#include "codegen/cuda/ops/CudaPrinter.h"
#include "ir/ModelNode.h"
#include "ir/TccAttrNames.h"
#include "ir/TccPlan.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tcc;

// 16-bit tensors are read and written by convolutions, linear layers, max
// pools, channel padding, slices and their gradients (in one type per op), views, casts from
// or to f32, and the optimizer, EMA and Lookahead updates (the 16-bit state
// of pure 16-bit training; planUpdateChains checks one type per update);
// tcc-widen-16bit puts every other op on f32 copies (the cuda target's
// `keep` list, passes/InitAll.cpp). A kernel on their stored bits would
// compute garbage, silently.
std::string mlir::tcc::unsupportedTypes(Operation *op) {
  if (auto cast = dyn_cast<CastOp>(op)) {
    std::string from = storageName(cast.getInput()), to = storageName(cast.getResult());
    return from == to || from == "f32" || to == "f32" ? "" : "from " + from + " to " + to;
  }
  // (NCCL reduces, gathers and scatters each tensor of a collective in its
  // own type; a chunk copies bits.)
  if (isa<FlattenOp, ReshapeOp, SgdUpdateOp, AdamwUpdateOp, EmaUpdateOp, LookaheadUpdateOp,
          AllReduceOp, ShardOp, AllGatherOp, ReduceScatterOp>(op))
    return "";
  // A conv's 16-bit result, widened as each element is loaded; the backward
  // sums' and dx's 16-bit dy, x and dx (tcc-cuda-dgrad-statistics') too.
  if (isa<BatchNormSumsOp, BatchNormBackwardSumsOp, BatchNormBackwardInputOp>(op))
    return "";
  if (isa<ReduceSumOp>(op))
    return storageName(op->getOperand(0)) == storageName(op->getResult(0))
               ? ""
               : "from " + storageName(op->getOperand(0)) + " to " +
                     storageName(op->getResult(0));
  if (isa<LinearOp, LinearBackwardDataOp, LinearBackwardWeightOp, Conv2dOp,
          Conv2dBackwardDataOp, Conv2dBackwardFilterOp, MaxPool2dOp, MaxPool2dBackwardOp,
          PadChannelsOp, SliceOp, SliceBackwardOp>(op)) {
    std::string type = storageName(op->getResult(0));
    for (Value v : op->getOperands())
      if (storageName(v) != type)
        return "on " + storageName(v) + " and " + type + " tensors at once";
    return "";
  }
  // (f64: a synchronised batch norm's sums, Tcc_SumsTensor, which its
  // kernels take as doubles.)
  for (ValueRange values : {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value v : values)
      if (Type element = getElementTypeOrSelf(v.getType());
          isa<FloatType>(element) && !element.isF32() && !element.isF64())
        return "on " + storageName(v) + " tensors";
  return "";
}

LogicalResult mlir::tcc::refuseTypes(Operation *op, const std::string &why) {
  return op->emitError("the cuda target cannot run ")
         << op->getName() << " " << why
         << " (16-bit tensors reach only its convolutions, linear layers, max pools, views, "
            "channel paddings, slices, bias gradients' sums, casts, optimizer updates and "
            "collectives: "
            "tcc-widen-16bit puts the other ops on f32 copies)";
}

LogicalResult mlir::tcc::cudaCannotRun(Operation *op) {
  std::string node = modelNodeOf(op->getLoc());
  return op->emitError("the cuda target cannot run ")
         << op->getName() << (node.empty() ? "" : " (model node '" + node + "')")
         << " yet (docs/cuda.md lists what it runs); compile with --target=cpu";
}

std::string mlir::tcc::workspaceOf(Operation *op) {
  WorkspaceAttr workspace = getWorkspace(op);
  if (!workspace || !workspace.getOffset() || workspace.getBytes() <= 0)
    return "nullptr, 0";
  return "args.scratch + " + std::to_string(*workspace.getOffset()) + ", " +
         std::to_string(workspace.getBytes());
}

void CudaPrinter::forEach(int64_t n, const std::string &body) {
  os << "  cuda::for_each(args.stream, " << n << ", [=] __device__(int64_t i) { " << body
     << " });\n";
}

void CudaPrinter::forEachChunk(int64_t n, ArrayRef<std::string> loads,
                               ArrayRef<std::string> stores, StringRef body, bool indexed) {
  os << "    cuda::for_each_chunk(args.stream, " << n
     << ", [=] __device__(int64_t i0, int count) {\n"
     << chunkLoopText(loads, stores, indexed ? "const int64_t i = i0 + k;" : "", body, "      ")
     << "    });\n";
}

void CudaPrinter::overTensors(StringRef kernel, ValueRange inputs, Value result) {
  os << tensorArrays(e, inputs) << "    cuda::" << kernel << "(args.stream, " << inputs.size()
     << ", tensors, sizes, " << e.name(result) << "); }\n";
}

void CudaPrinter::copyInto(Value from, Value to) {
  if (e.name(from) != e.name(to))
    os << "  cuda::copy<" << cppElementType(from.getType()) << ">(args.stream, "
       << numElements(from) << ", " << e.name(from) << ", " << e.name(to) << ");\n";
}

LogicalResult mlir::tcc::emitCudaOp(Operation *op, StepEmitter &e,
                                    ArrayRef<std::string> convKeys) {
  // The step's stream waits for the buckets this op is the first to read.
  e.os << sideStreamJoins(op);
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    CudaPrinter p{e, e.os, convKeys};
    return emitCudaFusionGroup(group, p);
  }
  static const CudaOpPrinters printers([](CudaOpPrinters &t) {
#define OP_FAMILY(Family) registerCuda##Family##Ops(t);
#include "codegen/common/OpFamilies.def"
  });
  const CudaOpPrinters::Print *print = printers.lookup(op);
  if (!print)
    return cudaCannotRun(op);
  // Printed aside first: an op the target cannot run is named as such
  // before its types are looked at.
  std::string text;
  llvm::raw_string_ostream buffer(text);
  CudaPrinter aside{e, buffer, convKeys};
  if (failed((*print)(op, aside)))
    return failure();
  if (std::string why = unsupportedTypes(op); !why.empty())
    return refuseTypes(op, why);
  e.os << text;
  return success();
}
