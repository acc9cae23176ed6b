//===- TccOps.h - Ops of the tcc dialect ------------------------*- C++ -*-===//
#ifndef TCC_IR_TCCOPS_H
#define TCC_IR_TCCOPS_H

#include "ir/TccDialect.h"
#include "ir/TccInterfaces.h"
#include "ir/TccAttrs.h"
#include "ir/TccTraits.h"
#include "ir/TccTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define GET_OP_CLASSES
#include "ir/TccOps.h.inc"

#endif // TCC_IR_TCCOPS_H
