//===- TccAttention.cpp - Shapes and gradient of attention ----------------===//
//
// The shape rules of scaled_dot_product_attention (and its backward op,
// which checks its forward's operands with the same rule) and its
// vector-Jacobian product. See TccAttentionOps.td for the semantics.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeChecks.h"
#include "ir/TccOps.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::shape;

namespace {

/// The checks of the forward's operands and attributes; the [N, H, Tq] shape
/// of its logsumexp on success.
FailureOr<SmallVector<int64_t>> checkAttention(std::optional<Location> loc, Value query,
                                               Value key, Value value, Value seed,
                                               int64_t heads, double scale,
                                               double dropout) {
  for (auto [name, v] : {std::pair{"query", query}, {"key", key}, {"value", value}})
    if (failed(checkRank(loc, name, v, {3}, "[N, T, heads * head_dim]")))
      return failure();
  ArrayRef<int64_t> q = shapeOf(query), k = shapeOf(key), v = shapeOf(value);
  if (k[0] != q[0] || v[0] != q[0])
    return emitOptionalError(loc, "query ", shapeStr(query), ", key ", shapeStr(key),
                             " and value ", shapeStr(value), " need one batch size");
  if (k[2] != q[2])
    return emitOptionalError(loc, "query ", shapeStr(query), " and key ", shapeStr(key),
                             " need the same width (heads * head_dim)");
  if (v[1] != k[1])
    return emitOptionalError(loc, "key ", shapeStr(key), " and value ", shapeStr(value),
                             " need the same number of tokens");
  if (elementTypeOf(key) != elementTypeOf(query) ||
      elementTypeOf(value) != elementTypeOf(query))
    return emitOptionalError(loc, "query, key and value element types differ: ",
                             elementTypeOf(query), ", ", elementTypeOf(key), ", ",
                             elementTypeOf(value));
  if (heads < 1 || q[2] % heads || v[2] % heads)
    return emitOptionalError(loc, "heads ", heads, " must be positive and divide the width ",
                             q[2], " of query and key and the width ", v[2], " of value");
  if (!std::isfinite(scale))
    return emitOptionalError(loc, "scale must be finite, got ", scale);
  if (!(dropout >= 0 && dropout < 1))
    return emitOptionalError(loc, "dropout must be in [0, 1), got ", dropout);
  if ((dropout > 0) != bool(seed))
    return emitOptionalError(loc, dropout > 0 ? "dropout > 0 needs a seed operand"
                                              : "a seed operand needs dropout > 0");
  return SmallVector<int64_t>{q[0], heads, q[1]};
}

} // namespace

LogicalResult ScaledDotProductAttentionOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<SmallVector<int64_t>> stats = checkAttention(
      loc, adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(), adaptor.getSeed(),
      adaptor.getHeads(), adaptor.getScale().convertToDouble(),
      adaptor.getDropout().convertToDouble());
  if (failed(stats))
    return failure();
  ArrayRef<int64_t> q = shapeOf(adaptor.getQuery());
  inferred.push_back(RankedTensorType::get({q[0], q[1], shapeOf(adaptor.getValue())[2]},
                                           elementTypeOf(adaptor.getQuery())));
  inferred.push_back(RankedTensorType::get(*stats, Float32Type::get(ctx)));
  return success();
}

LogicalResult ScaledDotProductAttentionBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value query = adaptor.getQuery(), key = adaptor.getKey(), value = adaptor.getValue();
  FailureOr<SmallVector<int64_t>> stats =
      checkAttention(loc, query, key, value, adaptor.getSeed(), adaptor.getHeads(),
                     adaptor.getScale().convertToDouble(),
                     adaptor.getDropout().convertToDouble());
  if (failed(stats))
    return failure();
  ArrayRef<int64_t> q = shapeOf(query);
  SmallVector<int64_t> out{q[0], q[1], shapeOf(value)[2]};
  for (auto [name, v] : {std::pair{"grad", adaptor.getGrad()},
                         {"result_value", adaptor.getResultValue()}})
    if (shapeOf(v) != ArrayRef<int64_t>(out) || elementTypeOf(v) != elementTypeOf(query))
      return emitOptionalError(loc, name, " must be ", shapeStr(out), " of ",
                               elementTypeOf(query), ", got ", v.getType());
  Value lse = adaptor.getLogsumexp();
  if (shapeOf(lse) != ArrayRef<int64_t>(*stats) || !elementTypeOf(lse).isF32())
    return emitOptionalError(loc, "logsumexp must be ", shapeStr(*stats), " of f32, got ",
                             lse.getType());
  inferred.append({query.getType(), key.getType(), value.getType()});
  return success();
}

LogicalResult ScaledDotProductAttentionOp::buildGradients(
    OpBuilder &b, ArrayRef<Value> resultGrads, SmallVectorImpl<Value> &operandGrads) {
  // Nothing consumes the logsumexp but this rule's backward op, so only the
  // result's gradient reaches here.
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0])
    return emitOpError("gets a gradient only through its result, not its logsumexp");
  auto grads = b.create<ScaledDotProductAttentionBackwardOp>(
      getLoc(), resultGrads[0], getQuery(), getKey(), getValue(), getResult(),
      getLogsumexp(), getSeed(), getHeadsAttr(), getCausalAttr(), getScaleAttr(),
      getDropoutAttr(), getStreamAttr());
  operandGrads[0] = grads.getGradQuery();
  operandGrads[1] = grads.getGradKey();
  operandGrads[2] = grads.getGradValue();
  return success();
}
