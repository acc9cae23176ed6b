//===- ElementBody.cpp - The element body of a tcc.fusion_group -----------===//
//
// Every op of a group is an element functor of runtime/kernels (Celu<float>,
// CeluBackward<float>, ...), an operator on floats or a conversion between
// float and 16-bit storage (float_to_bf16, ...): the same operations,
// rounded in the same order, as the op's own kernel, and each op's value
// passes through as_stored() (no FMA across two ops), so a fused step is
// bit-identical to the unfused one on every -march.
// The group's loop is the norm kernel's own (its `_with` form takes the
// epilogue or prologue as a lambda: NormGroups.cpp) or the target's loop
// over the elements (cpu/CpuGroups.cpp, cuda/CudaGroups.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/common/ElementPrinter.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tcc;

LogicalResult ElementPrinter::print(Operation *op, llvm::raw_ostream &functors,
                                    llvm::raw_ostream &body) {
  std::string expr;
  if (std::string functor = elementFunctorOf(op); !functor.empty()) {
    std::string f = "f" + functorPrefix + std::to_string(counter);
    functors << "    const auto " << f << " = " << functor << ";\n";
    // Backward functors take (the forward's value, the gradient); the ops
    // take (grad, value).
    expr = op->getNumOperands() == 1
               ? f + "(" + element(op->getOperand(0)) + ")"
               : f + "(" + element(op->getOperand(1)) + ", " + element(op->getOperand(0)) + ")";
  } else if (auto apply = dyn_cast<BatchNormApplyOp>(op)) {
    // Only in a backward prologue, whose loop names the (ghost batch,
    // channel) row of element i of the statistics `gc`.
    int64_t channels = cast<RankedTensorType>(apply.getInput().getType()).getDimSize(1);
    expr = "batch_norm_apply_at<float>(" + element(apply.getInput()) + ", " +
           e.name(apply.getSavedMean()) + "[gc], " + e.name(apply.getSavedInvstd()) +
           "[gc], " + e.nameOrNull(apply.getWeight()) + ", " + e.nameOrNull(apply.getBias()) +
           ", gc % " + std::to_string(channels) + ")";
  } else if (isa<AddOp, MulOp>(op)) {
    expr = element(op->getOperand(0)) + (isa<AddOp>(op) ? " + " : " * ") +
           element(op->getOperand(1));
  } else if (auto cast = dyn_cast<CastOp>(op)) {
    // Between f32 and 16-bit storage, with the cast kernels' conversions
    // (round to nearest even down, exact up).
    std::string from = storageName(cast.getInput()), to = storageName(cast.getResult());
    if (from == to) {
      expr = element(cast.getInput());
    } else if (from == "f32" && (to == "bf16" || to == "f16")) {
      std::string local = "t" + std::to_string(counter++);
      body << "      const uint16_t " << local << " = float_to_" << to << "("
           << element(cast.getInput()) << ");\n";
      locals[op->getResult(0)] = local;
      return success();
    } else if (to == "f32" && (from == "bf16" || from == "f16")) {
      // Exact, and no product: nothing to keep from contracting, so no
      // as_stored (whose asm would keep a loop of casts from vectorizing).
      std::string local = "t" + std::to_string(counter++);
      body << "      const float " << local << " = " << from << "_to_float("
           << element(cast.getInput()) << ");\n";
      locals[op->getResult(0)] = local;
      return success();
    } else {
      return op->emitError("the cpu target cannot fuse a cast from ") << from << " to " << to;
    }
  } else if (auto scale = dyn_cast<ScaleOp>(op)) {
    // As kernels::scale: the factor rounded to float first.
    expr = "float(" + cppDouble(scale.getFactor()) + ") * " + element(scale.getInput());
  } else {
    return op->emitError("the cpu target cannot fuse this op");
  }
  std::string local = "t" + std::to_string(counter++);
  body << "      const float " << local << " = as_stored(" << expr << ");\n";
  locals[op->getResult(0)] = local;
  return success();
}

std::string mlir::tcc::storageName(Value v) {
  Type element = cast<ShapedType>(v.getType()).getElementType();
  return element.isBF16() ? "bf16" : element.isF16() ? "f16" : element.isF32() ? "f32" : "?";
}

std::string mlir::tcc::chunkLoopText(ArrayRef<std::string> loads,
                                     ArrayRef<std::string> stores, StringRef prelude,
                                     StringRef body, StringRef indent) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [j, name] : llvm::enumerate(loads))
    os << indent << "alignas(16) cuda::ChunkOf<decltype(" << name << ")> c" << j << ";\n"
       << indent << "cuda::load_chunk(" << name << ", i0, count, c" << j << ");\n";
  for (auto [j, name] : llvm::enumerate(stores))
    os << indent << "alignas(16) cuda::ChunkOf<decltype(" << name << ")> s" << j << ";\n";
  os << "#pragma unroll\n"
     << indent << "for (int k = 0; k < cuda::kChunk; ++k) {\n"
     << indent << "  if (k == count) break;\n";
  if (!prelude.empty())
    os << indent << "  " << prelude << "\n";
  for (StringRef line : llvm::split(body.trim('\n'), '\n'))
    os << indent << "  " << line.ltrim() << "\n";
  os << indent << "}\n";
  for (auto [j, name] : llvm::enumerate(stores))
    os << indent << "cuda::store_chunk(" << name << ", i0, count, s" << j << ");\n";
  return text;
}

/// The body of an elementwise group, one element's or a chunk's.
static LogicalResult printElementBody(FusionGroupOp group, StepEmitter &e,
                                      ChunkedElementwise *chunked, std::string &functors,
                                      std::string &body) {
  ElementPrinter printer(group, e, chunked);
  llvm::raw_string_ostream fos(functors), bos(body);
  for (Operation &op : group.getFusedOps())
    if (failed(printer.print(&op, fos, bos)))
      return failure();
  // Stores after every read of element i: the memory plan may give a
  // result the bytes of an operand the group is the last to read.
  for (Operation &op : group.getFusedOps())
    printer.printStores(op.getResults(), bos);
  return success();
}

LogicalResult mlir::tcc::printElementwiseBody(FusionGroupOp group, StepEmitter &e,
                                              std::string &functors, std::string &body) {
  return printElementBody(group, e, nullptr, functors, body);
}

LogicalResult mlir::tcc::printChunkedElementwiseBody(FusionGroupOp group, StepEmitter &e,
                                                     ChunkedElementwise &chunked) {
  return printElementBody(group, e, &chunked, chunked.functors, chunked.body);
}
