//===- ModelImporter.cpp - @forward's arguments and import errors ---------===//

#include "frontend/ModelImporter.h"

#include "ir/TccAttrNames.h"

using namespace mlir;
using namespace mlir::tcc;
using ::tcc::frontend::ModelSpec;
using ::tcc::frontend::NodeSpec;

ModelImporter::ModelImporter(MLIRContext &context, const ModelSpec &spec)
    : context(context), spec(spec), builder(&context) {}

Location ModelImporter::nodeLoc(const NodeSpec &node) {
  return NameLoc::get(builder.getStringAttr(node.name),
                      FileLineColLoc::get(&context, spec.path, 0, 0));
}

LogicalResult ModelImporter::fail(const NodeSpec *node, const Twine &message) {
  if (!error.empty())
    return failure();
  error = spec.path + ": ";
  if (node)
    error += "node '" + node->name + "' (graph[" + std::to_string(node->index) +
             "], " + node->op + "): ";
  error += message.str();
  return failure();
}

Value ModelImporter::addArgument(Type type, DictionaryAttr attrs) {
  argAttrs.push_back(attrs);
  return forward.front().addArgument(type, forward.getLoc());
}

Value ModelImporter::addParameter(const NodeSpec &node, StringRef role,
                                  ArrayRef<int64_t> shape, int64_t fanIn,
                                  int64_t fanOut) {
  auto it = node.params.find(role.str());
  if (it == node.params.end() || !it->second.present)
    return {};
  const ::tcc::frontend::ParamSpec &param = it->second;
  NamedAttrList attrs;
  // A parameter node's tensor is named after the node (role "").
  attrs.append(kParamAttr,
               builder.getStringAttr(role.empty() ? node.name : node.name + "." + role.str()));
  attrs.append(kInitAttr, resolveInit(&context, param.init, node.op, role,
                                       fanIn, fanOut));
  attrs.append(kTrainableAttr, builder.getBoolAttr(param.trainable));
  if (param.trainEpochs > 0)
    attrs.append(kTrainEpochsAttr, builder.getI64IntegerAttr(param.trainEpochs));
  return addArgument(RankedTensorType::get(shape, builder.getF32Type()),
                     attrs.getDictionary(&context));
}

Value ModelImporter::addBuffer(const NodeSpec &node, StringRef role,
                               ArrayRef<int64_t> shape, double fill) {
  NamedAttrList init;
  init.append("kind", builder.getStringAttr("constant"));
  init.append("value", builder.getF64FloatAttr(fill));
  NamedAttrList attrs;
  attrs.append(kBufferAttr, builder.getStringAttr(node.name + "." + role));
  attrs.append(kInitAttr, init.getDictionary(&context));
  return addArgument(RankedTensorType::get(shape, builder.getF32Type()),
                     attrs.getDictionary(&context));
}

void ModelImporter::setBufferUpdate(Value buffer, Value update) {
  bufferUpdates.push_back({buffer, update});
}
