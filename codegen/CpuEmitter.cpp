//===- CpuEmitter.cpp - The cpu target: walk, memory, model description ---===//

#include "codegen/Codegen.h"
#include "codegen/CpuEmitter.h"

#include "ir/TccOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
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
                   int64_t scratchBytes, llvm::raw_ostream &os) {
  auto stateOffsets = module->getAttrOfType<DenseI64ArrayAttr>("tcc.state_offsets");
  // The state as a table read by a loop: one statement per tensor would
  // make a constructor whose build time grows faster than the model.
  os << "struct StateRow {\n  const char *name;\n  int rank;\n  int64_t dims[8];\n"
     << "  DType dtype;\n  StateRole role;\n  bool trainable;\n  const char *init;\n"
     << "  double a, b;\n  const char *source;\n  size_t offset;\n};\n\n"
     << "// name, rank, shape, dtype, role, trainable, init (kind, a, b, source), offset\n"
     << "const StateRow kStateRows[] = {\n";
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
    os << "    {" << quoted(name.getValue()) << ", " << dimsOf(arg).size() << ", {";
    llvm::interleaveComma(dimsOf(arg), os);
    os << "}, " << dtypeOf(arg.getType()) << ", " << roleOf(kind) << ", "
       << (trainable && trainable.getValue() ? "true" : "false") << ", "
       << quoted(initKind) << ", " << llvm::format("%.17g", a) << ", "
       << llvm::format("%.17g", b) << ", "
       << quoted(source ? source.getValue() : "") << ", " << stateOffsets[slot++]
       << "},\n";
  }
  os << "};\n\n";
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
     << "  info_.scratchBytes = " << scratchBytes << ";\n"
     << "  info_.fingerprint = " << fingerprint(train) << "ull;\n";
  std::string recipe = "{\"train\":" + attributeToJson(module->getAttr("tcc.train")) +
                       ",\"data\":" + attributeToJson(module->getAttr("tcc.data")) +
                       ",\"eval\":" + attributeToJson(module->getAttr("tcc.eval")) + "}";
  os << "  info_.recipeJson = " << quoted(recipe) << ";\n";
  os << "  for (const StateRow &r : kStateRows)\n"
     << "    info_.state.push_back({r.name, std::vector<int64_t>(r.dims, r.dims + r.rank),\n"
     << "                           r.dtype, r.role, r.trainable,\n"
     << "                           {r.init, r.a, r.b, r.source}, r.offset});\n";
  os << "}\n\n";
}

/// Ops per generated function. The C++ compiler's time grows faster than
/// linearly with the size of one function (register allocation, scheduling),
/// so a step is printed as a sequence of small parts: the build time then
/// grows linearly with the model.
constexpr int kOpsPerPart = 32;

/// Where the step's batch lives: the scratch arena past the memory plan.
struct BatchBuffers {
  int64_t imagesOffset = 0, labelsOffset = 0, endOffset = 0;
};

/// The functions that run each distinct op. Ops that differ only in the
/// buffers they read and write (the blocks of a deep model, a layer's
/// forward in the train and the eval step) share one function: the C++
/// compiler, which inlines the kernels into it, does that work once per
/// distinct op rather than once per op.
struct OpFunctions {
  std::string text; ///< their definitions
  llvm::StringMap<std::string> names; ///< by parameter list and body

  /// The name of the function `void NAME(const StepArgs &args, PARAMS)`
  /// whose body is `body`.
  StringRef get(const std::string &params, const std::string &body) {
    auto [it, inserted] = names.try_emplace(params + "\n" + body);
    if (inserted) {
      it->second = "op" + std::to_string(names.size() - 1);
      text += "[[gnu::noinline]] void " + it->second + "(const StepArgs &args" +
              params + ") {\n" + body + "}\n\n";
    }
    return it->second;
  }
};

/// Prints one step function as parts `<prefix>Part<k>(const StepArgs &)`,
/// each declaring the values it uses; `calls` receives the calls in order.
/// Every value is named after the memory plan (an offset into the state or
/// scratch arena), so a part needs nothing from the one before it.
class StepPrinter {
public:
  StepPrinter(func::FuncOp fn, CpuEmitter &e, OpFunctions &functions,
              StringRef prefix, const BatchBuffers &batch)
      : fn(fn), e(e), functions(functions), prefix(prefix.str()), batch(batch) {}

  LogicalResult print(std::string &calls);

private:
  void nameArguments();
  /// Prints the ops of `block` into parts; their calls go to `calls`, each
  /// line starting with `indent`.
  LogicalResult printOps(Block &block, std::string &calls, const std::string &indent);
  LogicalResult printLoop(MicroBatchesOp loop, std::string &calls,
                          const std::string &indent);
  void printYield(YieldOp yield);
  LogicalResult printOp(Operation &op);
  void openPart(std::string &calls, const std::string &indent);
  void closePart();
  /// Names the value `name`, declared in each part that uses it by `decl`
  /// (empty: an expression that needs no declaration).
  void define(Value v, std::string name, std::string decl) {
    e.names[v] = std::move(name);
    if (!decl.empty())
      decls[v] = std::move(decl);
  }
  void declare(ValueRange values) {
    for (Value v : values) {
      if (Value base = dependsOn.lookup(v))
        declare(base);
      auto it = decls.find(v);
      // In-place results share their state slot's name: declare names once.
      if (it != decls.end() && declared.insert(e.name(v)).second)
        e.os << "  " << it->second << "\n";
    }
  }
  LogicalResult printConstant(arith::ConstantOp constant);
  LogicalResult printResults(Operation &op);
  void printReturn(func::ReturnOp ret);

  func::FuncOp fn;
  CpuEmitter &e;
  OpFunctions &functions;
  std::string prefix;
  const BatchBuffers &batch;
  DenseMap<Value, std::string> decls;
  DenseMap<Value, Value> dependsOn; ///< a declaration that names another value
  llvm::StringSet<> declared; ///< names declared in the part being printed
  SmallVector<Value> slotArguments;        ///< by state slot
  DenseMap<StringRef, Value> slotArgument; ///< by state name
  int counter = 0;
  int part = 0, opsInPart = 0;
  bool inPart = false;
};

void StepPrinter::nameArguments() {
  auto offsets = fn->getParentOfType<ModuleOp>()->getAttrOfType<DenseI64ArrayAttr>(
      "tcc.state_offsets");
  int slot = 0;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string type = cppElementType(arg.getType());
    if (auto state = fn.getArgAttrOfType<StringAttr>(i, "tcc.state")) {
      std::string name = "s" + std::to_string(slot);
      define(arg, name,
             type + " *" + name + " = reinterpret_cast<" + type + " *>(args.state + " +
                 std::to_string(offsets[slot]) + "); // " + state.getValue().str());
      slotArgument[state.getValue()] = arg;
      slotArguments.push_back(arg);
      ++slot;
      continue;
    }
    // The batch (gathered into scratch by the step), the run constants and
    // the valid count: pointers into device memory, never host copies.
    StringRef role = fn.getArgAttrOfType<StringAttr>(i, "tcc.role").getValue();
    if (role == "input" || role == "labels") {
      std::string name = role == "input" ? "images" : "labels";
      int64_t offset = role == "input" ? batch.imagesOffset : batch.labelsOffset;
      define(arg, name,
             type + " *" + name + " = reinterpret_cast<" + type + " *>(args.scratch + " +
                 std::to_string(offset) + ");");
      continue;
    }
    std::string source = role == "steps_per_epoch" ? "&args.control->run.stepsPerEpoch"
                         : role == "total_steps"   ? "&args.control->run.totalSteps"
                         : role == "seed" ? "reinterpret_cast<int64_t *>(&args.control->run.seed)"
                                          : "&args.control->valid";
    define(arg, source, "");
  }
}

LogicalResult StepPrinter::printConstant(arith::ConstantOp constant) {
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || numElements(constant.getResult()) != 1)
    return constant.emitError("the cpu target supports scalar constants only");
  std::string name = "c" + std::to_string(counter++);
  std::string decl;
  llvm::raw_string_ostream os(decl);
  os << cppElementType(constant.getType()) << " " << name << "[1] = {";
  if (isa<FloatType>(dense.getElementType()))
    os << "float(" << llvm::format("%.9g", dense.getSplatValue<APFloat>().convertToDouble())
       << ")";
  else
    os << dense.getSplatValue<APInt>().getSExtValue();
  os << "};";
  define(constant.getResult(), name, decl);
  return success();
}

LogicalResult StepPrinter::printResults(Operation &op) {
  auto scratch = op.getAttrOfType<DenseI64ArrayAttr>("tcc.offsets");
  auto slots = op.getAttrOfType<DenseI64ArrayAttr>("tcc.state_slots");
  if (!scratch)
    return op.emitError("has no memory plan; run tcc-plan-memory first");
  for (auto [r, result] : llvm::enumerate(op.getResults())) {
    if (slots && slots[r] >= 0) {
      // Updated in place: the state slot's own pointer.
      Value arg = slotArguments[slots[r]];
      define(result, e.name(arg), decls.lookup(arg));
      continue;
    }
    std::string name = "v" + std::to_string(counter++);
    std::string type = cppElementType(result.getType());
    define(result, name,
           type + " *" + name + " = reinterpret_cast<" + type + " *>(args.scratch + " +
               std::to_string(scratch[r]) + ");");
  }
  return success();
}

/// Copies state results that were not updated in place, and adds the
/// metric sums and the batch's real samples to the totals.
void StepPrinter::printReturn(func::ReturnOp ret) {
  declare(ret.getOperands());
  std::string lossSum = "static_cast<const float *>(nullptr)";
  std::string correct = "static_cast<const int64_t *>(nullptr)";
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto state = fn.getResultAttrOfType<StringAttr>(i, "tcc.state")) {
      Value target = slotArgument.lookup(state.getValue());
      declare(target);
      if (e.name(v) != e.name(target))
        e.os << "  copy<" << cppElementType(v.getType()) << ">(" << numElements(v)
             << ", " << e.name(v) << ", " << e.name(target) << ");\n";
      continue;
    }
    StringRef role = fn.getResultAttrOfType<StringAttr>(i, "tcc.role").getValue();
    if (role == "loss_sum")
      lossSum = e.name(v);
    else if (role == "correct")
      correct = e.name(v);
  }
  e.os << "  cpu::add_step_totals(args.control, " << lossSum << ", " << correct << ");\n";
}

void StepPrinter::openPart(std::string &calls, const std::string &indent) {
  if (inPart)
    return;
  std::string name = prefix + "Part" + std::to_string(part++);
  // noinline: a part called once would otherwise be inlined back into one
  // large function.
  e.os << "[[gnu::noinline]] void " << name << "(const StepArgs &args) {\n";
  calls += indent + name + "(args);\n";
  declared.clear();
  inPart = true;
  opsInPart = 0;
}

void StepPrinter::closePart() {
  if (!inPart)
    return;
  e.os << "}\n\n";
  inPart = false;
}

/// The loop runs its body's parts once per micro-batch; the body's scratch
/// was planned once for all iterations.
LogicalResult StepPrinter::printLoop(MicroBatchesOp loop, std::string &calls,
                                     const std::string &indent) {
  if (failed(printResults(*loop)))
    return failure();
  Block &body = loop.getBody().front();
  // The carried values live in the loop's results from the start.
  if (!loop.getInits().empty()) {
    openPart(calls, indent);
    for (auto [init, result] : llvm::zip(loop.getInits(), loop.getResults())) {
      declare({init, result});
      e.os << "  copy<" << cppElementType(init.getType()) << ">(" << numElements(init)
           << ", " << e.name(init) << ", " << e.name(result) << ");\n";
    }
  }
  closePart();
  int64_t count = static_cast<int64_t>(loop.getCount());
  for (auto [k, operand] : llvm::enumerate(loop.getBatched())) {
    BlockArgument slice = body.getArgument(k);
    std::string name = "b" + std::to_string(counter++);
    std::string type = cppElementType(slice.getType());
    define(slice, name,
           type + " *" + name + " = " + e.name(operand) + " + args.micro * " +
               std::to_string(numElements(slice)) + ";");
    dependsOn[slice] = operand;
  }
  for (auto [k, result] : llvm::enumerate(loop.getResults().take_front(loop.getInits().size()))) {
    BlockArgument carried = loop.getCarriedArgument(k);
    define(carried, e.name(result), decls.lookup(result));
  }
  calls += indent + "for (args.micro = 0; args.micro < " + std::to_string(count) +
           "; ++args.micro) {\n";
  if (failed(printOps(body, calls, indent + "  ")))
    return failure();
  calls += indent + "}\n" + indent + "args.micro = 0;\n";
  return success();
}

/// The end of an iteration: the carried values move to the loop's results,
/// the summands are added to them (the first iteration's are copied).
void StepPrinter::printYield(YieldOp yield) {
  auto loop = cast<MicroBatchesOp>(yield->getParentOp());
  size_t carried = loop.getInits().size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getValues(), loop.getResults()))) {
    auto [value, result] = pair;
    declare({value, result});
    std::string type = cppElementType(value.getType());
    std::string n = std::to_string(numElements(value));
    if (i < carried) {
      if (e.name(value) != e.name(result))
        e.os << "  copy<" << type << ">(" << n << ", " << e.name(value) << ", "
             << e.name(result) << ");\n";
      continue;
    }
    e.os << "  if (args.micro == 0)\n    copy<" << type << ">(" << n << ", "
         << e.name(value) << ", " << e.name(result) << ");\n  else\n"
         << "    add_accumulate<" << type << ">(" << n << ", " << e.name(value)
         << ", " << e.name(result) << ");\n";
  }
}

/// A call of the op's function, with the op's buffers as arguments.
LogicalResult StepPrinter::printOp(Operation &op) {
  if (failed(printResults(op)))
    return failure();
  declare(op.getOperands());
  declare(op.getResults());
  // The op printed with its buffers named p0, p1, ... is the function body.
  // Values that share a buffer (a state slot updated in place) share a
  // parameter, so the printers still see that they alias.
  std::string body, params, arguments;
  llvm::raw_string_ostream bodyOs(body);
  CpuEmitter generic{bodyOs, DenseMap<Value, std::string>()};
  llvm::StringMap<std::string> parameterOf;
  for (ValueRange values : {ValueRange(op.getOperands()), ValueRange(op.getResults())})
    for (Value v : values) {
      auto [it, inserted] =
          parameterOf.try_emplace(e.name(v), "p" + std::to_string(parameterOf.size()));
      generic.names[v] = it->second;
      if (inserted) {
        params += ", " + cppElementType(v.getType()) + " *" + it->second;
        arguments += ", " + e.name(v);
      }
    }
  if (failed(emitCpuOp(&op, generic)))
    return failure();
  e.os << "  " << functions.get(params, body) << "(args" << arguments << "); // "
       << op.getName() << "\n";
  return success();
}

LogicalResult StepPrinter::printOps(Block &block, std::string &calls,
                                    const std::string &indent) {
  for (Operation &op : block) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (failed(printConstant(constant)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<MicroBatchesOp>(op)) {
      if (failed(printLoop(loop, calls, indent)))
        return failure();
      continue;
    }
    openPart(calls, indent);
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      printReturn(ret);
    } else if (auto yield = dyn_cast<YieldOp>(op)) {
      printYield(yield);
    } else if (failed(printOp(op))) {
      return failure();
    }
    if (++opsInPart == kOpsPerPart || op.hasTrait<mlir::OpTrait::IsTerminator>())
      closePart();
  }
  return success();
}

LogicalResult StepPrinter::print(std::string &calls) {
  nameArguments();
  return printOps(fn.front(), calls, "  ");
}

/// The batch buffers go after the larger of the two steps' plans, images
/// then labels, each 64-byte aligned.
BatchBuffers placeBatch(func::FuncOp train, func::FuncOp eval) {
  auto align = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  int64_t planned = 0, images = 0, labels = 0;
  for (func::FuncOp fn : {train, eval}) {
    planned = std::max<int64_t>(
        planned, fn->getAttrOfType<IntegerAttr>("tcc.scratch_bytes").getInt());
    images = std::max<int64_t>(images, numElements(fn.getArgument(0)) * 4);
    labels = std::max<int64_t>(labels, numElements(fn.getArgument(1)) * 8);
  }
  BatchBuffers batch;
  batch.imagesOffset = align(planned);
  batch.labelsOffset = align(batch.imagesOffset + images);
  batch.endOffset = batch.labelsOffset + labels;
  return batch;
}

/// The state offset of the step counter, which says which batch to gather.
FailureOr<int64_t> counterOffset(ModuleOp module, func::FuncOp train) {
  auto offsets = module->getAttrOfType<DenseI64ArrayAttr>("tcc.state_offsets");
  int slot = 0;
  for (BlockArgument arg : train.getArguments()) {
    auto name = train.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tcc.state");
    if (!name)
      continue;
    if (name.getValue() == "step" &&
        cast<ShapedType>(arg.getType()).getElementType().isInteger(64))
      return offsets[slot];
    ++slot;
  }
  return train.emitError("has no i64 step counter 'step' in its state");
}

} // namespace

LogicalResult mlir::tcc::emitCpuSource(ModuleOp module, llvm::raw_ostream &os) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (!train || !eval || !module->getAttr("tcc.state_offsets"))
    return module.emitError("the cpu code generator needs @train_step, "
                            "@eval_step and the memory plan");
  FailureOr<int64_t> counter = counterOffset(module, train);
  if (failed(counter))
    return failure();
  BatchBuffers batch = placeBatch(train, eval);
  os << "// Generated by tcc from model '"
     << module->getAttrOfType<StringAttr>("tcc.model").getValue()
     << "' for the cpu target. Do not edit.\n"
     << "#include \"runtime/CompiledModel.h\"\n"
     << "#include \"runtime/cpu/Batch.h\"\n"
     << "#include \"runtime/cpu/CpuModel.h\"\n"
     << "#include \"runtime/cpu/StepOps.h\"\n"
     << "#include \"runtime/kernels/Kernels.h\"\n"
     << "#include \"runtime/kernels/Step.h\"\n\n"
     << "#include <cmath>\n#include <cstdint>\n#include <vector>\n\n"
     << "namespace {\nusing namespace tcc::rt;\nusing namespace tcc::rt::kernels;\n\n"
     << "class Model final : public CpuModel {\npublic:\n  Model();\n"
     << "  const ModelInfo &info() const override { return info_; }\n"
     << "  void trainStep() override;\n  void evalStep() override;\n\nprivate:\n"
     << "  ModelInfo info_;\n};\n\n";
  emitModelInfo(module, train, eval, batch.endOffset, os);

  // What every part of a step reads: the arenas and the control block (one
  // pointer each, so parts stay independent).
  os << "struct StepArgs {\n  char *state;\n  char *scratch;\n"
     << "  StepControl *control;\n"
     << "  int64_t micro; // the micro-batch a tcc.micro_batches loop is at\n};\n\n";
  std::string trainCalls, evalCalls, trainParts, evalParts;
  OpFunctions functions;
  llvm::raw_string_ostream trainOs(trainParts), evalOs(evalParts);
  CpuEmitter trainEmitter{trainOs, {}};
  if (failed(StepPrinter(train, trainEmitter, functions, "train", batch).print(trainCalls)))
    return failure();
  CpuEmitter evalEmitter{evalOs, {}};
  if (failed(StepPrinter(eval, evalEmitter, functions, "eval", batch).print(evalCalls)))
    return failure();
  os << functions.text << trainParts << evalParts;

  std::string argsInit =
      "  const StepBuffers &b = buffers();\n"
      "  StepArgs args{static_cast<char *>(b.state), static_cast<char *>(b.scratch),\n"
      "                b.control, 0};\n";
  std::string images = "reinterpret_cast<float *>(args.scratch + " +
                       std::to_string(batch.imagesOffset) + ")";
  std::string labels = "reinterpret_cast<int64_t *>(args.scratch + " +
                       std::to_string(batch.labelsOffset) + ")";
  os << "void Model::trainStep() {\n" << argsInit
     << "  cpu::gather_train_batch(b, reinterpret_cast<const int64_t *>(args.state + "
     << *counter << "), " << dimsOf(train.getArgument(0))[0] << ", " << images << ", "
     << labels << ");\n"
     << trainCalls << "}\n\n";
  os << "void Model::evalStep() {\n" << argsInit << "  cpu::gather_eval_batch(b, "
     << dimsOf(eval.getArgument(0))[0] << ", " << images << ", " << labels << ");\n"
     << evalCalls << "}\n\n} // namespace\n\n"
     << "extern \"C\" tcc::rt::CompiledModel *tccCreateModel() { return new Model(); }\n";
  return success();
}
