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

std::string mlir::tcc::chunkCollectiveArrays(const StepEmitter &e, ValueRange inputs,
                                             ValueRange results, bool gather,
                                             StringRef element) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto names = [&](ValueRange values) {
    llvm::interleaveComma(values, os, [&](Value v) { os << e.name(v); });
  };
  auto counts = [&](ValueRange values) {
    llvm::interleaveComma(values, os, [&](Value v) { os << numElements(v); });
  };
  os << "  { const " << element << " *inputs[] = {";
  names(inputs);
  os << "}; " << element << " *results[] = {";
  names(results);
  os << "}; const int64_t sizes[] = {";
  counts(gather ? inputs : results);
  os << "}, wholes[] = {";
  counts(gather ? results : inputs);
  os << "};\n";
  return text;
}
