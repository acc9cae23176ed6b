//===- CompileReport.cpp - The JSON report of `tcc compile --report` ------===//

#include "tools/tcc/CompileOptions.h"

#include "codegen/Codegen.h"
#include "ir/ModelNode.h"
#include "ir/TccAttrNames.h"
#include "ir/TccRecipe.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"
#include "passes/DistributedStep.h"
#include "passes/MemoryPlan.h"
#include "passes/PassReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <type_traits>
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <nlohmann/json.hpp>

using namespace mlir;

namespace {

/// The tcc ops of `fn` by name, with their counts.
std::map<std::string, int64_t> countOps(func::FuncOp fn) {
  std::map<std::string, int64_t> ops;
  if (fn)
    fn.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "tcc")
        ++ops[op->getName().getStringRef().str()];
    });
  return ops;
}

/// The all-reduces of the gradients in the planned step (ZeRO-2's
/// reduce-scatters; not FSDP's, per node), in the order they run
/// (tcc-bucket-collectives' buckets, or the one after the backward): the
/// tensors and bytes each sums, and the kernels the step launches from
/// its start up to the first op that reads its sums, other collectives
/// left out: the work a second stream could hide it behind.
nlohmann::json gradientBuckets(func::FuncOp step) {
  nlohmann::json buckets = nlohmann::json::array();
  Block &block = step.front();
  const bool fsdp = mlir::tcc::gathersParameters(step);
  for (Operation &op : block) {
    if (!op.hasAttr(mlir::tcc::kGradientsAttr) ||
        !(isa<mlir::tcc::AllReduceOp>(op) || (isa<mlir::tcc::ReduceScatterOp>(op) && !fsdp)))
      continue;
    int64_t bytes = 0;
    for (Value v : op.getOperands())
      bytes += mlir::tcc::tensorBytes(v.getType());
    Operation *firstReader = nullptr;
    for (Operation *user : op.getUsers())
      if (Operation *reader = block.findAncestorOpInBlock(*user);
          !firstReader || reader->isBeforeInBlock(firstReader))
        firstReader = reader;
    int64_t kernels = 0;
    for (Operation *next = op.getNextNode(); next && next != firstReader;
         next = next->getNextNode())
      if (!isa<mlir::tcc::AllReduceOp, mlir::tcc::ReduceScatterOp>(next))
        kernels += mlir::tcc::kernelsOf(*next);
    buckets.push_back({{"tensors", op.getNumOperands()},
                       {"bytes", bytes},
                       {"overlap_kernels", kernels}});
  }
  return buckets;
}

/// The model node an op comes from, or null.
nlohmann::json nodeOf(Location loc) {
  std::string node = mlir::tcc::modelNodeOf(loc);
  return node.empty() ? nlohmann::json(nullptr) : nlohmann::json(node);
}

/// Every op of `fn` that runs, in order (constants, loops and terminators
/// left out): its name, model node, fusion kind, the element type of its
/// first result, and the index of its fusion group (null if none). Groups
/// are numbered in order of appearance.
nlohmann::json opList(func::FuncOp fn) {
  nlohmann::json ops = nlohmann::json::array();
  if (!fn)
    return ops;
  DenseMap<Operation *, int64_t> groupIndex;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<mlir::tcc::FusionGroupOp>(op)) {
      groupIndex.try_emplace(op, static_cast<int64_t>(groupIndex.size()));
      return;
    }
    if (isa<func::FuncOp, arith::ConstantOp, mlir::tcc::MicroBatchesOp>(op) ||
        op->hasTrait<OpTrait::IsTerminator>())
      return;
    nlohmann::json entry;
    entry["op"] = op->getName().stripDialect().str();
    entry["node"] = nodeOf(op->getLoc());
    entry["kind"] = mlir::tcc::stringifyFusionKind(mlir::tcc::fusionKindOf(op)).str();
    entry["dtype"] = nullptr;
    if (op->getNumResults() > 0)
      if (auto shaped = dyn_cast<ShapedType>(op->getResult(0).getType())) {
        std::string dtype;
        llvm::raw_string_ostream os(dtype);
        shaped.getElementType().print(os);
        entry["dtype"] = dtype;
      }
    entry["group"] = nullptr;
    if (auto group = op->getParentOfType<mlir::tcc::FusionGroupOp>()) {
      entry["group"] = groupIndex.lookup(group);
      entry["group_kind"] = group.getKind().str();
    }
    ops.push_back(entry);
  });
  return ops;
}

} // namespace

namespace tcc {

std::string compileReport(ModuleOp model, ModuleOp planned, const CompileOptions &options,
                          const CompileFacts &facts) {
  return compileReportJson(model, planned, options, facts).dump(2) + "\n";
}

nlohmann::json compileReportJson(ModuleOp model, ModuleOp planned,
                                 const CompileOptions &options, const CompileFacts &facts) {
  nlohmann::json report;
  report["model"] = options.model;
  if (auto name = model->getAttrOfType<StringAttr>(mlir::tcc::kModelAttr))
    report["name"] = name.str();
  report["emit"] = options.emit;
  report["target"] = options.target;
  if (options.emit == "exe")
    report["march"] = options.march;
  // What ran, not what was asked for: the warnings say where they differ.
  report["precision"] = facts.precision;
  if (mlir::tcc::TrainAttr train = mlir::tcc::moduleTrain(model))
    report["precision_requested"] = mlir::tcc::toRecipe(train.getPrecision()).name();

  // Parameters and buffers are the arguments of the frontend's @forward.
  // What trains is what the planned step trains: passes can freeze a
  // parameter (tcc-bn-bias-elimination).
  auto trains = [](func::FuncOp fn, unsigned i) {
    auto t = fn.getArgAttrOfType<BoolAttr>(i, mlir::tcc::kTrainableAttr);
    return t && t.getValue();
  };
  // A sharded parameter (shard "parameters") counts whole.
  auto elements = [](func::FuncOp fn, unsigned i) {
    if (auto whole = fn.getArgAttrOfType<DenseI64ArrayAttr>(i, mlir::tcc::kShardOfAttr)) {
      int64_t n = 1;
      for (int64_t d : whole.asArrayRef())
        n *= d;
      return n;
    }
    return cast<ShapedType>(fn.getArgument(i).getType()).getNumElements();
  };
  int64_t parameters = 0, trainable = 0, buffers = 0;
  auto forward = model.lookupSymbol<func::FuncOp>("forward");
  for (unsigned i = 0; forward && i < forward.getNumArguments(); ++i) {
    if (forward.getArgAttr(i, mlir::tcc::kParamAttr)) {
      parameters += elements(forward, i);
      if (trains(forward, i))
        trainable += elements(forward, i);
    } else if (forward.getArgAttr(i, mlir::tcc::kBufferAttr)) {
      buffers += elements(forward, i);
    }
  }
  if (auto step = planned.lookupSymbol<func::FuncOp>("train_step")) {
    trainable = 0;
    for (unsigned i = 0; i < step.getNumArguments(); ++i)
      if (trains(step, i))
        trainable += elements(step, i);
  }
  report["parameters"] = parameters;
  report["trainable_parameters"] = trainable;
  report["buffer_elements"] = buffers;

  if (FailureOr<::mlir::tcc::MemoryPlanSizes> plan = ::mlir::tcc::readMemoryPlan(planned);
      succeeded(plan)) {
    report["state_bytes"] = plan->stateBytes;
    report["scratch_bytes"] = {{"train_step", plan->trainScratchBytes},
                               {"eval_step", plan->evalScratchBytes}};
    // Each training step's own; the plan serves the larger.
    for (StringRef name : {StringRef("train_step"), StringRef(mlir::tcc::kFrozenStepName)})
      if (auto fn = planned.lookupSymbol<func::FuncOp>(name))
        if (mlir::tcc::ScratchArenaAttr arena = mlir::tcc::getScratchArena(fn))
          report["scratch_bytes"][name.str()] = arena.getBytes();
    report["batch_bytes"] = plan->batchBytes;
    report["step_bytes"] = plan->stepBytes();
    // The plan is static: what the step holds at once is all of it.
    report["peak_bytes"] = plan->stepBytes();
  }
  auto trainStep = planned.lookupSymbol<func::FuncOp>("train_step");
  report["op_counts"] = {{"forward", countOps(forward)}, {"train_step", countOps(trainStep)}};
  report["ops"] = {{"train_step", opList(trainStep)},
                   {"eval_step", opList(planned.lookupSymbol<func::FuncOp>("eval_step"))}};
  // The training steps the trainer runs, in order, and what each leaves out
  // (tcc-frozen-step).
  if (trainStep) {
    nlohmann::json first = {{"name", "train_step"},
                            {"from_epoch", 0},
                            {"leaves_out", nlohmann::json::array()},
                            {"kernels", ::mlir::tcc::kernelsPerStep(trainStep)}};
    report["train_steps"] = nlohmann::json::array();
    report["train_steps"].push_back(std::move(first));
    if (auto frozen = planned.lookupSymbol<func::FuncOp>(mlir::tcc::kFrozenStepName)) {
      nlohmann::json leavesOut = nlohmann::json::array();
      if (auto names = frozen->getAttrOfType<ArrayAttr>(mlir::tcc::kFrozenParamsAttr))
        for (auto name : names.getAsValueRange<StringAttr>())
          leavesOut.push_back(name.str());
      auto from = frozen->getAttrOfType<IntegerAttr>(mlir::tcc::kFrozenFromEpochAttr);
      nlohmann::json second = {{"name", mlir::tcc::kFrozenStepName.str()},
                               {"from_epoch", from ? from.getInt() : int64_t{0}},
                               {"leaves_out", leavesOut},
                               {"kernels", ::mlir::tcc::kernelsPerStep(frozen)}};
      report["train_steps"].push_back(std::move(second));
      report["op_counts"][mlir::tcc::kFrozenStepName.str()] = countOps(frozen);
    }
  }
  // The kernels one training step launches, as tcc-fusion found them before
  // grouping (the same count when it did not run) and as planned.
  if (trainStep) {
    int64_t after = ::mlir::tcc::kernelsPerStep(trainStep), before = after;
    if (auto passes = planned->getAttrOfType<DictionaryAttr>(mlir::tcc::kPassReportAttr))
      if (auto fusion = passes.getAs<DictionaryAttr>("fusion"))
        if (auto count = fusion.getAs<IntegerAttr>("kernels_before"))
          before = count.getInt();
    report["kernels_per_step"] = {{"before_fusion", before}, {"after_fusion", after}};
  }
  if (mlir::tcc::TrainAttr train = mlir::tcc::moduleTrain(model))
    if (std::optional<int64_t> budget = train.getMemoryBudget())
      report["memory_budget"] = *budget;
  // A step of several ranks (docs/distributed.md): the state and plan
  // above are each rank's; what its collectives move each step.
  if (mlir::tcc::TrainAttr train = mlir::tcc::moduleTrain(model);
      train && train.getRanks() > 1 && trainStep) {
    // Each kind of collective: how many run, the tensors, the bytes of the
    // whole tensors they reduce or gather (one in a micro-batch loop runs
    // once per micro-batch).
    auto count = [&](auto opType) {
      using Op = decltype(opType);
      int64_t collectives = 0, tensors = 0, bytes = 0;
      trainStep.walk([&](Op op) {
        int64_t times =
            op->template getParentOfType<mlir::tcc::MicroBatchesOp>() ? train.getAccumulate() : 1;
        collectives += times;
        ValueRange wholes = std::is_same_v<Op, mlir::tcc::AllGatherOp>
                                ? ValueRange(op->getResults())
                                : ValueRange(op->getOperands());
        for (Value v : wholes) {
          tensors += times;
          bytes += times * mlir::tcc::tensorBytes(v.getType());
        }
      });
      return nlohmann::json{
          {"collectives", collectives}, {"tensors", tensors}, {"bytes_per_step", bytes}};
    };
    // The optimizer state and the parameters each rank keeps (a chunk of
    // them, sharded).
    int64_t optimizerBytes = 0, parameterBytes = 0;
    for (BlockArgument arg : trainStep.getArguments())
      if (auto kind = trainStep.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                             mlir::tcc::kKindAttr)) {
        if (kind.getValue() == "optimizer")
          optimizerBytes += mlir::tcc::tensorBytes(arg.getType());
        if (kind.getValue() == "param")
          parameterBytes += mlir::tcc::tensorBytes(arg.getType());
      }
    // Sharded parameters: the whole state each rank gathers before an
    // evaluation, held while it runs (docs/distributed.md).
    int64_t wholeStateBytes = 0;
    bool gathered = false;
    if (auto eval = planned.lookupSymbol<func::FuncOp>("eval_step"))
      for (unsigned i = 0; i < eval.getNumArguments(); ++i)
        gathered |= bool(eval.getArgAttr(i, mlir::tcc::kGatheredAttr));
    if (mlir::tcc::StateArenaAttr arena = mlir::tcc::getStateArena(planned); arena && gathered) {
      SmallVector<int64_t> offsets;
      wholeStateBytes = mlir::tcc::layOutWholeState(trainStep, arena.getBytes(), offsets);
    }
    // The parameter gathers by where they are placed: before the forward's
    // reads and again before the backward's (tcc-gather-parameters).
    auto gathersFor = [&](StringRef purpose) {
      int64_t collectives = 0, bytes = 0;
      trainStep.walk([&](mlir::tcc::AllGatherOp op) {
        auto forWhat = op->getAttrOfType<StringAttr>(mlir::tcc::kGatherForAttr);
        if (!forWhat || forWhat.getValue() != purpose)
          return;
        int64_t times =
            op->getParentOfType<mlir::tcc::MicroBatchesOp>() ? train.getAccumulate() : 1;
        collectives += times;
        for (Value v : op->getResults())
          bytes += times * mlir::tcc::tensorBytes(v.getType());
      });
      return nlohmann::json{{"collectives", collectives}, {"bytes_per_step", bytes}};
    };
    static const char *const kShard[] = {"none", "optimizer", "gradients", "parameters"};
    report["distributed"] = {{"ranks", train.getRanks()},
                             {"batch_per_rank", train.getBatchSize() / train.getRanks()},
                             {"sync_batch_norm", train.getSyncBatchNorm()},
                             {"shard", kShard[int(train.getShard())]},
                             {"optimizer_state_bytes_per_rank", optimizerBytes},
                             {"parameter_bytes_per_rank", parameterBytes},
                             {"eval_whole_state_bytes", wholeStateBytes},
                             {"parameter_gathers", {{"forward", gathersFor("forward")},
                                                    {"backward", gathersFor("backward")}}},
                             {"all_reduce", count(mlir::tcc::AllReduceOp())},
                             {"reduce_scatter", count(mlir::tcc::ReduceScatterOp())},
                             {"all_gather", count(mlir::tcc::AllGatherOp())},
                             {"gradient_buckets", gradientBuckets(trainStep)}};
  }
  // The passes in the order they ran; what each optimization pass did
  // (its tcc.pass_report entry, passes/PassReport.h), by name; and the ones
  // --disable-pass left out.
  report["pipeline"] = facts.passes;
  report["passes"] = nlohmann::json::object();
  if (auto passes = planned->getAttrOfType<DictionaryAttr>(mlir::tcc::kPassReportAttr))
    report["passes"] = nlohmann::json::parse(::mlir::tcc::attributeToJson(passes));
  report["disabled_passes"] = options.disabledPasses;
  report["enabled_passes"] = options.enabledPasses;
  report["warnings"] = facts.warnings;
  if (options.emit == "exe") {
    nlohmann::json objects = nlohmann::json::array();
    for (const SharedObject &object : facts.sharedObjects) {
      nlohmann::json entry = {{"source", object.source}, {"cache", cacheUseName(object.cache)}};
      if (object.cache == CacheUse::Off)
        entry["why"] = object.why;
      else
        entry["object"] = object.object;
      objects.push_back(std::move(entry));
    }
    report["trainer_build"] = {{"shared_objects", std::move(objects)}};
  }
  return report;
}

} // namespace tcc
