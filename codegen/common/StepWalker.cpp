//===- StepWalker.cpp - The walk of a planned step, shared by the targets -===//
//
// Names every value after the memory plan, prints the step as a table of
// rows (one function per distinct op, the buffers of each call) and the
// loop that runs them, the micro-batch loop among them; the target says
// what each op's function does (TargetEmitter::emitOp).
//
//===----------------------------------------------------------------------===//

#include "codegen/common/StepWalker.h"

#include "ir/ModelNode.h"
#include "ir/PlannedViews.h"
#include "ir/TccAttrNames.h"
#include "ir/TccPlan.h"
#include "ir/TccOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// Where a value of the step lives, as the function that runs an op finds
/// it: an arena buffer (a StepRef of the row, runtime/StepTable.h), or an
/// expression of the function itself (a field of the control block, a
/// scalar constant).
struct Binding {
  std::string type; ///< the C++ element type
  bool isRef = false;
  bool scratch = false;
  int64_t offset = 0, microBytes = 0;
  std::string expression; ///< not a ref: the pointer, e.g. &args.control->valid
  std::string constant;   ///< not a ref: a scalar literal (target.scalarConstant)
};

/// Prints one step as a table of rows `k<Prefix>Rows` over the buffers
/// `k<Prefix>Refs`, each row a function of a distinct op (shared through
/// `functions`) and its buffers; `calls` receives the statements that run
/// the rows in order, the micro-batch loop among them. A step of many
/// identical layers is many short rows and a few functions, so the C++
/// compiler's time grows slowly with the model (test/tools/compile_time.py).
class StepPrinter {
public:
  /// `sites`: where a timed step's sites go (null: not timed).
  StepPrinter(func::FuncOp fn, TargetEmitter &target, StepEmitter &e,
              OpFunctions &functions, StringRef prefix, const BatchBuffers &batch,
              std::vector<StepSite> *sites)
      : fn(fn), target(target), e(e), functions(functions), batch(batch), sites(sites) {
    std::string table = prefix.str();
    table[0] = llvm::toUpper(table[0]);
    rowsName = "k" + table + "Rows";
    refsName = "k" + table + "Refs";
  }

  LogicalResult print(std::string &calls);

  /// After print(): the returned logits' scratch offset (-1: none, or not
  /// in scratch) and element count.
  int64_t logitsOffset = -1, logitsElements = 0;

private:
  void nameArguments();
  /// Prints the ops of `block` as rows; the statements that run them go
  /// to `calls`, each line starting with `indent`.
  LogicalResult printOps(Block &block, std::string &calls, const std::string &indent);
  LogicalResult printLoop(MicroBatchesOp loop, std::string &calls,
                          const std::string &indent);
  void printYield(YieldOp yield);
  LogicalResult printOp(Operation &op);
  LogicalResult printResults(Operation &op);
  void printReturn(func::ReturnOp ret);
  /// The rows since the last call, run by one statement of `calls`.
  void flushRows(std::string &calls, const std::string &indent);

  void define(Value v, const std::string &name, Binding binding) {
    e.names[v] = name;
    bindings.try_emplace(name, std::move(binding));
  }
  /// `v` under the name of `other` (a view, an in-place result).
  void alias(Value v, Value other) {
    std::string name = e.name(other); // a copy first: inserting `v` may move the entries
    e.names[v] = std::move(name);
  }
  Binding arenaRef(Type type, bool scratch, int64_t offset) {
    Binding b;
    b.type = cppElementType(type);
    b.isRef = true;
    b.scratch = scratch;
    b.offset = offset;
    return b;
  }

  /// A row that runs the statements `body` prints with `values` named p0,
  /// p1, ... in `names` (values of one name share a parameter, so the
  /// printers still see that they alias).
  LogicalResult addRow(ArrayRef<Value> values,
                       llvm::function_ref<LogicalResult(StepEmitter &)> body,
                       StringRef comment);
  /// In a timed step, the site the next row marks (runtime/StepProfile.h):
  /// `kind` and `node` name it, `op` (null for the step's own sites) tells
  /// a collective's details.
  void markSite(std::string kind, std::string node, Operation *op = nullptr);

  func::FuncOp fn;
  TargetEmitter &target;
  StepEmitter &e;
  OpFunctions &functions;
  std::string rowsName, refsName;
  const BatchBuffers &batch;
  std::vector<StepSite> *sites;
  llvm::StringMap<Binding> bindings; ///< by value name
  SmallVector<Value> slotArguments;        ///< by state slot
  DenseMap<StringRef, Value> slotArgument; ///< by state name
  std::string rows, refs;
  int rowCount = 0, refCount = 0, flushedRows = 0;
  int64_t pendingSite = -1;
  int counter = 0;
};

void StepPrinter::markSite(std::string kind, std::string node, Operation *op) {
  if (!sites)
    return;
  pendingSite = sites->size();
  StepSite site{std::move(kind), std::move(node)};
  // A collective's bytes are its whole tensors, as the compile report's
  // `distributed` section counts them: an all-gather's results, else its inputs.
  if (op && isa<AllReduceOp, AllGatherOp, ReduceScatterOp>(op)) {
    site.collective = true;
    if (auto bucket = op->getAttrOfType<IntegerAttr>(kBucketAttr))
      site.bucket = bucket.getInt();
    site.sideStream = op->hasAttr(kSideStreamAttr);
    ValueRange wholes = isa<AllGatherOp>(op) ? ValueRange(op->getResults())
                                             : ValueRange(op->getOperands());
    for (Value v : wholes)
      site.bytes += tensorBytes(v.getType());
  }
  sites->push_back(std::move(site));
}

void StepPrinter::nameArguments() {
  auto module = fn->getParentOfType<ModuleOp>();
  StateArenaAttr arena = getStateArena(module);
  ArrayRef<int64_t> offsets = arena.getOffsets();
  // An evaluation of sharded parameters reads the whole state the trainer
  // gathered (StepBuffers::wholeState: the arena's bytes, then each sharded
  // parameter and EMA copy whole) in place of the arena.
  SmallVector<int64_t> wholeOffsets;
  if (auto train = module.lookupSymbol<func::FuncOp>("train_step"))
    layOutWholeState(train, arena.getBytes(), wholeOffsets);
  int slot = 0;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (auto state = fn.getArgAttrOfType<StringAttr>(i, kStateAttr)) {
      int64_t offset = offsets[slot];
      if (fn.getArgAttr(i, kGatheredAttr))
        offset = wholeOffsets[slot];
      define(arg, "s" + std::to_string(slot), arenaRef(arg.getType(), false, offset));
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
      define(arg, images ? "images" : "labels",
             arenaRef(arg.getType(), true, images ? batch.imagesOffset : batch.labelsOffset));
      continue;
    }
    Binding control;
    control.type = cppElementType(arg.getType());
    control.expression =
        argRole == role::kStepsPerEpoch ? "&args.control->run.stepsPerEpoch"
        : argRole == role::kTotalSteps  ? "&args.control->run.totalSteps"
        : argRole == role::kSeed ? "reinterpret_cast<int64_t *>(&args.control->run.seed)"
                                 : "&args.control->valid";
    std::string name = control.expression;
    define(arg, name, control);
  }
}

LogicalResult StepPrinter::addRow(ArrayRef<Value> values,
                                  llvm::function_ref<LogicalResult(StepEmitter &)> body,
                                  StringRef comment) {
  std::string prologue, text, rowRefs;
  llvm::raw_string_ostream bodyOs(text);
  StepEmitter generic{bodyOs, DenseMap<Value, std::string>()};
  llvm::StringMap<std::string> parameterOf;
  int first = refCount;
  for (Value v : values) {
    auto [it, inserted] =
        parameterOf.try_emplace(e.name(v), "p" + std::to_string(parameterOf.size()));
    generic.names[v] = it->second;
    if (!inserted)
      continue;
    const Binding &b = bindings.find(e.name(v))->second;
    const std::string &p = it->second;
    if (b.isRef) {
      prologue += "  " + b.type + " *" + p + " = step_ref<" + b.type + ">(args, r[" +
                  std::to_string(refCount - first) + "]);\n";
      rowRefs += "{" + std::to_string(b.offset) + ", " + std::to_string(b.microBytes) + ", " +
                 (b.scratch ? "true" : "false") + "}, ";
      ++refCount;
    } else if (!b.constant.empty()) {
      prologue += "  " + target.scalarConstant(b.type, p, b.constant) + "\n";
    } else {
      prologue += "  " + b.type + " *" + p + " = " + b.expression + ";\n";
    }
  }
  if (failed(body(generic)))
    return failure();
  StringRef function = functions.get(prologue, text);
  rows += "    {" + function.str() + ", " + std::to_string(pendingSite) + ", " +
          std::to_string(first) + "}, // " + comment.str() + "\n";
  if (!rowRefs.empty())
    refs += "    " + StringRef(rowRefs).drop_back().str() + "\n";
  pendingSite = -1;
  ++rowCount;
  return success();
}

void StepPrinter::flushRows(std::string &calls, const std::string &indent) {
  if (pendingSite >= 0) // a mark with no op after it: an empty row keeps its time
    (void)addRow({}, [](StepEmitter &) { return success(); }, "mark");
  if (rowCount == flushedRows)
    return;
  calls += indent + "run_step_rows(args, " + rowsName + ", " + std::to_string(flushedRows) +
           ", " + std::to_string(rowCount) + ", " + refsName + ");\n";
  flushedRows = rowCount;
}

LogicalResult StepPrinter::printResults(Operation &op) {
  PlacementAttr placement = getPlacement(&op);
  if (!placement)
    return op.emitError("has no memory plan; run tcc-plan-memory first");
  for (auto [r, result] : llvm::enumerate(op.getResults())) {
    if (int64_t slot = placement.getStateSlot(r); slot >= 0) {
      // Updated in place: the state slot's own buffer.
      alias(result, slotArguments[slot]);
      continue;
    }
    define(result, "v" + std::to_string(counter++),
           arenaRef(result.getType(), true, placement.getScratchOffset(r)));
  }
  return success();
}

/// Copies state results that were not updated in place, and adds the
/// metric sums and the batch's real samples to the totals.
void StepPrinter::printReturn(func::ReturnOp ret) {
  markSite("step_end", "");
  Value lossSum, correct, logits; // null: the step has none
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto state = fn.getResultAttrOfType<StringAttr>(i, kStateAttr)) {
      Value slot = slotArgument.lookup(state.getValue());
      if (e.name(v) != e.name(slot))
        (void)addRow({v, slot}, [&](StepEmitter &g) {
          g.os << "  " << target.copy(cppElementType(v.getType()), numElements(v), g.name(v),
                                      g.name(slot)) << "\n";
          return success();
        }, "state copy");
      continue;
    }
    StringRef resultRole = fn.getResultAttrOfType<StringAttr>(i, kRoleAttr).getValue();
    if (resultRole == role::kLogits) {
      logits = v;
      continue;
    }
    if (resultRole == role::kLossSum)
      lossSum = v;
    else if (resultRole == role::kCorrect)
      correct = v;
  }
  // Logits stay in scratch, where the caller copies them from; a step
  // that returns them adds nothing to the totals.
  if (logits) {
    const Binding &b = bindings.find(e.name(logits))->second;
    logitsOffset = b.isRef && b.scratch ? b.offset : -1;
    logitsElements = numElements(logits);
    return;
  }
  SmallVector<Value> sums;
  for (Value v : {lossSum, correct})
    if (v)
      sums.push_back(v);
  (void)addRow(sums, [&](StepEmitter &g) {
    g.os << "  " << target.addTotals(lossSum ? g.name(lossSum) : "",
                                     correct ? g.name(correct) : "") << "\n";
    return success();
  }, "totals");
}

/// The loop runs its body's rows once per micro-batch; the body's scratch
/// was planned once for all iterations.
LogicalResult StepPrinter::printLoop(MicroBatchesOp loop, std::string &calls,
                                     const std::string &indent) {
  if (failed(printResults(*loop)))
    return failure();
  Block &body = loop.getBody().front();
  // The carried values live in the loop's results from the start.
  for (auto [init, result] : llvm::zip(loop.getInits(), loop.getResults()))
    (void)addRow({init, result}, [&](StepEmitter &g) {
      g.os << "  " << target.copy(cppElementType(init.getType()), numElements(init),
                                  g.name(init), g.name(result)) << "\n";
      return success();
    }, "carried init");
  flushRows(calls, indent);
  int64_t count = static_cast<int64_t>(loop.getCount());
  for (auto [k, operand] : llvm::enumerate(loop.getBatched())) {
    BlockArgument slice = body.getArgument(k);
    Binding b = bindings.find(e.name(operand))->second;
    b.type = cppElementType(slice.getType());
    b.microBytes += numElements(slice) *
                    (cast<ShapedType>(slice.getType()).getElementTypeBitWidth() / 8);
    define(slice, "b" + std::to_string(counter++), b);
  }
  for (auto [k, result] : llvm::enumerate(loop.getResults().take_front(loop.getInits().size())))
    alias(loop.getCarriedArgument(k), result);
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
    std::string type = cppElementType(value.getType());
    int64_t n = numElements(value);
    if (i < carried) {
      if (e.name(value) != e.name(result))
        (void)addRow({value, result}, [&](StepEmitter &g) {
          g.os << "  " << target.copy(type, n, g.name(value), g.name(result)) << "\n";
          return success();
        }, "carried");
      continue;
    }
    (void)addRow({value, result}, [&](StepEmitter &g) {
      g.os << "  if (args.micro == 0)\n    "
           << target.copy(type, n, g.name(value), g.name(result)) << "\n  else\n    "
           << target.accumulate(type, n, g.name(value), g.name(result)) << "\n";
      return success();
    }, "summed");
  }
}

/// A row of the op's function with the op's buffers. A view in its input's
/// bytes is only a new name for them.
LogicalResult StepPrinter::printOp(Operation &op) {
  if (sharesItsInputsBytes(op)) {
    alias(op.getResult(0), cast<ViewLikeOpInterface>(op).getViewSource());
    return success();
  }
  if (failed(printResults(op)))
    return failure();
  // A fusion group reads values defined above it rather than operands.
  SmallVector<Value> values(op.getOperands());
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(group.getBody(), captured);
    values.assign(captured.begin(), captured.end());
  }
  values.append(op.getResults().begin(), op.getResults().end());
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
  markSite(kind, node, &op);
  return addRow(values, [&](StepEmitter &generic) {
    // The values a group yields are stored in its results' buffers.
    if (auto group = dyn_cast<FusionGroupOp>(op))
      for (auto [value, result] : llvm::zip(
               group.getBody().front().getTerminator()->getOperands(), group.getResults())) {
        // A copy first: inserting `value` may move the map's entries.
        std::string name = generic.names.lookup(result);
        generic.names[value] = std::move(name);
      }
    return target.emitOp(&op, generic);
  }, (op.getName().getStringRef() + (node.empty() ? "" : " " + node)).str());
}

LogicalResult StepPrinter::printOps(Block &block, std::string &calls,
                                    const std::string &indent) {
  for (Operation &op : block) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat() || numElements(constant.getResult()) != 1)
        return constant.emitError("the code generators support scalar constants only");
      Binding b;
      b.type = cppElementType(constant.getType());
      b.constant = cppScalarLiteral(dense);
      define(constant.getResult(), "c" + std::to_string(counter++), b);
      continue;
    }
    if (auto loop = dyn_cast<MicroBatchesOp>(op)) {
      if (failed(printLoop(loop, calls, indent)))
        return failure();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      printReturn(ret);
    else if (auto yield = dyn_cast<YieldOp>(op))
      printYield(yield);
    else if (failed(printOp(op)))
      return failure();
  }
  flushRows(calls, indent);
  return success();
}

LogicalResult StepPrinter::print(std::string &calls) {
  nameArguments();
  if (failed(printOps(fn.front(), calls, "  ")))
    return failure();
  if (rowCount == 0)
    return success();
  // Host tables: the buffers of each row on one line, then the rows.
  llvm::raw_ostream &os = e.os;
  os << "const StepRef " << refsName << "[] = {\n"
     << (refs.empty() ? "    {0, 0, false}\n" : refs) << "};\n\n"
     << "const StepRow<StepArgs> " << rowsName << "[] = {\n" << rows << "};\n\n";
  return success();
}

} // namespace

StringRef OpFunctions::get(const std::string &prologue, const std::string &body) {
  auto [it, inserted] = names.try_emplace(prologue + "\n" + body);
  if (inserted) {
    it->second = "op" + std::to_string(names.size() - 1);
    text += "void " + it->second + "(const StepArgs &args, const StepRef *r) {\n" + prologue +
            body + "}\n\n";
  }
  return it->second;
}

LogicalResult mlir::tcc::walkStep(func::FuncOp fn, TargetEmitter &target,
                                  OpFunctions &functions, StringRef prefix,
                                  const BatchBuffers &batch, bool timed, WalkedStep &out) {
  llvm::raw_string_ostream os(out.parts);
  StepEmitter names{os, {}};
  if (timed)
    out.sites.push_back({"gather_batch", ""});
  StepPrinter printer(fn, target, names, functions, prefix, batch,
                     timed ? &out.sites : nullptr);
  if (failed(printer.print(out.calls)))
    return failure();
  out.logitsOffset = printer.logitsOffset;
  out.logitsElements = printer.logitsElements;
  // predictStep() copies them out as floats (PredictBuffers::logits).
  if (printer.logitsElements > 0 && printer.logitsOffset < 0)
    return fn.emitError("returns logits that are not in the scratch arena");
  for (Type type : fn.getResultTypes())
    if (printer.logitsElements > 0 && !cast<ShapedType>(type).getElementType().isF32())
      return fn.emitError("returns logits of type ") << type << ", not f32";
  return success();
}

std::string mlir::tcc::siteTable(const WalkedStep &step) {
  std::string table = "const tcc::rt::OpSite kTrainSites[] = {\n";
  for (const StepSite &site : step.sites) {
    table += "    {" + cppStringLiteral(site.op) + ", " + cppStringLiteral(site.node);
    if (site.collective)
      table += ", true, " + std::to_string(site.bucket) + ", " + std::to_string(site.bytes) +
               (site.sideStream ? ", true" : ", false");
    table += "},\n";
  }
  return table + "};\n\nstd::vector<OpSite> Model::trainSites() const {\n"
                 "  return {std::begin(kTrainSites), std::end(kTrainSites)};\n}\n\n";
}

/// The batch buffers go after the larger of the two steps' plans, images
/// then labels, each 64-byte aligned.
/// `predict` (or null) has images and no labels.
static BatchBuffers placeBatch(ArrayRef<func::FuncOp> steps, func::FuncOp predict) {
  auto align = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  int64_t planned = 0, images = 0, labels = 0;
  for (func::FuncOp fn : steps) {
    planned = std::max<int64_t>(planned, getScratchArena(fn).getBytes());
    images = std::max<int64_t>(images, numElements(fn.getArgument(0)) * 4);
    labels = std::max<int64_t>(labels, numElements(fn.getArgument(1)) * 8);
  }
  if (predict) {
    planned = std::max<int64_t>(planned, getScratchArena(predict).getBytes());
    images = std::max<int64_t>(images, numElements(predict.getArgument(0)) * 4);
  }
  BatchBuffers batch;
  batch.imagesOffset = align(planned);
  batch.labelsOffset = align(batch.imagesOffset + images);
  batch.endOffset = batch.labelsOffset + labels;
  return batch;
}

/// The state offset of the step counter, which says which batch to gather.
static FailureOr<int64_t> counterOffset(ModuleOp module, func::FuncOp train) {
  ArrayRef<int64_t> offsets = getStateArena(module).getOffsets();
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

FailureOr<PlannedSteps> mlir::tcc::findPlannedSteps(ModuleOp module, StringRef target,
                                                     bool predict) {
  PlannedSteps steps;
  steps.train = module.lookupSymbol<func::FuncOp>("train_step");
  steps.eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (!steps.train || !steps.eval || !getStateArena(module) ||
      !getScratchArena(steps.train) || !getScratchArena(steps.eval))
    return module.emitError("the ")
           << target << " code generator needs @train_step, @eval_step and the memory plan";
  FailureOr<int64_t> counter = counterOffset(module, steps.train);
  // The model description hands the recipe to the trainer.
  if (failed(counter) || failed(moduleRecipe(module)))
    return failure();
  steps.counterOffset = *counter;
  steps.plain = module.lookupSymbol<func::FuncOp>("eval_step_plain");
  steps.frozen = module.lookupSymbol<func::FuncOp>(kFrozenStepName);
  if (steps.frozen && (!getScratchArena(steps.frozen) ||
                       !steps.frozen->getAttrOfType<IntegerAttr>(kFrozenFromEpochAttr)))
    return steps.frozen.emitError("the ")
           << target << " code generator needs the memory plan and "
           << kFrozenFromEpochAttr << " of @" << kFrozenStepName;
  if (predict)
    steps.predict = module.lookupSymbol<func::FuncOp>(kPredictStepName);
  if (steps.predict && !getScratchArena(steps.predict))
    return steps.predict.emitError("the ")
           << target << " code generator needs the memory plan of @" << kPredictStepName;
  SmallVector<func::FuncOp> all{steps.train, steps.eval};
  for (func::FuncOp fn : {steps.plain, steps.frozen})
    if (fn)
      all.push_back(fn);
  steps.batch = placeBatch(all, steps.predict);
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
                                      steps.batch, false, out.plain))) ||
      (steps.frozen && failed(walkStep(steps.frozen, target, out.functions, "trainFrozen",
                                       steps.batch, false, out.frozen))) ||
      (steps.predict && failed(walkStep(steps.predict, target, out.functions, "predict",
                                        steps.batch, false, out.predict))));
}

LogicalResult mlir::tcc::emitOpsOneByOne(ModuleOp module, TargetEmitter &target,
                                         llvm::raw_ostream &os) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    os << "// @" << fn.getSymName() << "\n";
    StepEmitter names{os, {}};
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

std::string TargetEmitter::copy(StringRef type, int64_t n, StringRef from,
                                StringRef to) const {
  return calls.kernels + "copy<" + type.str() + ">(" + calls.stream + std::to_string(n) +
         ", " + from.str() + ", " + to.str() + ");";
}

std::string TargetEmitter::accumulate(StringRef type, int64_t n, StringRef from,
                                      StringRef to) const {
  return calls.kernels + "add_accumulate<" + type.str() + ">(" + calls.stream +
         std::to_string(n) + ", " + from.str() + ", " + to.str() + ");";
}

std::string TargetEmitter::addTotals(StringRef lossSum, StringRef correct) const {
  return calls.stepOps + "add_step_totals(" + calls.stream + "args.control, " +
         (lossSum.empty() ? "static_cast<const float *>(nullptr)" : lossSum.str()) + ", " +
         (correct.empty() ? "static_cast<const int64_t *>(nullptr)" : correct.str()) + ");";
}
