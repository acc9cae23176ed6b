//===- TccTypes.h - Which tensor shapes tcc accepts -------------*- C++ -*-===//
#ifndef TCC_IR_TCCTYPES_H
#define TCC_IR_TCCTYPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::tcc {

/// Largest dim and element count of a tcc tensor. Far beyond any real
/// model, and small enough that shape arithmetic (products of a dim with an
/// attribute bounded by 2^24, sums of a few sizes) cannot overflow int64.
constexpr int64_t kMaxDim = int64_t(1) << 31;
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// Every dim in [1, kMaxDim] and at most kMaxElements elements in all.
inline bool isSupportedShape(llvm::ArrayRef<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > kMaxDim)
      return false;
    elements *= d; // both factors <= 2^48 and 2^31 before the check below
    if (elements > kMaxElements)
      return false;
  }
  return true;
}

/// "[8, 16, 4, 4]": a shape as a model author writes it, for messages.
inline std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

} // namespace mlir::tcc

#endif // TCC_IR_TCCTYPES_H
