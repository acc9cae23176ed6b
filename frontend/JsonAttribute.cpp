//===- JsonAttribute.cpp - JSON values as MLIR attributes -----------------===//
//
// The recipe sections (train, data, eval) travel in the IR as dictionaries,
// already validated and with every default filled by ModelSpec, so passes
// and code generators read one normalised form.
//
//===----------------------------------------------------------------------===//

#include "frontend/ModelImporter.h"

using namespace mlir;

Attribute mlir::tcc::jsonToAttribute(MLIRContext *ctx, const nlohmann::json &value) {
  Builder b(ctx);
  switch (value.type()) {
  case nlohmann::json::value_t::object: {
    NamedAttrList members;
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!it.value().is_null())
        members.append(it.key(), jsonToAttribute(ctx, it.value()));
    return members.getDictionary(ctx);
  }
  case nlohmann::json::value_t::array: {
    SmallVector<Attribute> elements;
    for (const nlohmann::json &element : value)
      elements.push_back(jsonToAttribute(ctx, element));
    return b.getArrayAttr(elements);
  }
  case nlohmann::json::value_t::string:
    return b.getStringAttr(value.get<std::string>());
  case nlohmann::json::value_t::boolean:
    return b.getBoolAttr(value.get<bool>());
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
    return b.getI64IntegerAttr(value.get<int64_t>());
  case nlohmann::json::value_t::number_float:
    return b.getF64FloatAttr(value.get<double>());
  default:
    return b.getUnitAttr();
  }
}
