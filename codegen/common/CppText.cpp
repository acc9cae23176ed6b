//===- CppText.cpp - C++ spellings of types, numbers and shapes -----------===//

#include "codegen/common/Emitter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"
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

std::string mlir::tcc::cppScheduleDesc(DictionaryAttr s) {
  auto num = [&](StringRef key, double fallback) {
    if (auto f = s.getAs<FloatAttr>(key))
      return f.getValueAsDouble();
    if (auto i = s.getAs<IntegerAttr>(key))
      return static_cast<double>(i.getInt());
    return fallback;
  };
  StringRef type = s.getAs<StringAttr>("type").getValue();
  std::string out = "[] { ScheduleDesc s; s.type = ScheduleDesc::";
  out += llvm::StringSwitch<const char *>(type)
             .Case("step", "Step")
             .Case("linear_warmup", "LinearWarmup")
             .Case("one_cycle", "OneCycle")
             .Case("cosine", "Cosine")
             .Case("piecewise_linear", "PiecewiseLinear")
             .Default("Constant");
  auto unit = s.getAs<StringAttr>("unit");
  out += "; s.perEpoch = " +
         std::string(unit && unit.getValue() == "step" ? "false" : "true");
  out += "; s.countFrom = " + std::to_string(static_cast<int>(num("count_from", 0)));
  out += "; s.stepSize = " + cppDouble(num("step_size", 1)) + "; s.gamma = " +
         cppDouble(num("gamma", 0.1)) + "; s.warmup = " + cppDouble(num("warmup", 0)) +
         "; s.minFactor = " + cppDouble(num("min_factor", 0)) + "; s.pctStart = " +
         cppDouble(num("pct_start", 0.3)) + "; s.divFactor = " + cppDouble(num("div_factor", 25)) +
         "; s.finalDivFactor = " + cppDouble(num("final_div_factor", 1e4));
  auto anneal = s.getAs<StringAttr>("anneal");
  out += "; s.annealCos = " +
         std::string(anneal && anneal.getValue() == "linear" ? "false" : "true");
  // The points fill fixed arrays (runtime/common/Schedule.h); the
  // tcc.lr_schedule verifier bounds their number.
  if (auto points = s.getAs<ArrayAttr>("points")) {
    out += "; s.pointCount = " + std::to_string(points.size());
    for (auto [i, p] : llvm::enumerate(points)) {
      auto pair = cast<ArrayAttr>(p);
      auto value = [](Attribute a) {
        if (auto f = dyn_cast<FloatAttr>(a))
          return f.getValueAsDouble();
        return static_cast<double>(cast<IntegerAttr>(a).getInt());
      };
      out += "; s.pointT[" + std::to_string(i) + "] = " + cppDouble(value(pair[0])) +
             "; s.pointFactor[" + std::to_string(i) + "] = " + cppDouble(value(pair[1]));
    }
  }
  return out + "; return s; }()";
}
