//===- OpText.cpp - Pieces of an op's call both targets print -------------===//

#include "codegen/common/Emitter.h"

using namespace mlir;
using namespace mlir::tcc;

std::string mlir::tcc::tensorArrays(const StepEmitter &e, ValueRange inputs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "  { const float *tensors[] = {";
  llvm::interleaveComma(inputs, os, [&](Value v) { os << e.name(v); });
  os << "}; const int64_t sizes[] = {";
  llvm::interleaveComma(inputs, os, [&](Value v) { os << numElements(v); });
  os << "};\n";
  return text;
}
