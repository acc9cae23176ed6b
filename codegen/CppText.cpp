//===- CppText.cpp - C++ spellings of types, numbers and shapes -----------===//

#include "codegen/CpuEmitter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::tcc;

std::string mlir::tcc::cppElementType(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isF32())
    return "float";
  if (element.isF16() || element.isBF16())
    return "uint16_t";
  if (element.isUnsignedInteger(8))
    return "uint8_t";
  return "int64_t";
}

std::string mlir::tcc::cppDouble(double value) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.17g", value);
  return s;
}

int64_t mlir::tcc::numElements(Value v) {
  return cast<ShapedType>(v.getType()).getNumElements();
}

ArrayRef<int64_t> mlir::tcc::dimsOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

std::string mlir::tcc::cppScalarLiteral(DenseElementsAttr splat) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (isa<FloatType>(splat.getElementType()))
    os << "float(" << llvm::format("%.9g", splat.getSplatValue<APFloat>().convertToDouble())
       << ")";
  else
    os << splat.getSplatValue<APInt>().getSExtValue();
  return s;
}
