//===- PhysicalLayout.h - How a 4-d tensor is stored --------------*- C++ -*-===//
//
// The IR's 4-d tensors are NCHW, as PyTorch's. tcc-channels-last
// (passes/ChannelsLast.cpp) marks the ops whose 4-d results the cuda target
// stores NHWC instead (`tcc.channels_last`): the layout cuDNN's tensor-core
// engines read without a transpose. The shapes stay logical; only the
// kernels that index by channel or by pixel look at the layout (codegen/
// KernelArgs.cpp, codegen/cuda/ops/), and the code generators ask here.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_PHYSICALLAYOUT_H
#define TCC_IR_PHYSICALLAYOUT_H

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tcc {

/// True if `v`'s bytes depend on the layout: a 4-d tensor with more than one
/// channel and more than one pixel ([n, c, 1, 1] and [n, 1, h, w] are the
/// same bytes in NCHW and NHWC).
inline bool layoutMatters(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4 && type.getDimSize(1) > 1 &&
         type.getDimSize(2) * type.getDimSize(3) > 1;
}

/// True if `v` is stored NHWC: a 4-d result of an op marked
/// `tcc.channels_last` (a fusion group's result: of the op inside that
/// computes it). Function arguments are NCHW.
inline bool isChannelsLast(Value v) {
  if (!layoutMatters(v))
    return false;
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return false;
  Operation *op = result.getOwner();
  if (auto group = dyn_cast<FusionGroupOp>(op))
    return isChannelsLast(group.getBody().front().getTerminator()->getOperand(
        result.getResultNumber()));
  return op->hasAttr(kChannelsLastAttr);
}

/// True if `from` and `to` are stored in different layouts: an op that
/// reads one and writes the other (a cast that converts) gathers, so no
/// loop over elements takes it in and its result never goes in place.
inline bool changesLayout(Value from, Value to) {
  return isChannelsLast(from) != isChannelsLast(to);
}

/// True if `op` reads or writes a tensor stored NHWC.
inline bool touchesChannelsLast(Operation *op) {
  return llvm::any_of(op->getOperands(), isChannelsLast) ||
         llvm::any_of(op->getResults(), isChannelsLast);
}

} // namespace mlir::tcc

#endif // TCC_IR_PHYSICALLAYOUT_H
