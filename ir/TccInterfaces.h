//===- TccInterfaces.h - What tcc passes ask of an op -----------*- C++ -*-===//
#ifndef TCC_IR_TCCINTERFACES_H
#define TCC_IR_TCCINTERFACES_H

#include "mlir/IR/OpDefinition.h"

#include "ir/TccInterfaces.h.inc"

#endif // TCC_IR_TCCINTERFACES_H
