//===- CpuEmitter.cpp - The cpu target: walk, memory, model description ---===//

#include "codegen/Codegen.h"
#include "codegen/CpuEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

namespace {

std::string quoted(StringRef s) {
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
  if (kind == "param")
    return "StateRole::Parameter";
  if (kind == "buffer")
    return "StateRole::Buffer";
  if (kind == "optimizer")
    return "StateRole::OptimizerState";
  if (kind == "ema")
    return "StateRole::Ema";
  if (kind == "lookahead")
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
    if (auto name = train.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tcc.state")) {
      mix(name.getValue());
      std::string type;
      llvm::raw_string_ostream os(type);
      os << arg.getType();
      mix(type);
    }
  return h;
}

/// The constructor that fills ModelInfo.
void emitModelInfo(ModuleOp module, func::FuncOp train, func::FuncOp eval,
                   llvm::raw_ostream &os) {
  auto stateOffsets = module->getAttrOfType<DenseI64ArrayAttr>("tcc.state_offsets");
  auto scratch = [](func::FuncOp fn) {
    return fn->getAttrOfType<IntegerAttr>("tcc.scratch_bytes").getInt();
  };
  os << "Model::Model() {\n"
     << "  info_.name = " << quoted(module->getAttrOfType<StringAttr>("tcc.model").getValue())
     << ";\n  info_.target = \"cpu\";\n  info_.inputShape = {";
  llvm::interleaveComma(module->getAttrOfType<DenseI64ArrayAttr>("tcc.input_shape").asArrayRef(), os);
  os << "};\n  info_.classes = "
     << module->getAttrOfType<IntegerAttr>("tcc.classes").getInt() << ";\n"
     << "  info_.batchSize = " << dimsOf(train.getArgument(0))[0] << ";\n"
     << "  info_.evalBatchSize = " << dimsOf(eval.getArgument(0))[0] << ";\n"
     << "  info_.stateBytes = "
     << module->getAttrOfType<IntegerAttr>("tcc.state_bytes").getInt() << ";\n"
     << "  info_.scratchBytes = " << std::max(scratch(train), scratch(eval)) << ";\n"
     << "  info_.fingerprint = " << fingerprint(train) << "ull;\n";
  std::string recipe = "{\"train\":" + attributeToJson(module->getAttr("tcc.train")) +
                       ",\"data\":" + attributeToJson(module->getAttr("tcc.data")) +
                       ",\"eval\":" + attributeToJson(module->getAttr("tcc.eval")) + "}";
  os << "  info_.recipeJson = " << quoted(recipe) << ";\n";
  int slot = 0;
  for (BlockArgument arg : train.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name = train.getArgAttrOfType<StringAttr>(i, "tcc.state");
    if (!name)
      continue;
    auto init = train.getArgAttrOfType<DictionaryAttr>(i, "tcc.init");
    auto kind = train.getArgAttrOfType<StringAttr>(i, "tcc.kind").getValue();
    auto trainable = train.getArgAttrOfType<BoolAttr>(i, "tcc.trainable");
    StringRef initKind = init.getAs<StringAttr>("kind").getValue();
    double a = 0, b = 0;
    if (initKind == "constant")
      a = number(init, "value");
    else if (initKind == "uniform" || initKind == "dirac")
      a = number(init, "low"), b = number(init, "high");
    else if (initKind == "normal")
      a = number(init, "mean"), b = number(init, "std");
    auto source = init.getAs<StringAttr>("source");
    os << "  info_.state.push_back({" << quoted(name.getValue()) << ", {";
    llvm::interleaveComma(dimsOf(arg), os);
    os << "}, " << dtypeOf(arg.getType()) << ", " << roleOf(kind) << ", "
       << (trainable && trainable.getValue() ? "true" : "false") << ", {"
       << quoted(initKind) << ", " << llvm::format("%.17g", a) << ", "
       << llvm::format("%.17g", b) << ", "
       << quoted(source ? source.getValue() : "") << "}, "
       << stateOffsets[slot++] << "});\n";
  }
  os << "}\n\n";
}

/// Prints one step function's body: names every value after the memory plan,
/// prints each op, then copies state results that were not updated in place.
LogicalResult emitBody(func::FuncOp fn, CpuEmitter &e) {
  llvm::raw_ostream &os = e.os;
  auto offsets = fn->getParentOfType<ModuleOp>()->getAttrOfType<DenseI64ArrayAttr>(
      "tcc.state_offsets");
  int slot = 0;
  DenseMap<StringRef, std::string> slotNames;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string type = cppElementType(arg.getType());
    if (auto state = fn.getArgAttrOfType<StringAttr>(i, "tcc.state")) {
      std::string name = "s" + std::to_string(slot);
      os << "  " << type << " *" << name << " = reinterpret_cast<" << type
         << " *>(state + " << offsets[slot] << "); // " << state.getValue() << "\n";
      e.names[arg] = name;
      slotNames[state.getValue()] = name;
      ++slot;
      continue;
    }
    StringRef role = fn.getArgAttrOfType<StringAttr>(i, "tcc.role").getValue();
    if (role == "input" || role == "labels") {
      e.names[arg] = "const_cast<" + type + " *>(" + (role == "input" ? "images" : "labels") + ")";
      continue;
    }
    // Run constants and the valid count: one-element arrays, like any scalar.
    std::string source = role == "steps_per_epoch" ? "run.stepsPerEpoch"
                         : role == "total_steps"   ? "run.totalSteps"
                         : role == "seed"          ? "int64_t(run.seed)"
                                                   : "valid";
    os << "  int64_t arg_" << role << "[1] = {" << source << "};\n";
    e.names[arg] = "arg_" + role.str();
  }

  int counter = 0;
  for (Operation &op : fn.front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        if (auto state = fn.getResultAttrOfType<StringAttr>(i, "tcc.state")) {
          const std::string &target = slotNames[state.getValue()];
          if (e.name(v) != target)
            os << "  copy<" << cppElementType(v.getType()) << ">(" << numElements(v)
               << ", " << e.name(v) << ", " << target << ");\n";
          continue;
        }
        StringRef role = fn.getResultAttrOfType<StringAttr>(i, "tcc.role").getValue();
        if (role == "loss_sum")
          os << "  totals.lossSum += double(" << e.name(v) << "[0]);\n";
        else if (role == "correct")
          os << "  totals.correct += " << e.name(v) << "[0];\n";
      }
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat() || numElements(constant.getResult()) != 1)
        return op.emitError("the cpu target supports scalar constants only");
      std::string name = "c" + std::to_string(counter++);
      std::string type = cppElementType(constant.getType());
      os << "  " << type << " " << name << "[1] = {";
      if (isa<FloatType>(dense.getElementType()))
        os << "float(" << llvm::format("%.9g", dense.getSplatValue<APFloat>().convertToDouble()) << ")";
      else
        os << dense.getSplatValue<APInt>().getSExtValue();
      os << "};\n";
      e.names[constant.getResult()] = name;
      continue;
    }
    auto scratch = op.getAttrOfType<DenseI64ArrayAttr>("tcc.offsets");
    auto slots = op.getAttrOfType<DenseI64ArrayAttr>("tcc.state_slots");
    if (!scratch)
      return op.emitError("has no memory plan; run tcc-plan-memory first");
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      if (slots && slots[r] >= 0) {
        e.names[result] = "s" + std::to_string(slots[r]);
        continue;
      }
      std::string name = "v" + std::to_string(counter++);
      std::string type = cppElementType(result.getType());
      os << "  " << type << " *" << name << " = reinterpret_cast<" << type
         << " *>(scratch + " << scratch[r] << ");\n";
      e.names[result] = name;
    }
    os << "  // " << op.getName() << "\n";
    if (failed(emitCpuOp(&op, e)))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult mlir::tcc::emitCpuSource(ModuleOp module, llvm::raw_ostream &os) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (!train || !eval || !module->getAttr("tcc.state_offsets"))
    return module.emitError("the cpu code generator needs @train_step, "
                            "@eval_step and the memory plan");
  os << "// Generated by tcc from model '"
     << module->getAttrOfType<StringAttr>("tcc.model").getValue()
     << "' for the cpu target. Do not edit.\n"
     << "#include \"runtime/CompiledModel.h\"\n"
     << "#include \"runtime/kernels/Kernels.h\"\n"
     << "#include \"runtime/kernels/Step.h\"\n\n"
     << "#include <cmath>\n#include <cstdint>\n#include <vector>\n\n"
     << "namespace {\nusing namespace tcc::rt;\nusing namespace tcc::rt::kernels;\n\n"
     << "class Model final : public CompiledModel {\npublic:\n  Model();\n"
     << "  const ModelInfo &info() const override { return info_; }\n"
     << "  void trainStep(void *state_, void *scratch_, const RunConstants &run,\n"
     << "                 const float *images, const int64_t *labels,\n"
     << "                 StepTotals &totals) override;\n"
     << "  void evalStep(void *state_, void *scratch_, const float *images,\n"
     << "                const int64_t *labels, int64_t valid,\n"
     << "                StepTotals &totals) override;\n\nprivate:\n"
     << "  ModelInfo info_;\n};\n\n";
  emitModelInfo(module, train, eval, os);

  CpuEmitter trainEmitter{os, {}};
  os << "void Model::trainStep(void *state_, void *scratch_, const RunConstants &run,\n"
     << "                      const float *images, const int64_t *labels,\n"
     << "                      StepTotals &totals) {\n"
     << "  char *state = static_cast<char *>(state_);\n"
     << "  char *scratch = static_cast<char *>(scratch_);\n";
  if (failed(emitBody(train, trainEmitter)))
    return failure();
  os << "  totals.count += " << dimsOf(train.getArgument(0))[0] << ";\n}\n\n";

  CpuEmitter evalEmitter{os, {}};
  os << "void Model::evalStep(void *state_, void *scratch_, const float *images,\n"
     << "                     const int64_t *labels, int64_t valid,\n"
     << "                     StepTotals &totals) {\n"
     << "  char *state = static_cast<char *>(state_);\n"
     << "  char *scratch = static_cast<char *>(scratch_);\n";
  if (failed(emitBody(eval, evalEmitter)))
    return failure();
  os << "  totals.count += valid;\n}\n\n} // namespace\n\n"
     << "extern \"C\" tcc::rt::CompiledModel *tccCreateModel() { return new Model(); }\n";
  return success();
}
