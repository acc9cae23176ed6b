//===- Recipe.h - Reading the recipe dictionaries of the IR -----*- C++ -*-===//
//
// tcc.train and tcc.eval are model.json sections as attributes; JSON does
// not tell integers from floats, so readers accept either.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_RECIPE_H
#define TCC_PASSES_RECIPE_H

#include "mlir/IR/BuiltinAttributes.h"

#include <string>
#include <vector>

namespace mlir::tcc::recipe {

inline double number(DictionaryAttr dict, StringRef key, double fallback) {
  Attribute value = dict ? dict.get(key) : Attribute();
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return static_cast<double>(i.getInt());
  return fallback;
}

inline int64_t integer(DictionaryAttr dict, StringRef key, int64_t fallback) {
  return static_cast<int64_t>(number(dict, key, static_cast<double>(fallback)));
}

inline bool boolean(DictionaryAttr dict, StringRef key, bool fallback) {
  auto b = dict ? dict.getAs<BoolAttr>(key) : BoolAttr();
  return b ? b.getValue() : fallback;
}

inline std::string string(DictionaryAttr dict, StringRef key, StringRef fallback) {
  auto s = dict ? dict.getAs<StringAttr>(key) : StringAttr();
  return s ? s.str() : fallback.str();
}

inline std::vector<double> numbers(DictionaryAttr dict, StringRef key,
                                   std::vector<double> fallback) {
  auto array = dict ? dict.getAs<ArrayAttr>(key) : ArrayAttr();
  if (!array)
    return fallback;
  std::vector<double> out;
  for (Attribute a : array) {
    if (auto f = dyn_cast<FloatAttr>(a))
      out.push_back(f.getValueAsDouble());
    else if (auto i = dyn_cast<IntegerAttr>(a))
      out.push_back(static_cast<double>(i.getInt()));
  }
  return out;
}

} // namespace mlir::tcc::recipe

#endif // TCC_PASSES_RECIPE_H
