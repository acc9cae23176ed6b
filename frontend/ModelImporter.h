//===- ModelImporter.h - State of one model.json import ---------*- C++ -*-===//
//
// Private to frontend/. The importer in three layers, each depending only on
// those below it:
//
//   ImportModel.cpp   @forward, @loss, parameter groups (ForwardImporter)
//   ImportOps.h/.cpp  one model.json node -> tcc ops (NodeImporter)
//   this header       the module being built, @forward's arguments, errors
//                     (ModelImporter.cpp), size checks (ImportSizes.cpp),
//                     init specs (ParamInit.cpp), JSON attributes
//                     (JsonAttribute.cpp)
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_MODELIMPORTER_H
#define TCC_FRONTEND_MODELIMPORTER_H

#include "frontend/ModelSpec.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tcc {

/// The concrete initialisation of a parameter: `init` resolved against the
/// module's PyTorch default and the tensor's fan-in/fan-out.
DictionaryAttr resolveInit(MLIRContext *ctx, const ::tcc::frontend::InitSpec &init,
                           StringRef op, StringRef role, int64_t fanIn,
                           int64_t fanOut);

/// A JSON value as an attribute: objects become dictionaries (null members
/// are dropped: "absent"), arrays become arrays, integers i64, other numbers
/// f64.
Attribute jsonToAttribute(MLIRContext *ctx, const nlohmann::json &value);

/// The state of one import and the ways to add to @forward's arguments.
/// A base: NodeImporter (ImportOps.h) adds the ops, ImportModel.cpp's
/// ForwardImporter the functions.
class ModelImporter {
protected:
  ModelImporter(MLIRContext &context, const ::tcc::frontend::ModelSpec &spec);

  // ModelImporter.cpp
  Value addArgument(Type type, DictionaryAttr attrs);
  /// A parameter of `node` (`role` is "weight" or "bias"); null if absent.
  /// `fanIn`/`fanOut` are those of the node's weight, as torch.nn.init
  /// computes them (a bias uses its weight's).
  Value addParameter(const ::tcc::frontend::NodeSpec &node, StringRef role,
                     ArrayRef<int64_t> shape, int64_t fanIn = 0,
                     int64_t fanOut = 0);
  /// A buffer such as running_mean, initialised to `fill`, updated by
  /// `update` at the end of each training step.
  Value addBuffer(const ::tcc::frontend::NodeSpec &node, StringRef role,
                  ArrayRef<int64_t> shape, double fill);
  void setBufferUpdate(Value buffer, Value update);
  Location nodeLoc(const ::tcc::frontend::NodeSpec &node);
  /// Reports a model.json problem at `node` (or at the top level if null).
  LogicalResult fail(const ::tcc::frontend::NodeSpec *node, const Twine &message);

  // ImportSizes.cpp
  /// Fails at `node` unless a weight of `shape` fits one tensor; `fix` says
  /// which fields to change.
  LogicalResult checkWeightSize(const ::tcc::frontend::NodeSpec &node,
                                ArrayRef<int64_t> shape, StringRef fix);
  /// Fails at `node` unless `value` (a batch of train.batch_size samples)
  /// fits one tensor at train.batch_size and at eval.batch_size.
  LogicalResult checkActivationSize(const ::tcc::frontend::NodeSpec &node,
                                    Value value);

  /// Creates `OpTy` with the result types its inference gives; on an
  /// inference error returns null, the diagnostic having been reported with
  /// the node's name.
  template <typename OpTy>
  Operation *create(const ::tcc::frontend::NodeSpec &node, ValueRange operands,
                    ArrayRef<NamedAttribute> attributes) {
    Location loc = nodeLoc(node);
    OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attributes);
    DictionaryAttr dict = state.attributes.getDictionary(&context);
    using Properties = typename OpTy::template InferredProperties<OpTy>;
    if constexpr (!std::is_same_v<Properties, EmptyProperties>) {
      auto &properties = state.getOrAddProperties<Properties>();
      if (failed(state.name.getRegisteredInfo()->setOpPropertiesFromAttribute(
              state.name, &properties, dict, nullptr))) {
        (void)fail(&node, "internal error: bad attributes for " +
                              OpTy::getOperationName());
        return nullptr;
      }
    }
    SmallVector<Type> types;
    if (failed(OpTy::inferReturnTypes(&context, loc, state.operands, dict,
                                      state.getRawProperties(), state.regions,
                                      types)))
      return nullptr;
    state.addTypes(types);
    return builder.create(state);
  }

  MLIRContext &context;
  const ::tcc::frontend::ModelSpec &spec;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp forward;
  /// Each node's value (the first result of its last op), by node name.
  llvm::StringMap<Value> values;
  SmallVector<DictionaryAttr> argAttrs;
  /// Buffer arguments and the values they take after a step.
  SmallVector<std::pair<Value, Value>> bufferUpdates;
  Value seed;
  int64_t dropoutStreams = 0;
  /// The first problem found; later ones are consequences.
  std::string error;
};

} // namespace mlir::tcc

#endif // TCC_FRONTEND_MODELIMPORTER_H
