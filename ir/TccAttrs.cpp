//===- TccAttrs.cpp - Every attribute of the tcc dialect ------------------===//
//
// The generated attribute classes and the dialect's parser and printer;
// their verifiers are in ir/TccRecipeAttrs.cpp and ir/TccPlanAttrs.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/TccAttrs.h"
#include "ir/TccDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tcc;

#include "ir/TccEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/TccAttrs.cpp.inc"

void TccDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/TccAttrs.cpp.inc"
      >();
}
