//===- ModelNode.h - The model.json node an op comes from --------*- C++ -*-===//
#ifndef TCC_IR_MODELNODE_H
#define TCC_IR_MODELNODE_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::tcc {

/// The model node an op comes from: the name the frontend put in its
/// location (backward ops keep their forward op's), or "" if none.
inline std::string modelNodeOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string node = modelNodeOf(inner); !node.empty())
        return node;
  return "";
}

} // namespace mlir::tcc

#endif // TCC_IR_MODELNODE_H
