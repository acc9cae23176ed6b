//===- CppText.cpp - C++ spellings of types, numbers and shapes -----------===//

#include "codegen/common/Emitter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::tcc;

std::string mlir::tcc::cppElementType(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isF32())
    return "float";
  if (element.isF64())
    return "double";
  if (element.isF16() || element.isBF16())
    return "uint16_t";
  if (element.isUnsignedInteger(8))
    return "uint8_t";
  return "int64_t";
}

std::string mlir::tcc::cppStringLiteral(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
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

std::string mlir::tcc::cppScheduleDesc(const ::tcc::rt::ScheduleDesc &s) {
  static const char *const kTypes[] = {"Constant", "Step",   "LinearWarmup",
                                       "OneCycle", "Cosine", "PiecewiseLinear"};
  std::string out = "[] { ScheduleDesc s; s.type = ScheduleDesc::";
  out += kTypes[s.type];
  out += "; s.perEpoch = " + std::string(s.perEpoch ? "true" : "false");
  out += "; s.countFrom = " + std::to_string(s.countFrom);
  out += "; s.stepSize = " + cppDouble(s.stepSize) + "; s.gamma = " + cppDouble(s.gamma) +
         "; s.warmup = " + cppDouble(s.warmup) + "; s.minFactor = " + cppDouble(s.minFactor) +
         "; s.pctStart = " + cppDouble(s.pctStart) + "; s.divFactor = " + cppDouble(s.divFactor) +
         "; s.finalDivFactor = " + cppDouble(s.finalDivFactor);
  out += "; s.annealCos = " + std::string(s.annealCos ? "true" : "false");
  // The points fill fixed arrays (runtime/common/Schedule.h); #tcc.schedule's
  // verifier bounds their number.
  if (s.pointCount > 0) {
    out += "; s.pointCount = " + std::to_string(s.pointCount);
    for (int i = 0; i < s.pointCount; ++i)
      out += "; s.pointT[" + std::to_string(i) + "] = " + cppDouble(s.pointT[i]) +
             "; s.pointFactor[" + std::to_string(i) + "] = " + cppDouble(s.pointFactor[i]);
  }
  return out + "; return s; }()";
}

std::string mlir::tcc::cppScheduleDesc(ScheduleAttr schedule) {
  return cppScheduleDesc(toRecipe(schedule));
}
