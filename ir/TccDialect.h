//===- TccDialect.h - The tcc dialect ---------------------------*- C++ -*-===//
#ifndef TCC_IR_TCCDIALECT_H
#define TCC_IR_TCCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/TccDialect.h.inc"

#endif // TCC_IR_TCCDIALECT_H
