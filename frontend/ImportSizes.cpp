//===- ImportSizes.cpp - Every tensor of the model fits one tensor --------===//
//
// ModelSpec bounds each size field on its own; products of them (a weight
// [out, in/groups, kh, kw], an activation at a batch size) are bounded here,
// as each node is imported, before any later arithmetic uses them. The
// limit is frontend/Limits.h's kMaxTensorElements.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/ModelImporter.h"

#include "ir/TccTypes.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::tcc;
using ::tcc::frontend::NodeSpec;
namespace limits = ::tcc::frontend::limits;

namespace {

using limits::kLimitNote;

/// The element count of `shape` times `times`, or nullopt on overflow.
std::optional<int64_t> elements(ArrayRef<int64_t> shape, int64_t times = 1) {
  std::optional<int64_t> n = times;
  for (int64_t d : shape)
    n = n ? llvm::checkedMul(*n, d) : std::nullopt;
  return n;
}

std::string countText(std::optional<int64_t> n) {
  return n ? std::to_string(*n) : "more than 2^63";
}

} // namespace

LogicalResult ModelImporter::checkWeightSize(const NodeSpec &node,
                                             ArrayRef<int64_t> shape,
                                             StringRef fix) {
  std::optional<int64_t> n = elements(shape);
  if (n && *n <= limits::kMaxTensorElements)
    return success();
  return fail(&node, "its weight " + formatShape(shape) + " would hold " +
                         countText(n) + " values, more than the " +
                         std::to_string(limits::kMaxTensorElements) +
                         " of one tensor" + kLimitNote + "; " + fix);
}

LogicalResult ModelImporter::checkActivationSize(const NodeSpec &node,
                                                 Value value) {
  ArrayRef<int64_t> shape = cast<ShapedType>(value.getType()).getShape();
  int64_t batch = spec.batchSize();
  // Only batched values scale with the batch size (not, e.g., the channel
  // statistics of a batch norm).
  bool batched = !shape.empty() && shape[0] == batch;
  std::optional<int64_t> n = elements(shape);
  std::string field = "train.batch_size";
  if (n && batched) {
    int64_t evalBatch = spec.recipe.eval.batchSize;
    if (evalBatch > batch) {
      n = elements(shape.drop_front(), evalBatch);
      batch = evalBatch;
      field = "eval.batch_size";
    }
  }
  if (n && *n <= limits::kMaxTensorElements)
    return success();
  SmallVector<int64_t> atBatch(shape);
  if (batched)
    atBatch[0] = batch;
  return fail(&node, "its output " + formatShape(atBatch) + " at " + field +
                         " " + std::to_string(batch) + " would hold " +
                         countText(n) + " values, more than the " +
                         std::to_string(limits::kMaxTensorElements) +
                         " of one tensor" + kLimitNote + "; make the node's "
                         "output smaller or lower " + field);
}
