//===- AttributeJson.cpp - Recipe attributes back to JSON -----------------===//

#include "codegen/Codegen.h"

#include "mlir/IR/BuiltinAttributes.h"
#include <nlohmann/json.hpp>

using namespace mlir;

nlohmann::json mlir::tcc::attributeToJsonValue(Attribute attr) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    nlohmann::json object = nlohmann::json::object();
    for (NamedAttribute member : dict)
      object[member.getName().str()] = attributeToJsonValue(member.getValue());
    return object;
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    nlohmann::json list = nlohmann::json::array();
    for (Attribute element : array)
      list.push_back(attributeToJsonValue(element));
    return list;
  }
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  return nullptr;
}

std::string mlir::tcc::attributeToJson(Attribute attr) {
  return attributeToJsonValue(attr).dump();
}
