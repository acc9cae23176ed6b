//===- ShapeOps.cpp - Views, casts and data movement on the GPU -----------===//
//
// Device lambdas over the result's elements, each reading where the input
// keeps its element; sizes are constants (a division by a constant is a
// multiplication; by a variable, a subroutine call on the GPU).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "ir/PhysicalLayout.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The index into x [in] of element i of x.permute(perm), as C++.
std::string transposeSource(ArrayRef<int64_t> in, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inStride(in.size(), 1);
  for (int d = int(in.size()) - 2; d >= 0; --d)
    inStride[d] = inStride[d + 1] * in[d + 1];
  // Output dims from the last: digit d of i is (i / place) % in[perm[d]].
  std::string index;
  int64_t place = 1;
  for (int d = int(perm.size()) - 1; d >= 0; --d) {
    const int64_t size = in[perm[d]];
    std::string digit = place == 1 ? "i" : "i / " + std::to_string(place);
    if (d > 0)
      digit = "(" + digit + ") % " + std::to_string(size);
    index += (index.empty() ? "" : " + ") + std::string("(") + digit + ") * " +
             std::to_string(inStride[perm[d]]);
    place *= size;
  }
  return index.empty() ? "0" : index;
}

LogicalResult printCast(CastOp o, CudaPrinter &p) {
  std::string from = storageName(o.getInput()), to = storageName(o.getResult());
  if (from == to) {
    p.copyInto(o.getInput(), o.getResult());
    return success();
  }
  // The cast kernels' conversions (runtime/common/Float16.h).
  std::string convert = from == "f32" ? "float_to_" + to : from + "_to_float";
  if (isChannelsLast(o.getInput()) != isChannelsLast(o.getResult())) {
    // Converting between NCHW and NHWC as well (tcc-channels-last): a
    // gather, each element read where the other layout keeps it.
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    const bool toLast = isChannelsLast(o.getResult());
    SmallVector<int64_t> stored =
        toLast ? SmallVector<int64_t>(in) : SmallVector<int64_t>{in[0], in[2], in[3], in[1]};
    SmallVector<int64_t> perm =
        toLast ? SmallVector<int64_t>{0, 2, 3, 1} : SmallVector<int64_t>{0, 3, 1, 2};
    p.forEach(numElements(o.getResult()), p(o.getResult()) + "[i] = " + convert + "(" +
                                              p(o.getInput()) + "[" +
                                              transposeSource(stored, perm) + "]);");
    return success();
  }
  p.forEachChunk(numElements(o.getResult()), {p(o.getInput())}, {p(o.getResult())},
                 "s0[k] = " + convert + "(c0[k]);");
  return success();
}

/// One launch per input, into its block of the axis.
LogicalResult printConcat(ConcatOp o, CudaPrinter &p) {
  ArrayRef<int64_t> out = dimsOf(o.getResult());
  const int64_t axis = o.getAxis(), inner = product(out.drop_front(axis + 1));
  int64_t offset = 0;
  for (Value input : o.getInputs()) {
    const int64_t block = dimsOf(input)[axis] * inner;
    p.forEach(numElements(input), p(o.getResult()) + "[i / " + std::to_string(block) + " * " +
                                      std::to_string(out[axis] * inner) + " + " +
                                      std::to_string(offset * inner) + " + i % " +
                                      std::to_string(block) + "] = " + p(input) + "[i];");
    offset += dimsOf(input)[axis];
  }
  return success();
}

/// Each row of C channels (a sample's planes; an NHWC pixel's channels)
/// followed by zeros up to `channels`.
LogicalResult printPadChannels(PadChannelsOp o, CudaPrinter &p) {
  ArrayRef<int64_t> in = dimsOf(o.getInput());
  const int64_t inner = isChannelsLast(o.getResult()) ? 1 : product(in.drop_front(2));
  const std::string rowIn = std::to_string(in[1] * inner),
                    rowOut = std::to_string(o.getChannels() * inner);
  p.forEach(numElements(o.getResult()),
            "const int64_t r = i % " + rowOut + "; " + p(o.getResult()) + "[i] = r < " + rowIn +
                " ? " + p(o.getInput()) + "[i / " + rowOut + " * " + rowIn + " + r] : 0;");
  return success();
}

LogicalResult printSlice(SliceOp o, CudaPrinter &p) {
  ArrayRef<int64_t> in = dimsOf(o.getInput());
  const int64_t axis = o.getAxis(), inner = product(in.drop_front(axis + 1));
  const int64_t block = o.getSize() * inner;
  p.forEach(numElements(o.getResult()),
            p(o.getResult()) + "[i] = " + p(o.getInput()) + "[i / " + std::to_string(block) +
                " * " + std::to_string(in[axis] * inner) + " + " +
                std::to_string(o.getOffset() * inner) + " + i % " + std::to_string(block) + "];");
  return success();
}

/// Row r of each [extent * inner] row block: the grad's inside the range.
LogicalResult printSliceBackward(SliceBackwardOp o, CudaPrinter &p) {
  ArrayRef<int64_t> out = dimsOf(o.getResult());
  const int64_t axis = o.getAxis(), inner = product(out.drop_front(axis + 1));
  const std::string rowOut = std::to_string(out[axis] * inner),
                    rowIn = std::to_string(dimsOf(o.getGrad())[axis] * inner),
                    lo = std::to_string(o.getOffset() * inner);
  p.forEach(numElements(o.getResult()),
            "const int64_t r = i % " + rowOut + " - " + lo + "; " + p(o.getResult()) +
                "[i] = r >= 0 && r < " + rowIn + " ? " + p(o.getGrad()) + "[i / " + rowOut +
                " * " + rowIn + " + r] : 0;");
  return success();
}

} // namespace

void mlir::tcc::registerCudaShapeOps(CudaOpPrinters &t) {
  t.add<FlattenOp, ReshapeOp>([](auto o, CudaPrinter &p) {
    p.copyInto(o.getInput(), o.getResult());
    return success();
  });
  t.add<CastOp>(printCast);
  // Token embeddings: a gather and its ordered, atomic-free scatter-add
  // (runtime/cuda/device/Embedding.cuh).
  t.add<EmbeddingOp>([](EmbeddingOp o, CudaPrinter &p) {
    ArrayRef<int64_t> w = dimsOf(o.getWeight());
    p.os << "  cuda::embedding_forward<" << cppElementType(o.getType())
         << ", float>(args.stream, " << numElements(o.getIds()) << ", " << w[0]
         << ", " << w[1] << ", " << p(o.getIds()) << ", " << p(o.getWeight())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<EmbeddingBackwardOp>([](EmbeddingBackwardOp o, CudaPrinter &p) {
    p.os << "  cuda::embedding_backward<" << cppElementType(o.getType())
         << ", float>(args.stream, " << workspaceOf(o) << ", "
         << numElements(o.getIds()) << ", " << o.getNumEmbeddings() << ", "
         << dimsOf(o.getResult())[1] << ", "
         << static_cast<int64_t>(o.getPaddingIdx()) << ", " << p(o.getGrad())
         << ", " << p(o.getIds()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<TransposeOp>([](TransposeOp o, CudaPrinter &p) {
    p.forEach(numElements(o.getResult()), p(o.getResult()) + "[i] = " + p(o.getInput()) + "[" +
                                              transposeSource(dimsOf(o.getInput()), o.getPerm()) +
                                              "];");
    return success();
  });
  t.add<ConcatOp>(printConcat);
  t.add<PadChannelsOp>(printPadChannels);
  t.add<SliceOp>(printSlice);
  t.add<SliceBackwardOp>(printSliceBackward);
  t.add<ExpandOp>([](ExpandOp o, CudaPrinter &p) {
    ArrayRef<int64_t> out = dimsOf(o.getResult());
    const int64_t axis = o.getAxis(), inner = product(out.drop_front(axis + 1));
    const std::string block = std::to_string(out[axis] * inner), row = std::to_string(inner);
    p.forEach(numElements(o.getResult()), p(o.getResult()) + "[i] = " + p(o.getInput()) + "[i / " +
                                             block + " * " + row + " + i % " + row + "];");
    return success();
  });
  // Evaluation views (test-time augmentation).
  t.add<FlipOp>([](FlipOp o, CudaPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  cuda::flip<float>(args.stream, " << in[0] * in[1] * in[2] << ", " << in[3] << ", 1, "
         << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<ShiftOp>([](ShiftOp o, CudaPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  cuda::shift_reflect<float>(args.stream, " << in[0] * in[1] << ", " << in[2] << ", "
         << in[3] << ", " << static_cast<int64_t>(o.getDy()) << ", "
         << static_cast<int64_t>(o.getDx()) << ", " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
}
