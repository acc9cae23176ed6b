//===- MemoryPlan.cpp - The sizes tcc-plan-memory assigned ----------------===//

#include "passes/MemoryPlan.h"

#include "ir/TccAttrNames.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;

int64_t tcc::MemoryPlanSizes::stepBytes() const {
  return stateBytes + std::max(trainScratchBytes, evalScratchBytes) + batchBytes;
}

FailureOr<tcc::MemoryPlanSizes> tcc::readMemoryPlan(ModuleOp module) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  auto state = module->getAttrOfType<IntegerAttr>(tcc::kStateBytesAttr);
  if (!train || !eval || !state)
    return failure();
  auto scratch = [](func::FuncOp fn) -> int64_t {
    auto bytes = fn->getAttrOfType<IntegerAttr>(tcc::kScratchBytesAttr);
    return bytes ? bytes.getInt() : 0;
  };
  MemoryPlanSizes sizes;
  sizes.stateBytes = state.getInt();
  sizes.trainScratchBytes = scratch(train);
  sizes.evalScratchBytes = scratch(eval);
  for (unsigned i = 0; i < train.getNumArguments(); ++i) {
    auto role = train.getArgAttrOfType<StringAttr>(i, tcc::kRoleAttr);
    if (!role || (role.getValue() != role::kInput && role.getValue() != role::kLabels))
      continue;
    auto type = cast<ShapedType>(train.getArgument(i).getType());
    sizes.batchBytes += type.getNumElements() *
                        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  }
  return sizes;
}
