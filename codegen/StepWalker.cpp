//===- StepWalker.cpp - The walk of a planned step, shared by the targets -===//
//
// Names every value after the memory plan, prints the step as small parts
// that call one function per distinct op, and prints the micro-batch loop;
// the target says what each op's function does (TargetEmitter::emitOp).
//
//===----------------------------------------------------------------------===//

#include "codegen/StepWalker.h"

#include "ir/ModelNode.h"
#include "ir/PlannedViews.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// Ops per generated function. The C++ compiler's time grows faster than
/// linearly with the size of one function (register allocation, scheduling),
/// so a step is printed as a sequence of small parts: the build time then
/// grows linearly with the model.
constexpr int kOpsPerPart = 32;

/// Prints one step function as parts `<prefix>Part<k>(const StepArgs &)`,
/// each declaring the values it uses; `calls` receives the calls in order.
/// Every value is named after the memory plan (an offset into the state or
/// scratch arena), so a part needs nothing from the one before it.
class StepPrinter {
public:
  /// `sites`: where a timed step's sites go (null: not timed).
  StepPrinter(func::FuncOp fn, TargetEmitter &target, CpuEmitter &e,
              OpFunctions &functions, StringRef prefix, const BatchBuffers &batch,
              std::vector<std::pair<std::string, std::string>> *sites)
      : fn(fn), target(target), e(e), functions(functions), prefix(prefix.str()),
        batch(batch), sites(sites) {}

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
  /// In a timed step, the mark of a new site (runtime/StepProfile.h).
  void markSite(std::string op, std::string node) {
    if (!sites)
      return;
    e.os << "  if (args.clock) args.clock->at(" << sites->size() << ");\n";
    sites->emplace_back(std::move(op), std::move(node));
  }
  LogicalResult printConstant(arith::ConstantOp constant);
  LogicalResult printResults(Operation &op);
  void printReturn(func::ReturnOp ret);

  func::FuncOp fn;
  TargetEmitter &target;
  CpuEmitter &e;
  OpFunctions &functions;
  std::string prefix;
  const BatchBuffers &batch;
  std::vector<std::pair<std::string, std::string>> *sites;
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
      kStateOffsetsAttr);
  int slot = 0;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string type = cppElementType(arg.getType());
    if (auto state = fn.getArgAttrOfType<StringAttr>(i, kStateAttr)) {
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
    StringRef argRole = fn.getArgAttrOfType<StringAttr>(i, kRoleAttr).getValue();
    if (argRole == role::kInput || argRole == role::kLabels) {
      bool images = argRole == role::kInput;
      std::string name = images ? "images" : "labels";
      int64_t offset = images ? batch.imagesOffset : batch.labelsOffset;
      define(arg, name,
             type + " *" + name + " = reinterpret_cast<" + type + " *>(args.scratch + " +
                 std::to_string(offset) + ");");
      continue;
    }
    std::string source =
        argRole == role::kStepsPerEpoch ? "&args.control->run.stepsPerEpoch"
        : argRole == role::kTotalSteps  ? "&args.control->run.totalSteps"
        : argRole == role::kSeed ? "reinterpret_cast<int64_t *>(&args.control->run.seed)"
                                 : "&args.control->valid";
    define(arg, source, "");
  }
}

LogicalResult StepPrinter::printConstant(arith::ConstantOp constant) {
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || numElements(constant.getResult()) != 1)
    return constant.emitError("the code generators support scalar constants only");
  std::string name = "c" + std::to_string(counter++);
  define(constant.getResult(), name,
         target.scalarConstant(cppElementType(constant.getType()), name,
                               cppScalarLiteral(dense)));
  return success();
}

LogicalResult StepPrinter::printResults(Operation &op) {
  auto scratch = op.getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
  auto slots = op.getAttrOfType<DenseI64ArrayAttr>(kStateSlotsAttr);
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
  markSite("step_end", "");
  std::string lossSum, correct; // empty: the step has none
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto state = fn.getResultAttrOfType<StringAttr>(i, kStateAttr)) {
      Value slot = slotArgument.lookup(state.getValue());
      declare(slot);
      if (e.name(v) != e.name(slot))
        e.os << "  " << target.copy(cppElementType(v.getType()), numElements(v), e.name(v),
                                    e.name(slot))
             << "\n";
      continue;
    }
    StringRef resultRole = fn.getResultAttrOfType<StringAttr>(i, kRoleAttr).getValue();
    if (resultRole == role::kLossSum)
      lossSum = e.name(v);
    else if (resultRole == role::kCorrect)
      correct = e.name(v);
  }
  e.os << "  " << target.addTotals(lossSum, correct) << "\n";
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
      e.os << "  "
           << target.copy(cppElementType(init.getType()), numElements(init), e.name(init),
                          e.name(result))
           << "\n";
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
  markSite("micro_batch_sums", "");
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getValues(), loop.getResults()))) {
    auto [value, result] = pair;
    declare({value, result});
    std::string type = cppElementType(value.getType());
    int64_t n = numElements(value);
    if (i < carried) {
      if (e.name(value) != e.name(result))
        e.os << "  " << target.copy(type, n, e.name(value), e.name(result)) << "\n";
      continue;
    }
    e.os << "  if (args.micro == 0)\n    "
         << target.copy(type, n, e.name(value), e.name(result)) << "\n  else\n    "
         << target.accumulate(type, n, e.name(value), e.name(result)) << "\n";
  }
}

/// A call of the op's function, with the op's buffers as arguments. A view
/// in its input's bytes is only a new name for them.
LogicalResult StepPrinter::printOp(Operation &op) {
  if (sharesItsInputsBytes(op)) {
    Value source = cast<ViewLikeOpInterface>(op).getViewSource();
    define(op.getResult(0), e.name(source), decls.lookup(source));
    return success();
  }
  if (failed(printResults(op)))
    return failure();
  // A fusion group reads values defined above it rather than operands.
  SmallVector<Value> inputs(op.getOperands());
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(group.getBody(), captured);
    inputs.assign(captured.begin(), captured.end());
  }
  declare(inputs);
  declare(op.getResults());
  // The op printed with its buffers named p0, p1, ... is the function body.
  // Values that share a buffer (a state slot updated in place) share a
  // parameter, so the printers still see that they alias.
  std::string body, params, arguments;
  llvm::raw_string_ostream bodyOs(body);
  CpuEmitter generic{bodyOs, DenseMap<Value, std::string>()};
  llvm::StringMap<std::string> parameterOf;
  for (ValueRange values : {ValueRange(inputs), ValueRange(op.getResults())})
    for (Value v : values) {
      auto [it, inserted] =
          parameterOf.try_emplace(e.name(v), "p" + std::to_string(parameterOf.size()));
      generic.names[v] = it->second;
      if (inserted) {
        params += ", " + cppElementType(v.getType()) + " *" + it->second;
        arguments += ", " + e.name(v);
      }
    }
  // The values a group yields are stored in its results' buffers.
  if (auto group = dyn_cast<FusionGroupOp>(op))
    for (auto [value, result] :
         llvm::zip(group.getBody().front().getTerminator()->getOperands(), group.getResults())) {
      // A copy first: inserting `value` may move the map's entries.
      std::string name = generic.names.lookup(result);
      generic.names[value] = std::move(name);
    }
  if (failed(target.emitOp(&op, generic)))
    return failure();
  std::string kind = op.getName().getStringRef().str();
  std::string node = modelNodeOf(op.getLoc());
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    kind = "fusion_group:" + group.getKind().str();
    // The group's first op names it (a norm epilogue's norm).
    for (Operation &inner : group.getBody().front())
      if (std::string first = modelNodeOf(inner.getLoc()); !first.empty()) {
        node = first;
        break;
      }
  }
  markSite(kind, node);
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

} // namespace

StringRef OpFunctions::get(const std::string &params, const std::string &body) {
  auto [it, inserted] = names.try_emplace(params + "\n" + body);
  if (inserted) {
    it->second = "op" + std::to_string(names.size() - 1);
    text += "[[gnu::noinline]] void " + it->second + "(const StepArgs &args" + params +
            ") {\n" + body + "}\n\n";
  }
  return it->second;
}

LogicalResult mlir::tcc::walkStep(func::FuncOp fn, TargetEmitter &target,
                                  OpFunctions &functions, StringRef prefix,
                                  const BatchBuffers &batch, bool timed, WalkedStep &out) {
  llvm::raw_string_ostream os(out.parts);
  CpuEmitter names{os, {}};
  if (timed)
    out.sites.emplace_back("gather_batch", "");
  return StepPrinter(fn, target, names, functions, prefix, batch, timed ? &out.sites : nullptr)
      .print(out.calls);
}

std::string mlir::tcc::siteTable(const WalkedStep &step) {
  std::string table = "const tcc::rt::OpSite kTrainSites[] = {\n";
  for (const auto &[op, node] : step.sites)
    table += "    {" + cppStringLiteral(op) + ", " + cppStringLiteral(node) + "},\n";
  return table + "};\n\nstd::vector<OpSite> Model::trainSites() const {\n"
                 "  return {std::begin(kTrainSites), std::end(kTrainSites)};\n}\n\n";
}

/// The batch buffers go after the larger of the two steps' plans, images
/// then labels, each 64-byte aligned.
static BatchBuffers placeBatch(ArrayRef<func::FuncOp> steps) {
  auto align = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  int64_t planned = 0, images = 0, labels = 0;
  for (func::FuncOp fn : steps) {
    planned = std::max<int64_t>(
        planned, fn->getAttrOfType<IntegerAttr>(kScratchBytesAttr).getInt());
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
static FailureOr<int64_t> counterOffset(ModuleOp module, func::FuncOp train) {
  auto offsets = module->getAttrOfType<DenseI64ArrayAttr>(kStateOffsetsAttr);
  int slot = 0;
  for (BlockArgument arg : train.getArguments()) {
    auto name = train.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kStateAttr);
    if (!name)
      continue;
    if (name.getValue() == "step" &&
        cast<ShapedType>(arg.getType()).getElementType().isInteger(64))
      return offsets[slot];
    ++slot;
  }
  return train.emitError("has no i64 step counter 'step' in its state");
}

FailureOr<PlannedSteps> mlir::tcc::findPlannedSteps(ModuleOp module, StringRef target) {
  PlannedSteps steps;
  steps.train = module.lookupSymbol<func::FuncOp>("train_step");
  steps.eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (!steps.train || !steps.eval || !module->getAttr(kStateOffsetsAttr))
    return module.emitError("the ")
           << target << " code generator needs @train_step, @eval_step and the memory plan";
  FailureOr<int64_t> counter = counterOffset(module, steps.train);
  if (failed(counter))
    return failure();
  steps.counterOffset = *counter;
  steps.plain = module.lookupSymbol<func::FuncOp>("eval_step_plain");
  SmallVector<func::FuncOp> all{steps.train, steps.eval};
  if (steps.plain)
    all.push_back(steps.plain);
  steps.batch = placeBatch(all);
  return steps;
}

LogicalResult mlir::tcc::walkSteps(const PlannedSteps &steps, TargetEmitter &target,
                                   WalkedSteps &out) {
  return failure(
      failed(walkStep(steps.train, target, out.functions, "train", steps.batch, true,
                      out.train)) ||
      failed(walkStep(steps.eval, target, out.functions, "eval", steps.batch, false,
                      out.eval)) ||
      (steps.plain && failed(walkStep(steps.plain, target, out.functions, "evalPlain",
                                      steps.batch, false, out.plain))));
}

LogicalResult mlir::tcc::emitOpsOneByOne(ModuleOp module, TargetEmitter &target,
                                         llvm::raw_ostream &os) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    os << "// @" << fn.getSymName() << "\n";
    CpuEmitter names{os, {}};
    for (BlockArgument arg : fn.getArguments())
      names.names[arg] = "a" + std::to_string(arg.getArgNumber());
    int results = 0, constants = 0;
    for (Operation &op : fn.front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      auto group = dyn_cast<FusionGroupOp>(op);
      if (op.getNumRegions() != 0 && !group)
        return op.emitError("emits op by op: ops with regions other than "
                            "tcc.fusion_group are printed by the step walk only");
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (!dense || !dense.isSplat())
          return op.emitError("the code generators support scalar constants only");
        std::string name = "c" + std::to_string(constants++);
        names.names[constant.getResult()] = name;
        os << target.scalarConstant(cppElementType(constant.getType()), name,
                                    cppScalarLiteral(dense))
           << "\n";
        continue;
      }
      for (Value result : op.getResults())
        names.names[result] = "r" + std::to_string(results++);
      // A group's yielded values are stored in its results.
      if (group)
        for (auto [value, result] : llvm::zip(
                 group.getBody().front().getTerminator()->getOperands(), group.getResults())) {
          // A copy first: inserting `value` may move the map's entries.
          std::string name = names.names.lookup(result);
          names.names[value] = std::move(name);
        }
      os << "// " << op.getName() << "\n";
      if (failed(target.emitOp(&op, names)))
        return failure();
    }
  }
  return success();
}
