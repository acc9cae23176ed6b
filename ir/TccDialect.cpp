//===- TccDialect.cpp - The tcc dialect -----------------------------------===//
#include "ir/TccDialect.h"
#include "ir/TccOps.h"
#include "ir/TccAttrs.h"

using namespace mlir;
using namespace mlir::tcc;

#include "ir/TccDialect.cpp.inc"
#include "ir/TccInterfaces.cpp.inc"

void TccDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/TccOps.cpp.inc"
      >();
  registerAttributes();
}
