//===- ModelDescription.cpp - ModelInfo, the same for every target --------===//
//
// The part of a generated source that describes the model to the trainer:
// the state tensors (names, shapes, dtypes, roles, initialisers, offsets),
// the arenas' sizes, the recipe and the fingerprint. Every target prints it
// with this code, so a checkpoint does not depend on the target.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/ModelDescription.h"

#include "codegen/Codegen.h"
#include "codegen/common/Emitter.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"
#include "runtime/trainer/InitWhitening.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

std::string cppBool(bool value) { return value ? "true" : "false"; }

std::string cppFloats(const std::vector<float> &values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + cppDouble(values[i]);
  return out + "}";
}

/// The recipe as a runtime/Recipe.h initializer (an immediately invoked
/// lambda), every field spelled out.
std::string cppRecipe(const ::tcc::rt::Recipe &recipe) {
  using namespace ::tcc::rt;
  static const char *const kKinds[] = {"FP32", "BF16", "FP16"};
  static const char *const kStorages[] = {"Mixed", "Pure"};
  static const char *const kOptimizers[] = {"SGD", "Adam", "AdamW", "Lamb"};
  static const char *const kFormats[] = {"Idx", "Cifar10", "Npy"};
  const TrainRecipe &t = recipe.train;
  const Optimizer &o = t.optimizer;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[] {\n    Recipe r;\n"
     << "    r.train.batchSize = " << t.batchSize << "; r.train.epochs = " << cppDouble(t.epochs)
     << "; r.train.seed = " << t.seed << "ull; r.train.dropLast = " << cppBool(t.dropLast)
     << ";\n    r.train.optimizer.type = Optimizer::" << kOptimizers[o.type]
     << "; r.train.optimizer.lr = " << cppDouble(o.lr)
     << "; r.train.optimizer.weightDecay = " << cppDouble(o.weightDecay)
     << ";\n    r.train.optimizer.momentum = " << cppDouble(o.momentum)
     << "; r.train.optimizer.dampening = " << cppDouble(o.dampening)
     << "; r.train.optimizer.nesterov = " << cppBool(o.nesterov)
     << "; r.train.optimizer.momentumOf = Optimizer::"
     << (o.momentumOf == Optimizer::Update ? "Update" : "Gradient")
     << ";\n    r.train.optimizer.beta1 = " << cppDouble(o.beta1)
     << "; r.train.optimizer.beta2 = " << cppDouble(o.beta2)
     << "; r.train.optimizer.eps = " << cppDouble(o.eps) << ";\n";
  if (const std::optional<Lookahead> &l = o.lookahead)
    os << "    r.train.optimizer.lookahead = Lookahead{" << l->every << ", " << cppDouble(l->alpha)
       << ", Lookahead::" << (l->alphaSchedule == Lookahead::Cubic ? "Cubic" : "Constant") << ", "
       << cppBool(l->buffers) << ", " << cppBool(l->copyBack) << "};\n";
  os << "    r.train.schedule = " << cppScheduleDesc(t.schedule) << ";\n"
     << "    r.train.precision = Precision{Precision::" << kKinds[t.precision.kind]
     << ", Precision::" << kStorages[t.precision.storage] << "};\n";
  if (const std::optional<LossScale> &l = t.lossScale)
    os << "    r.train.lossScale = LossScale{" << cppDouble(l->initScale) << ", "
       << cppDouble(l->growthFactor) << ", " << cppDouble(l->backoffFactor) << ", "
       << l->growthInterval << "};\n";
  if (const std::optional<Ema> &e = t.ema)
    os << "    r.train.ema = Ema{" << cppDouble(e->decay) << ", " << e->every << ", "
       << cppBool(e->perEpoch) << "};\n";
  if (t.gradClipNorm)
    os << "    r.train.gradClipNorm = " << cppDouble(*t.gradClipNorm) << ";\n";
  if (t.memoryBudget)
    os << "    r.train.memoryBudget = " << *t.memoryBudget << ";\n";
  os << "    r.train.accumulate = " << t.accumulate
     << "; r.train.deterministic = " << cppBool(t.deterministic) << ";\n";
  if (t.distributed.ranks != 1)
    os << "    r.train.distributed.ranks = " << t.distributed.ranks << ";\n";
  if (t.distributed.syncBatchNorm)
    os << "    r.train.distributed.syncBatchNorm = true;\n";
  if (t.distributed.shard != ::tcc::rt::Distributed::None)
    os << "    r.train.distributed.shard = tcc::rt::Distributed::Shard(" << int(t.distributed.shard)
       << ");\n";
  const DataRecipe &d = recipe.data;
  const AugmentConfig &a = d.augment;
  os << "    r.data.format = DataRecipe::" << kFormats[d.format]
     << "; r.data.path = " << cppStringLiteral(d.path) << ";\n"
     << "    r.data.augment = AugmentConfig{" << a.cropPadding << ", " << cppBool(a.flip) << ", "
     << a.translate << ", " << a.cutout << ", " << cppBool(a.alternateFlip) << ", "
     << cppBool(a.reflect) << ", " << cppBool(a.balanced) << "};\n"
     << "    r.data.mean = " << cppFloats(d.mean) << "; r.data.std = " << cppFloats(d.std)
     << ";\n";
  const EvalRecipe &e = recipe.eval;
  os << "    r.eval = EvalRecipe{" << cppBool(e.flipViews) << ", " << cppBool(e.translateViews)
     << ", " << e.translate << ", " << e.batchSize << "};\n"
     << "    return r;\n  }()";
  return s;
}

std::string dtypeOf(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isF32())
    return "DType::F32";
  if (element.isF16())
    return "DType::F16";
  if (element.isBF16())
    return "DType::BF16";
  if (element.isUnsignedInteger(8))
    return "DType::U8";
  return "DType::I64";
}

std::string roleOf(StringRef kind) {
  if (kind == kind::kParam)
    return "StateRole::Parameter";
  if (kind == kind::kBuffer)
    return "StateRole::Buffer";
  if (kind == kind::kOptimizer)
    return "StateRole::OptimizerState";
  if (kind == kind::kEma)
    return "StateRole::Ema";
  if (kind == kind::kLookahead || kind == kind::kAmp)
    return "StateRole::OptimizerState";
  return "StateRole::Counter";
}

double number(DictionaryAttr dict, StringRef key) {
  if (auto f = dict.getAs<FloatAttr>(key))
    return f.getValueAsDouble();
  if (auto i = dict.getAs<IntegerAttr>(key))
    return static_cast<double>(i.getInt());
  return 0;
}

/// FNV-1a over the state layout: what a checkpoint must agree with.
uint64_t fingerprint(func::FuncOp train) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](StringRef s) {
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  };
  for (BlockArgument arg : train.getArguments())
    if (auto name = train.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kStateAttr)) {
      mix(name.getValue());
      // A sharded tensor as checkpoints hold it, whole: the fingerprint
      // does not depend on the ranks.
      Type whole = arg.getType();
      if (auto shardOf = train.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                                  kShardOfAttr))
        whole = RankedTensorType::get(shardOf.asArrayRef(),
                                      cast<ShapedType>(whole).getElementType());
      std::string type;
      llvm::raw_string_ostream os(type);
      os << whole;
      mix(type);
    }
  return h;
}

} // namespace

void mlir::tcc::emitModelDescription(ModuleOp module, func::FuncOp train,
                                     func::FuncOp eval, func::FuncOp frozen, func::FuncOp predict,
                                     StringRef target,
                                     ::tcc::rt::MemoryKind memory, int64_t scratchBytes,
                                     llvm::raw_ostream &os) {
  StateArenaAttr stateArena = getStateArena(module);
  ArrayRef<int64_t> stateOffsets = stateArena.getOffsets();
  // The state as a table read by a loop: one statement per tensor would
  // make a constructor whose build time grows faster than the model.
  os << "struct StateRow {\n  const char *name;\n  int rank;\n  int64_t dims[8];\n"
     << "  DType dtype;\n  StateRole role;\n  bool trainable;\n  const char *init;\n"
     << "  double a, b;\n  const char *source;\n  double c;\n  int64_t zeroRow;\n  size_t offset;\n"
     << "  const char *foldedInto;\n  int shardRank;\n  int64_t shardOf[8];\n};\n\n"
     << "// name, rank, shape, dtype, role, trainable, init (kind, a, b, source, c, zero row),\n// offset, "
     << "folded into, the whole shape of a sharded tensor (rank, dims)\n"
     << "const StateRow kStateRows[] = {\n";
  int slot = 0;
  for (BlockArgument arg : train.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name = train.getArgAttrOfType<StringAttr>(i, kStateAttr);
    if (!name)
      continue;
    auto init = train.getArgAttrOfType<DictionaryAttr>(i, kInitAttr);
    auto kind = train.getArgAttrOfType<StringAttr>(i, kKindAttr).getValue();
    auto trainable = train.getArgAttrOfType<BoolAttr>(i, kTrainableAttr);
    StringRef initKind = init.getAs<StringAttr>("kind").getValue();
    double a = 0, b = 0, c = 0;
    if (initKind == "constant")
      a = number(init, "value");
    else if (initKind == "uniform" || initKind == "dirac")
      a = number(init, "low"), b = number(init, "high");
    else if (initKind == "normal")
      a = number(init, "mean"), b = number(init, "std");
    else if (initKind == "patch_whitening")
      // airbench's settings where hand-written IR leaves them out.
      a = init.get("eps") ? number(init, "eps") : ::tcc::rt::kWhiteningEps,
      b = init.get("images") ? number(init, "images")
                             : static_cast<double>(::tcc::rt::kWhiteningImages),
      c = number(init, "ddof");
    auto source = init.getAs<StringAttr>("source");
    auto zeroRow = init.getAs<IntegerAttr>("zero_row");
    auto foldedInto = train.getArgAttrOfType<StringAttr>(i, kFoldedIntoAttr);
    ArrayRef<int64_t> shardOf;
    if (auto whole = train.getArgAttrOfType<DenseI64ArrayAttr>(i, kShardOfAttr))
      shardOf = whole.asArrayRef();
    os << "    {" << cppStringLiteral(name.getValue()) << ", " << dimsOf(arg).size() << ", {";
    llvm::interleaveComma(dimsOf(arg), os);
    os << "}, " << dtypeOf(arg.getType()) << ", " << roleOf(kind) << ", "
       << (trainable && trainable.getValue() ? "true" : "false") << ", "
       << cppStringLiteral(initKind) << ", " << llvm::format("%.17g", a) << ", "
       << llvm::format("%.17g", b) << ", "
       << cppStringLiteral(source ? source.getValue() : "") << ", " << llvm::format("%.17g", c)
       << ", " << (zeroRow ? zeroRow.getInt() : -1) << ", " << stateOffsets[slot++] << ", "
       << cppStringLiteral(foldedInto ? foldedInto.getValue() : "") << ", " << shardOf.size()
       << ", {";
    llvm::interleaveComma(shardOf, os);
    os << "}},\n";
  }
  os << "};\n\n";
  os << "Model::Model() {\n"
     << "  info_.name = " << cppStringLiteral(module->getAttrOfType<StringAttr>(kModelAttr).getValue())
     << ";\n  info_.target = " << cppStringLiteral(target) << ";\n  info_.memory = "
     << (memory == ::tcc::rt::MemoryKind::Device ? "MemoryKind::Device" : "MemoryKind::Host")
     << ";\n  info_.inputShape = {";
  llvm::interleaveComma(module->getAttrOfType<DenseI64ArrayAttr>(kInputShapeAttr).asArrayRef(), os);
  os << "};\n  info_.classes = "
     << module->getAttrOfType<IntegerAttr>(kClassesAttr).getInt() << ";\n";
  if (auto vocab = module->getAttrOfType<IntegerAttr>(kVocabAttr))
    os << "  info_.vocab = " << vocab.getInt() << ";\n";
  if (auto targets = module->getAttrOfType<IntegerAttr>(kSequenceTargetsAttr))
    os << "  info_.sequenceTargets = " << targets.getInt() << ";\n  info_.ignoreIndex = "
       << module->getAttrOfType<IntegerAttr>(kIgnoreIndexAttr).getInt() << ";\n";
  os << "  info_.batchSize = " << dimsOf(train.getArgument(0))[0] << ";\n"
     << "  info_.evalBatchSize = " << dimsOf(eval.getArgument(0))[0] << ";\n"
     << "  info_.stateBytes = "
     << stateArena.getBytes() << ";\n"
     << "  info_.scratchBytes = " << scratchBytes << ";\n"
     << "  info_.fingerprint = " << fingerprint(train) << "ull;\n";
  if (predict)
    os << "  info_.predictBatch = " << dimsOf(predict.getArgument(0))[0] << ";\n";
  if (frozen)
    os << "  info_.frozenFromEpoch = "
       << frozen->getAttrOfType<IntegerAttr>(kFrozenFromEpochAttr).getInt() << ";\n";
  // findPlannedSteps checked that the module has its recipe.
  os << "  info_.recipe = " << cppRecipe(*moduleRecipe(module)) << ";\n";
  // The learning rate the metrics report, as the step computes it.
  train.walk([&](LrScheduleOp schedule) {
    os << "  info_.baseLr = " << cppDouble(schedule.getBaseLr()) << ";\n"
       << "  info_.schedule = " << cppScheduleDesc(schedule.getSchedule()) << ";\n";
  });
  os << "  for (const StateRow &r : kStateRows)\n"
     << "    info_.state.push_back({r.name, std::vector<int64_t>(r.dims, r.dims + r.rank),\n"
     << "                           r.dtype, r.role, r.trainable,\n"
     << "                           {r.init, r.a, r.b, r.source, r.c, r.zeroRow}, r.offset, r.foldedInto,\n"
     << "                           std::vector<int64_t>(r.shardOf, r.shardOf + r.shardRank)});\n";
  os << "}\n\n";
}
