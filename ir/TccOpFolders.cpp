//===- TccOpFolders.cpp - Folders of tcc ops ------------------------------===//

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// scale(x, 1) is x.
OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().isExactlyValue(1.0))
    return getInput();
  return {};
}

/// A cast to the type the value already has is the value.
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}
