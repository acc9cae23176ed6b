//===- TccEmbedding.cpp - Shapes and gradient of embedding ----------------===//
//
// The shape rules of embedding and embedding_backward and the embedding's
// vector-Jacobian product. See TccEmbeddingOps.td for the semantics.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeChecks.h"
#include "ir/TccOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::shape;

namespace {

/// Ids stored in f32 are exact integers below 2^24: a larger table could
/// not be indexed.
constexpr int64_t kMaxEmbeddings = int64_t(1) << 24;

LogicalResult checkTable(std::optional<Location> loc, int64_t rows, int64_t paddingIdx) {
  if (rows < 1 || rows > kMaxEmbeddings)
    return emitOptionalError(loc, "num_embeddings must be in [1, ", kMaxEmbeddings,
                             "] (token ids are exact in f32 below 2^24), got ", rows);
  if (paddingIdx < -1 || paddingIdx >= rows)
    return emitOptionalError(loc, "padding_idx must be -1 (none) or in [0, ", rows,
                             "), got ", paddingIdx);
  return success();
}

} // namespace

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Value ids = adaptor.getIds(), weight = adaptor.getWeight();
  if (failed(checkRank(loc, "weight", weight, {2}, "[num_embeddings, embedding_dim]")))
    return failure();
  ArrayRef<int64_t> w = shapeOf(weight);
  if (failed(checkTable(loc, w[0], adaptor.getPaddingIdx())))
    return failure();
  if (shapeOf(ids).empty())
    return emitOptionalError(loc, "ids must be [N, ...], got a scalar");
  SmallVector<int64_t> out(shapeOf(ids));
  out.push_back(w[1]);
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(weight)));
  return success();
}

LogicalResult EmbeddingBackwardOp::inferReturnTypes(MLIRContext *,
                                                    std::optional<Location> loc,
                                                    Adaptor adaptor,
                                                    SmallVectorImpl<Type> &inferred) {
  Value grad = adaptor.getGrad(), ids = adaptor.getIds();
  int64_t rows = adaptor.getNumEmbeddings();
  if (failed(checkTable(loc, rows, adaptor.getPaddingIdx())))
    return failure();
  ArrayRef<int64_t> g = shapeOf(grad);
  if (g.size() != shapeOf(ids).size() + 1 || g.drop_back() != shapeOf(ids))
    return emitOptionalError(loc, "grad ", shapeStr(grad), " must be the ids' shape ",
                             shapeStr(ids), " and one more dim (embedding_dim)");
  inferred.push_back(RankedTensorType::get({rows, g.back()}, elementTypeOf(grad)));
  return success();
}

/// Only the table is differentiable; the ids are data.
LogicalResult EmbeddingOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  operandGrads[1] = b.create<EmbeddingBackwardOp>(
      getLoc(), resultGrads[0], getIds(), b.getI64IntegerAttr(shapeOf(getWeight())[0]),
      getPaddingIdxAttr());
  return success();
}
