//===- ShapeOps.cpp - Views, casts and data movement on the cpu -----------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// Between f32 and a 16-bit float (tcc-precision, tcc-widen-16bit):
/// rounded to nearest even, as the GPU converts.
LogicalResult printCast(CastOp o, CpuPrinter &p) {
  if (o.getInput().getType() == o.getType()) {
    p.copyInto(o.getInput(), o.getResult());
    return success();
  }
  auto name = [](Type t) -> std::string {
    Type e = cast<ShapedType>(t).getElementType();
    return e.isF32() ? "f32" : e.isBF16() ? "bf16" : e.isF16() ? "f16" : "";
  };
  std::string from = name(o.getInput().getType()), to = name(o.getType());
  if (from.empty() || to.empty() || (from != "f32" && to != "f32"))
    return cpuCannotRun(o);
  p.os << "  cast_" << from << "_to_" << to << "(" << numElements(o.getResult()) << ", "
       << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
  return success();
}

LogicalResult printConcat(ConcatOp o, CpuPrinter &p) {
  ArrayRef<int64_t> out = dimsOf(o.getResult());
  int64_t axis = o.getAxis();
  std::string type = cppElementType(o.getType());
  p.os << "  { const " << type << " *inputs[] = {";
  llvm::interleaveComma(o.getInputs(), p.os, [&](Value v) { p.os << p(v); });
  p.os << "}; const int64_t sizes[] = {";
  llvm::interleaveComma(o.getInputs(), p.os, [&](Value v) { p.os << dimsOf(v)[axis]; });
  p.os << "}; concat<" << type << ">(" << product(out.take_front(axis)) << ", "
       << product(out.drop_front(axis + 1)) << ", " << o.getInputs().size() << ", inputs, sizes, "
       << p(o.getResult()) << "); }\n";
  return success();
}

} // namespace

void mlir::tcc::registerCpuShapeOps(CpuOpPrinters &t) {
  t.add<FlattenOp, ReshapeOp>([](auto o, CpuPrinter &p) {
    p.copyInto(o.getInput(), o.getResult());
    return success();
  });
  t.add<CastOp>(printCast);
  // Token embeddings: a gather and its scatter-add (runtime/kernels/Embedding.h).
  t.add<EmbeddingOp>([](EmbeddingOp o, CpuPrinter &p) {
    if (!cast<ShapedType>(o.getType()).getElementType().isF32())
      return cpuCannotRun(o);
    ArrayRef<int64_t> w = dimsOf(o.getWeight());
    p.os << "  embedding_forward<float, float>(" << numElements(o.getIds()) << ", " << w[0]
         << ", " << w[1] << ", " << p(o.getIds()) << ", " << p(o.getWeight()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<EmbeddingBackwardOp>([](EmbeddingBackwardOp o, CpuPrinter &p) {
    if (!cast<ShapedType>(o.getType()).getElementType().isF32())
      return cpuCannotRun(o);
    p.os << "  embedding_backward<float, float>(" << numElements(o.getIds()) << ", "
         << o.getNumEmbeddings() << ", " << dimsOf(o.getResult())[1] << ", "
         << static_cast<int64_t>(o.getPaddingIdx()) << ", " << p(o.getGrad()) << ", "
         << p(o.getIds()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<TransposeOp>([](TransposeOp o, CpuPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  { const int64_t shape[] = {";
    llvm::interleaveComma(in, p.os);
    p.os << "}; const int64_t perm[] = {";
    llvm::interleaveComma(o.getPerm(), p.os);
    p.os << "}; transpose<" << cppElementType(o.getType()) << ">(" << in.size() << ", shape, perm, "
         << p(o.getInput()) << ", " << p(o.getResult()) << "); }\n";
    return success();
  });
  t.add<ConcatOp>(printConcat);
  t.add<PadChannelsOp>([](PadChannelsOp o, CpuPrinter &p) {
    // The adjoint of a slice of the first C channels.
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  slice_backward<" << cppElementType(o.getType()) << ">(" << in[0] << ", "
         << o.getChannels() << ", " << product(in.drop_front(2)) << ", 0, " << in[1] << ", "
         << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<SliceOp>([](SliceOp o, CpuPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    int64_t axis = o.getAxis();
    p.os << "  slice<" << cppElementType(o.getType()) << ">(" << product(in.take_front(axis))
         << ", " << in[axis] << ", " << product(in.drop_front(axis + 1)) << ", " << o.getOffset()
         << ", " << o.getSize() << ", " << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<ExpandOp>([](ExpandOp o, CpuPrinter &p) {
    ArrayRef<int64_t> out = dimsOf(o.getResult());
    int64_t axis = o.getAxis();
    p.os << "  expand<" << cppElementType(o.getType()) << ">(" << product(out.take_front(axis))
         << ", " << out[axis] << ", " << product(out.drop_front(axis + 1)) << ", "
         << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<SliceBackwardOp>([](SliceBackwardOp o, CpuPrinter &p) {
    ArrayRef<int64_t> out = dimsOf(o.getResult());
    int64_t axis = o.getAxis();
    p.os << "  slice_backward<" << cppElementType(o.getType()) << ">("
         << product(out.take_front(axis)) << ", " << out[axis] << ", "
         << product(out.drop_front(axis + 1)) << ", " << o.getOffset() << ", "
         << dimsOf(o.getGrad())[axis] << ", " << p(o.getGrad()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  // Evaluation views (test-time augmentation).
  t.add<FlipOp>([](FlipOp o, CpuPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  flip<float>(" << in[0] * in[1] * in[2] << ", " << in[3] << ", 1, " << p(o.getInput())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<ShiftOp>([](ShiftOp o, CpuPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  shift_reflect<float>(" << in[0] * in[1] << ", " << in[2] << ", " << in[3] << ", "
         << static_cast<int64_t>(o.getDy()) << ", " << static_cast<int64_t>(o.getDx()) << ", "
         << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
