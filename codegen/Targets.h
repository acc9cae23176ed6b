//===- Targets.h - Every target tcc is built with ---------------*- C++ -*-===//
#ifndef TCC_CODEGEN_TARGETS_H
#define TCC_CODEGEN_TARGETS_H

namespace mlir::tcc {

/// Registers every target (the rows in Targets.cpp), in the order --help
/// lists them. The tools call it before they look a target up.
void registerAllTargets();

} // namespace mlir::tcc

#endif // TCC_CODEGEN_TARGETS_H
