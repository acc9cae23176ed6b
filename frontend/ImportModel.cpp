//===- ImportModel.cpp - ModelSpec -> @forward and @loss ------------------===//

#include "frontend/ImportModel.h"
#include "frontend/ImportOps.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccRecipe.h"
#include "ir/TccTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tcc;
using ::tcc::frontend::ModelSpec;
using ::tcc::frontend::NodeSpec;

namespace {

/// Builds the module: @forward node by node, @loss, the parameter groups.
class ForwardImporter : public NodeImporter {
public:
  ForwardImporter(MLIRContext &context, const ModelSpec &spec)
      : NodeImporter(context, spec) {}

  /// Builds the module; on failure returns null with `error` set.
  OwningOpRef<ModuleOp> run(std::string &errorOut);

private:
  LogicalResult buildForward();
  LogicalResult buildLoss(Type outputType);
  LogicalResult buildTokenLoss(RankedTensorType output);
  LogicalResult assignParameterGroups();
};

} // namespace

LogicalResult ForwardImporter::buildForward() {
  SmallVector<int64_t> inputShape{spec.batchSize()};
  llvm::append_range(inputShape, spec.inputShape);
  auto inputType = RankedTensorType::get(inputShape, builder.getF32Type());

  builder.setInsertionPointToEnd(module->getBody());
  forward = builder.create<func::FuncOp>(
      module->getLoc(), "forward", builder.getFunctionType({}, {}));
  forward.addEntryBlock();
  Value input = addArgument(
      inputType, builder.getDictionaryAttr(builder.getNamedAttr(
                     kRoleAttr, builder.getStringAttr(role::kInput))));
  values["input"] = input;
  // Dropout nodes, and attention that drops probabilities, read the seed.
  bool anyDropout = llvm::any_of(spec.nodes, [](const NodeSpec &n) {
    return n.op == "dropout" || (n.attrs.is_object() && n.attrs.contains("dropout") &&
                                 n.attrs["dropout"].get<double>() > 0);
  });
  if (anyDropout)
    seed = addArgument(RankedTensorType::get({}, builder.getI64Type()),
                       builder.getDictionaryAttr(builder.getNamedAttr(
                           kRoleAttr, builder.getStringAttr(role::kSeed))));

  builder.setInsertionPointToEnd(&forward.front());
  for (size_t index : spec.topoOrder)
    if (failed(importNode(spec.nodes[index])))
      return failure();

  Value output = values.lookup(spec.output);
  SmallVector<Value> results{output};
  SmallVector<Attribute> resultAttrs{builder.getDictionaryAttr(
      builder.getNamedAttr(kRoleAttr, builder.getStringAttr(role::kOutput)))};
  for (auto [buffer, update] : bufferUpdates) {
    results.push_back(update);
    unsigned argIndex = cast<BlockArgument>(buffer).getArgNumber();
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        kBufferAttr, argAttrs[argIndex].get(kBufferAttr))));
  }
  builder.create<func::ReturnOp>(forward.getLoc(), results);
  forward.setFunctionType(builder.getFunctionType(
      forward.front().getArgumentTypes(), ValueRange(results).getTypes()));
  forward.setAllArgAttrs(SmallVector<Attribute>(argAttrs.begin(), argAttrs.end()));
  forward.setAllResultAttrs(resultAttrs);
  return buildLoss(output.getType());
}

/// Sequence targets: logits [N, T, classes] against [N, T] classes, every
/// position but ignore_index's (tcc.token_cross_entropy).
LogicalResult ForwardImporter::buildTokenLoss(RankedTensorType output) {
  SmallVector<int64_t> expected{spec.batchSize(), spec.inputShape[0], spec.classes};
  if (output.getShape() != ArrayRef<int64_t>(expected))
    return fail(nullptr, "loss.cross_entropy with \"targets\": \"sequence\" needs the output '" +
                             spec.output + "' to be [batch, T, classes] = " +
                             formatShape(expected) + ", got " + formatShape(output.getShape()) +
                             "; end the graph with a linear layer of " +
                             std::to_string(spec.classes) + " outputs on the [N, T, features] "
                             "tokens");
  auto labelsType = RankedTensorType::get({expected[0], expected[1]}, builder.getI64Type());
  builder.setInsertionPointToEnd(module->getBody());
  Location loc = NameLoc::get(builder.getStringAttr("loss"));
  auto lossFn = builder.create<func::FuncOp>(
      loc, "loss",
      builder.getFunctionType({output, labelsType},
                              RankedTensorType::get({}, builder.getF32Type())));
  Block *entry = lossFn.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  Value loss = builder.create<TokenCrossEntropyOp>(
      loc, entry->getArgument(0), entry->getArgument(1),
      builder.getI64IntegerAttr(spec.loss.ignoreIndex),
      builder.getF64FloatAttr(spec.loss.labelSmoothing),
      builder.getStringAttr(spec.loss.reduction));
  builder.create<func::ReturnOp>(loc, loss);
  module->getOperation()->setAttr(kSequenceTargetsAttr, builder.getI64IntegerAttr(expected[1]));
  module->getOperation()->setAttr(kIgnoreIndexAttr,
                                  builder.getI64IntegerAttr(spec.loss.ignoreIndex));
  return success();
}

LogicalResult ForwardImporter::buildLoss(Type outputType) {
  auto output = cast<RankedTensorType>(outputType);
  if (spec.loss.targets == "sequence")
    return buildTokenLoss(output);
  SmallVector<int64_t> expected{spec.batchSize(), spec.classes};
  if (output.getShape() != ArrayRef<int64_t>(expected))
    return fail(nullptr, "loss." + spec.loss.op + " needs the output '" +
                             spec.output + "' to be [batch, classes] = " +
                             formatShape(expected) + ", got " +
                             formatShape(output.getShape()) +
                             "; end the graph with a linear layer of " +
                             std::to_string(spec.classes) + " outputs" +
                             (output.getRank() > 2
                                  ? " on an [N, features] value (a linear maps only the last "
                                    "dim, as torch.nn.Linear; flatten, pool or select before it)"
                                  : ""));
  auto labelsType = RankedTensorType::get({spec.batchSize()}, builder.getI64Type());
  builder.setInsertionPointToEnd(module->getBody());
  Location loc = NameLoc::get(builder.getStringAttr("loss"));
  auto lossFn = builder.create<func::FuncOp>(
      loc, "loss",
      builder.getFunctionType({outputType, labelsType},
                              RankedTensorType::get({}, builder.getF32Type())));
  Block *entry = lossFn.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  Value logits = entry->getArgument(0), labels = entry->getArgument(1);
  StringAttr reduction = builder.getStringAttr(spec.loss.reduction);
  Value loss;
  if (spec.loss.op == "cross_entropy") {
    loss = builder.create<CrossEntropyOp>(
        loc, logits, labels, /*valid=*/Value(),
        builder.getF64FloatAttr(spec.loss.labelSmoothing), reduction);
  } else {
    Value target = builder.create<OneHotOp>(loc, labels,
                                            builder.getI64IntegerAttr(spec.classes));
    loss = builder.create<MseLossOp>(loc, logits, target, /*valid=*/Value(), reduction);
  }
  builder.create<func::ReturnOp>(loc, loss);
  return success();
}

LogicalResult ForwardImporter::assignParameterGroups() {
  const std::vector<::tcc::rt::ParamGroup> &groups = spec.recipe.train.optimizer.groups;
  // Per group: the index of a parameter it matches that an earlier group
  // took (for the message when it ends up with none), or -1.
  SmallVector<bool> used(groups.size(), false);
  SmallVector<std::pair<std::string, size_t>> shadowedBy(groups.size(), {"", 0});
  // Set once at the end: setArgAttr rebuilds the array of every argument's
  // attributes, quadratic in a model of thousands of parameters.
  SmallVector<DictionaryAttr> argAttrs;
  forward.getAllArgAttrs(argAttrs);
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, kParamAttr);
    if (!name)
      continue;
    double lrScale = 1, wdScale = 1;
    std::optional<size_t> taken;
    for (size_t g = 0; g < groups.size(); ++g) {
      bool matched = false;
      for (const std::string &pattern : groups[g].match) {
        // A limit enables brace expansion ("fc.{weight,bias}").
        auto glob = llvm::GlobPattern::create(pattern, /*MaxSubPatterns=*/1024);
        if (!glob) {
          llvm::consumeError(glob.takeError());
          return fail(nullptr, "train.optimizer.groups[" + std::to_string(g) +
                                   "].match: '" + pattern +
                                   "' is not a valid glob pattern");
        }
        matched |= glob->match(name.getValue());
      }
      if (!matched)
        continue;
      if (taken) {
        if (shadowedBy[g].first.empty())
          shadowedBy[g] = {name.str(), *taken};
        continue;
      }
      taken = g;
      used[g] = true;
      lrScale = groups[g].lrScale;
      wdScale = groups[g].weightDecayScale;
    }
    NamedAttrList attrs(argAttrs[i]);
    attrs.set(kLrScaleAttr, builder.getF64FloatAttr(lrScale));
    attrs.set(kWeightDecayScaleAttr, builder.getF64FloatAttr(wdScale));
    argAttrs[i] = attrs.getDictionary(builder.getContext());
  }
  forward.setAllArgAttrs(argAttrs);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (used[g])
      continue;
    std::string where = "train.optimizer.groups[" + std::to_string(g) + "].match " +
                        nlohmann::json(groups[g].match).dump();
    if (!shadowedBy[g].first.empty())
      return fail(nullptr, where + " matches only parameters that an earlier "
                                   "group takes first (e.g. '" +
                               shadowedBy[g].first + "' goes to groups[" +
                               std::to_string(shadowedBy[g].second) +
                               "]); the first matching group wins, so reorder "
                               "the groups or narrow groups[" +
                               std::to_string(shadowedBy[g].second) + "]");
    return fail(nullptr, where + " matches no parameter; parameter names follow "
                                 "PyTorch's state_dict, e.g. 'conv1.weight', "
                                 "'bn1.bias'");
  }
  return success();
}

OwningOpRef<ModuleOp> ForwardImporter::run(std::string &errorOut) {
  // Shape errors come from the ops' type inference as diagnostics; report the
  // first with the model.json node it belongs to.
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    const NodeSpec *node = nullptr;
    if (auto nameLoc = dyn_cast<NameLoc>(diag.getLocation()))
      node = spec.findNode(nameLoc.getName().getValue());
    (void)fail(node, diag.str());
    return success();
  });

  module = ModuleOp::create(UnknownLoc::get(&context));
  module->getOperation()->setAttr(kModelAttr, builder.getStringAttr(spec.name));
  module->getOperation()->setAttr(kClassesAttr,
                                  builder.getI64IntegerAttr(spec.classes));
  module->getOperation()->setAttr(kInputShapeAttr,
                                  builder.getDenseI64ArrayAttr(spec.inputShape));
  if (spec.vocab > 0)
    module->getOperation()->setAttr(kVocabAttr, builder.getI64IntegerAttr(spec.vocab));
  module->getOperation()->setAttr(kTrainAttr, getTrainAttr(&context, spec.recipe.train));
  module->getOperation()->setAttr(kDataAttr, getDataAttr(&context, spec.recipe.data));
  module->getOperation()->setAttr(kEvalAttr, getEvalAttr(&context, spec.recipe.eval));

  if (failed(buildForward()) || failed(assignParameterGroups()) ||
      failed(verify(*module))) {
    if (error.empty())
      error = spec.path + ": the generated IR does not verify";
    errorOut = error;
    return nullptr;
  }
  return std::move(module);
}

OwningOpRef<ModuleOp> mlir::tcc::importModel(MLIRContext &context,
                                             const ModelSpec &spec,
                                             std::string &error) {
  context.loadDialect<TccDialect, func::FuncDialect>();
  return ForwardImporter(context, spec).run(error);
}
