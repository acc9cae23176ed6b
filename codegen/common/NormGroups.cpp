//===- NormGroups.cpp - A norm's kernel with its fused elementwise ops ----===//
//
// A norm_epilogue group is the batch norm's kernel storing through a lambda
// that runs the group's elementwise ops; a norm_backward_prologue group,
// the backward's kernel reading its gradient through one. A layer norm's
// kernel also reads its input through one (its forward group's ops before
// it). The lambdas are
// ElementPrinter's bodies; NormKernelStyle says how a target calls the
// kernels.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/ElementPrinter.h"
#include "codegen/common/KernelArgs.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// The cast inside `group` that widens `x` from 16-bit storage (tcc-fusion
/// moves it there for the norm that reads x), or null.
CastOp widenedInGroup(FusionGroupOp group, Value x) {
  auto cast = x.getDefiningOp<CastOp>();
  return cast && cast->getParentOp() == group ? cast : CastOp();
}

/// The pointer a group's norm reads its input `x` through: x's buffer, or
/// the 16-bit tensor itself where the group widens it (as half::F16 or
/// BF16, which the kernels widen as they load each element).
std::string normInput(FusionGroupOp group, Value x, StepEmitter &e) {
  CastOp widening = widenedInGroup(group, x);
  if (!widening)
    return e.name(x);
  return "reinterpret_cast<const " + updateElementType(widening.getInput()) + " *>(" +
         e.name(widening.getInput()) + ")";
}

/// The batch norm a norm_epilogue is built around.
Operation *normOf(FusionGroupOp group) {
  for (Operation &op : group.getFusedOps())
    if (isa<BatchNormOp, BatchNormInferenceOp, BatchNormApplyOp>(op))
      return &op;
  return nullptr;
}

/// The cast inside `group` that narrows a norm backward's `dx` to 16-bit
/// storage (tcc-fusion moves it there: the kernel stores dx narrowed), or
/// null.
CastOp narrowedInGroup(FusionGroupOp group, Value dx) {
  if (!dx.hasOneUse())
    return CastOp();
  auto cast = dyn_cast<CastOp>(*dx.getUsers().begin());
  return cast && cast->getParentOp() == group ? cast : CastOp();
}

/// The elementwise ops of the group other than its norm `anchor`, the
/// cast that widens the norm's input when only the norm reads it (the norm
/// reads the 16-bit tensor itself: normInput) and the cast that narrows a
/// backward's dx (the norm stores it narrowed: normGradInput).
SmallVector<Operation *> elementwiseOps(FusionGroupOp group, Operation *anchor) {
  auto backward = dyn_cast<BatchNormBackwardOp>(anchor);
  Value input = backward ? backward.getInput() : anchor->getOperand(0);
  Operation *widening = widenedInGroup(group, input);
  if (widening && !llvm::all_of(widening->getUsers(),
                                [&](Operation *user) { return user == anchor; }))
    widening = nullptr;
  Operation *narrowing = backward ? narrowedInGroup(group, backward.getGradInput()) : nullptr;
  SmallVector<Operation *> ops;
  for (Operation &op : group.getFusedOps())
    if (&op != anchor && &op != widening && &op != narrowing)
      ops.push_back(&op);
  return ops;
}

/// The pointer a group's norm backward stores dx through: dx's buffer, or
/// the 16-bit tensor its narrowing cast yields.
std::string normGradInput(FusionGroupOp group, Value dx, StepEmitter &e) {
  CastOp narrowing = narrowedInGroup(group, dx);
  return narrowing ? updatePointer(e, narrowing.getResult(), narrowing.getResult()) : e.name(dx);
}

/// The batch norm's kernel with the elementwise ops as its store.
LogicalResult printNormEpilogue(FusionGroupOp group, StepEmitter &e, const NormKernelStyle &k) {
  Operation *norm = normOf(group);
  ChunkedElementwise chunks;
  ElementPrinter printer(group, e, k.chunked ? &chunks : nullptr);
  printer.setLocal(norm->getResult(0), k.chunked ? "y[k]" : "y");
  std::string functors, body;
  llvm::raw_string_ostream fos(functors), bos(body);
  printer.printStores(norm->getResult(0), bos);
  for (Operation *op : elementwiseOps(group, norm)) {
    if (failed(printer.print(op, fos, bos)))
      return failure();
    printer.printStores(op->getResults(), bos);
  }
  // The cuda kernels hand over a chunk of normalised elements y[0, count).
  std::string store =
      k.chunked ? k.lambda + "(int64_t i0, int count, const float (&y)[cuda::kChunk]) {\n" +
                      chunkLoopText(chunks.loads, chunks.stores, "", body, "      ") + "    }"
                : k.lambda + "(int64_t i, float y) {\n" + body + "    }";
  e.os << "  {\n" << functors;
  if (auto bn = dyn_cast<BatchNormOp>(norm)) {
    // The kernel updates the running statistics in place: start them from
    // the old ones.
    for (auto [from, to] : {std::pair(bn.getRunningMean(), bn.getNewRunningMean()),
                            std::pair(bn.getRunningVar(), bn.getNewRunningVar())})
      if (e.name(from) != e.name(to))
        e.os << "    " << k.call << "copy<float>(" << k.stream << numElements(from) << ", "
             << e.name(from) << ", " << e.name(to) << ");\n";
    // Statistics from sums taken elsewhere (tcc-cuda-conv-statistics: by the
    // convolution that wrote the input): no statistics pass of its own.
    if (bn.getSum()) {
      e.os << "    " << k.call << "batch_norm_forward_synced<float>(" << k.stream
           << cpp(kernel_args::batchNorm(bn)) << ", " << bn.getRanks() << ", "
           << normInput(group, bn.getInput(), e) << ", " << e.nameOrNull(bn.getWeight())
           << ", " << e.nameOrNull(bn.getBias()) << ", " << cppDouble(bn.getEps()) << ", "
           << cppDouble(bn.getMomentum()) << ", " << e.name(bn.getSum()) << ", "
           << e.name(bn.getSquaredDeviations()) << ", " << store << ", "
           << e.name(bn.getSavedMean()) << ", " << e.name(bn.getSavedInvstd()) << ", "
           << e.name(bn.getNewRunningMean()) << ", " << e.name(bn.getNewRunningVar())
           << ");\n  }\n";
      return success();
    }
    e.os << "    " << k.call << "batch_norm_forward_train_with<float>(" << k.stream
         << k.workspace << cpp(kernel_args::batchNorm(bn)) << ", "
         << normInput(group, bn.getInput(), e) << ", " << e.nameOrNull(bn.getWeight()) << ", "
         << e.nameOrNull(bn.getBias()) << ", " << cppDouble(bn.getEps()) << ", "
         << cppDouble(bn.getMomentum()) << ", " << store << ", "
         << e.name(bn.getSavedMean()) << ", " << e.name(bn.getSavedInvstd()) << ", "
         << e.name(bn.getNewRunningMean()) << ", " << e.name(bn.getNewRunningVar())
         << ");\n  }\n";
    return success();
  }
  if (auto apply = dyn_cast<BatchNormApplyOp>(norm)) {
    e.os << "    " << k.call << "batch_norm_apply_with<float>(" << k.stream
         << cpp(kernel_args::batchNorm(apply)) << ", " << normInput(group, apply.getInput(), e)
         << ", " << e.nameOrNull(apply.getWeight()) << ", "
         << e.nameOrNull(apply.getBias()) << ", " << e.name(apply.getSavedMean()) << ", "
         << e.name(apply.getSavedInvstd()) << ", " << store << ");\n  }\n";
    return success();
  }
  auto inference = cast<BatchNormInferenceOp>(norm);
  e.os << "    " << k.call << "batch_norm_forward_inference_with<float>(" << k.stream
       << cpp(kernel_args::batchNorm(inference)) << ", "
       << normInput(group, inference.getInput(), e)
       << ", " << e.nameOrNull(inference.getWeight()) << ", "
       << e.nameOrNull(inference.getBias()) << ", " << e.name(inference.getRunningMean())
       << ", " << e.name(inference.getRunningVar()) << ", "
       << cppDouble(inference.getEps()) << ", " << store << ");\n  }\n";
  return success();
}

/// The batch norm backward's kernel, computing its gradient from the
/// elementwise ops (and recomputed normalised values) where it reads it.
LogicalResult printNormBackwardPrologue(FusionGroupOp group, StepEmitter &e,
                                        const NormKernelStyle &k) {
  auto bn = cast<BatchNormBackwardOp>(group.getNormBackward());
  ChunkedElementwise chunks;
  ElementPrinter printer(group, e, k.chunked ? &chunks : nullptr);
  std::string functors, body;
  llvm::raw_string_ostream fos(functors), bos(body);
  for (Operation *op : elementwiseOps(group, bn))
    if (failed(printer.print(op, fos, bos)))
      return failure();
  // The cuda kernels ask for a chunk of gradients dy[0, count) at once,
  // element k's statistics row gc0 + k * gcStep.
  std::string dyAt =
      k.chunked
          ? k.lambda + "(int64_t i0, int count, [[maybe_unused]] int64_t gc0, "
                       "[[maybe_unused]] int gcStep, float (&dy)[cuda::kChunk]) {\n" +
                chunkLoopText(chunks.loads, chunks.stores,
                              "[[maybe_unused]] const int64_t gc = gc0 + k * gcStep;",
                              body + "dy[k] = " + printer.element(bn.getGrad()) + ";",
                              "      ") +
                "    }"
          : k.lambda + "(int64_t i, [[maybe_unused]] int64_t gc) {\n" + body +
                "      return " + printer.element(bn.getGrad()) + ";\n    }";
  e.os << "  {\n" << functors << "    " << k.call << "batch_norm_backward_with<float>("
       << k.stream << k.workspace << cpp(kernel_args::batchNorm(bn)) << ", " << dyAt << ", "
       << normInput(group, bn.getInput(), e)
       << ", " << e.nameOrNull(bn.getWeight()) << ", " << e.name(bn.getSavedMean()) << ", "
       << e.name(bn.getSavedInvstd()) << ", " << normGradInput(group, bn.getGradInput(), e) << ", "
       << e.name(bn.getGradWeight()) << ", " << e.name(bn.getGradBias()) << ");\n  }\n";
  return success();
}

/// A layer norm's rows: "rows, normalised elements".
std::string layerNormRows(Value input, int64_t normalizedDims) {
  ArrayRef<int64_t> dims = dimsOf(input);
  const int64_t inner = product(dims.take_back(normalizedDims));
  return std::to_string(product(dims) / inner) + ", " + std::to_string(inner);
}

/// The ops of `group` that compute `value`, in the group's order.
llvm::SetVector<Operation *> producersIn(FusionGroupOp group, Value value) {
  llvm::SetVector<Operation *> found;
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Operation *op = work.pop_back_val().getDefiningOp();
    if (!op || op->getParentOp() != group || !found.insert(op))
      continue;
    llvm::append_range(work, op->getOperands());
  }
  llvm::SetVector<Operation *> ordered;
  for (Operation &op : group.getFusedOps())
    if (found.contains(&op))
      ordered.insert(&op);
  return ordered;
}

/// The layer norm's kernel computing its input from the ops before it
/// (the lambda xAt) and running the ops after it on each normalised
/// element (store, which also computes again and stores the values of the
/// ops before it that the group yields or the ops after it read).
LogicalResult printLayerNormEpilogue(FusionGroupOp group, LayerNormOp ln, StepEmitter &e,
                                     const NormKernelStyle &k) {
  Value input = ln.getInput();
  llvm::SetVector<Operation *> prologue = producersIn(group, input);
  std::string functors, xBody, body;
  llvm::raw_string_ostream fos(functors), xos(xBody), bos(body);
  ElementPrinter loads(group, e);
  loads.setFunctorPrefix("x");
  for (Operation *op : prologue)
    if (failed(loads.print(op, fos, xos)))
      return failure();

  // In store: the input and the normalised value are given (x, y); of the
  // prologue, only what is stored or read after the norm.
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  llvm::SetVector<Operation *> again;
  for (Operation *op : prologue)
    for (Value result : op->getResults())
      if (result != input &&
          (llvm::is_contained(yield.getValues(), result) ||
           llvm::any_of(result.getUsers(), [&](Operation *user) {
             return user != ln && !prologue.contains(user);
           })))
        for (Operation *p : producersIn(group, result))
          again.insert(p);
  ElementPrinter printer(group, e);
  printer.setLocal(input, "x");
  printer.setLocal(ln.getResult(), "y");
  SmallVector<Operation *> computed;
  for (Operation &op : group.getFusedOps()) {
    if (&op == ln.getOperation() || (prologue.contains(&op) && !again.contains(&op)) ||
        (input.getDefiningOp() == &op))
      continue;
    if (failed(printer.print(&op, fos, bos)))
      return failure();
    computed.push_back(&op);
  }
  printer.printStores(input, bos);
  printer.printStores(ln.getResult(), bos);
  for (Operation *op : computed)
    printer.printStores(op->getResults(), bos);

  std::string xAt = k.lambda + "(int64_t i) -> float {\n" + xBody + "      return " +
                    loads.element(input) + ";\n    }";
  std::string store = k.lambda + "(int64_t i, [[maybe_unused]] float x, float y) {\n" + body +
                      "    }";
  e.os << "  {\n" << functors << "    " << k.call << "layer_norm_forward_with<float>("
       << k.stream << layerNormRows(input, ln.getNormalizedDims()) << ", " << xAt << ", "
       << e.nameOrNull(ln.getWeight()) << ", " << e.nameOrNull(ln.getBias()) << ", "
       << cppDouble(ln.getEps()) << ", " << store << ", " << e.name(ln.getSavedMean()) << ", "
       << e.name(ln.getSavedInvstd()) << ");\n  }\n";
  return success();
}

/// The layer norm backward's kernels computing their gradient from the
/// group's elementwise ops where they read it (dyAt).
LogicalResult printLayerNormBackwardPrologue(FusionGroupOp group, LayerNormBackwardOp ln,
                                             StepEmitter &e, const NormKernelStyle &k) {
  ElementPrinter printer(group, e);
  std::string functors, body;
  llvm::raw_string_ostream fos(functors), bos(body);
  for (Operation &op : group.getFusedOps())
    if (&op != ln.getOperation() && failed(printer.print(&op, fos, bos)))
      return failure();
  std::string dyAt = k.lambda + "(int64_t i) -> float {\n" + body + "      return " +
                     printer.element(ln.getGrad()) + ";\n    }";
  e.os << "  {\n" << functors << "    " << k.call << "layer_norm_backward_with<float>("
       << k.stream << layerNormRows(ln.getInput(), ln.getNormalizedDims()) << ", " << dyAt
       << ", " << e.name(ln.getInput()) << ", " << e.nameOrNull(ln.getWeight()) << ", "
       << e.name(ln.getSavedMean()) << ", " << e.name(ln.getSavedInvstd()) << ", "
       << e.name(ln.getGradInput()) << ", " << e.name(ln.getGradWeight()) << ", "
       << e.name(ln.getGradBias()) << ");\n  }\n";
  return success();
}

} // namespace

LogicalResult mlir::tcc::emitNormGroup(FusionGroupOp group, StepEmitter &e,
                                       const NormKernelStyle &style) {
  for (Operation &op : group.getFusedOps()) {
    if (auto ln = dyn_cast<LayerNormOp>(op))
      return printLayerNormEpilogue(group, ln, e, style);
    if (auto ln = dyn_cast<LayerNormBackwardOp>(op))
      return printLayerNormBackwardPrologue(group, ln, e, style);
  }
  if (group.getKind() == FusionGroupOp::kNormEpilogue)
    return printNormEpilogue(group, e, style);
  return printNormBackwardPrologue(group, e, style);
}
