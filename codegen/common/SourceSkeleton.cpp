//===- SourceSkeleton.cpp - The generated source file, for every target ---===//

#include "codegen/common/SourceSkeleton.h"

#include "codegen/common/ModelDescription.h"
#include "ir/TccAttrNames.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The includes, sorted: the skeleton's and the target's.
void printIncludes(const SourceHooks &hooks, llvm::raw_ostream &os) {
  std::set<std::string> runtime = {"runtime/CompiledModel.h", "runtime/StepTable.h",
                                   "runtime/kernels/Step.h"};
  std::set<std::string> system = {"cstdint", "iterator", "vector"};
  for (const std::string &header : hooks.headers)
    (StringRef(header).starts_with("runtime/") ? runtime : system).insert(header);
  for (const std::string &header : runtime)
    os << "#include \"" << header << "\"\n";
  os << "\n";
  for (const std::string &header : system)
    os << "#include <" << header << ">\n";
  os << "\n";
}

/// The members of a model with test-time augmentation.
std::string ttaMembers(const PlannedSteps &steps) {
  return steps.plain ? "  bool hasTta() const override { return true; }\n"
                       "  void evalStepWithoutTta() override;\n"
                     : "";
}

void printModelClass(const PlannedSteps &steps, const SourceHooks &hooks, llvm::raw_ostream &os) {
  const bool generated = hooks.runner == StepRunner::Generated;
  const char *frozen = !steps.frozen  ? ""
                       : generated    ? "  void trainStepFrozen() override;\n"
                                      : "  void runTrainStepFrozen() override;\n";
  os << "class Model final : public " << hooks.modelBase << " {\npublic:\n  Model();\n"
     << "  const ModelInfo &info() const override { return info_; }\n"
     << (generated ? "  void trainStep() override;\n  void evalStep() override;\n" : "")
     << (generated ? frozen : "")
     << (generated && steps.predict ? "  void predictStep() override;\n" : "")
     << hooks.publicMembers << (generated ? "" : ttaMembers(steps))
     << "\nprotected:\n"
     << (generated ? "" : "  void runTrainStep() override;\n  void runEvalStep() override;\n")
     << (generated ? "" : frozen)
     << "  std::vector<OpSite> trainSites() const override;\n"
     << (generated ? ttaMembers(steps) : "") << "\nprivate:\n  ModelInfo info_;\n};\n\n";
}

/// What every op's function reads: the arenas, the control block and the
/// target's own handles.
void printStepArgs(const SourceHooks &hooks, llvm::raw_ostream &os) {
  os << "struct StepArgs {\n  char *state;\n  char *scratch;\n"
     << "  StepControl *control;\n"
     << "  Communicator *comm; // the other ranks (tcc.all_reduce)\n"
     << "  int64_t micro; // the micro-batch a tcc.micro_batches loop is at\n"
     << hooks.stepArgsFields << "  OpClock *clock; // null unless the step is profiled\n"
     << "};\n\n";
}

/// Model's functions that gather a batch and run each walked step.
void printStepFunctions(PlannedSteps steps, const WalkedSteps &walked,
                        const SourceHooks &hooks, const TargetEmitter &target,
                        llvm::raw_ostream &os) {
  const BatchBuffers &batch = steps.batch;
  const bool generated = hooks.runner == StepRunner::Generated;
  const std::string gather = hooks.target + "::gather_";
  std::string argsInit =
      "  const StepBuffers &b = buffers();\n"
      "  StepArgs args{static_cast<char *>(b.state), static_cast<char *>(b.scratch),\n"
      "                b.control, b.comm, 0, " +
      hooks.stepArgsValues + "opClock()};\n";
  std::string images =
      "reinterpret_cast<float *>(args.scratch + " + std::to_string(batch.imagesOffset) + ")";
  std::string labels =
      "reinterpret_cast<int64_t *>(args.scratch + " + std::to_string(batch.labelsOffset) + ")";
  os << "void Model::" << (generated ? "trainStep" : "runTrainStep") << "() {\n"
     << argsInit << "  if (args.clock) args.clock->at(0);\n"
     << "  " << gather << "train_batch(" << hooks.gatherArgs
     << "b, reinterpret_cast<const int64_t *>(args.state + " << steps.counterOffset << "), "
     << dimsOf(steps.train.getArgument(0))[0] << ", " << images << ", " << labels << ");\n"
     << walked.train.calls << (generated ? "  endProfiledStep();\n" : "") << "}\n\n";
  // Not timed: a profiled run times @train_step's ops only.
  if (steps.frozen)
    os << "void Model::" << (generated ? "trainStepFrozen" : "runTrainStepFrozen") << "() {\n"
       << argsInit << "  " << gather << "train_batch(" << hooks.gatherArgs
       << "b, reinterpret_cast<const int64_t *>(args.state + " << steps.counterOffset << "), "
       << dimsOf(steps.frozen.getArgument(0))[0] << ", " << images << ", " << labels << ");\n"
       << walked.frozen.calls << "}\n\n";
  // Sharded parameters: the evaluation reads the whole state the trainer
  // gathers before it (tcc.gathered arguments), at the arena's offsets.
  auto evalArgs = [&](func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, kGatheredAttr))
        return "  const StepBuffers &b = buffers();\n"
               "  if (!b.wholeState)\n"
               "    throw std::runtime_error(\"internal error: the evaluation of sharded "
               "parameters needs the whole state (StepBuffers::wholeState)\");\n"
               "  StepArgs args{static_cast<char *>(b.wholeState), "
               "static_cast<char *>(b.scratch),\n"
               "                b.control, b.comm, 0, " +
               hooks.stepArgsValues + "opClock()};\n";
    return argsInit;
  };
  auto evalFunction = [&](StringRef name, func::FuncOp fn, const WalkedStep &step) {
    os << "void Model::" << name << "() {\n"
       << evalArgs(fn) << "  " << gather << "eval_batch(" << hooks.gatherArgs << "b, "
       << dimsOf(fn.getArgument(0))[0] << ", " << images << ", " << labels << ");\n"
       << step.calls << "}\n\n";
  };
  evalFunction(generated ? "evalStep" : "runEvalStep", steps.eval, walked.eval);
  if (steps.plain)
    evalFunction("evalStepWithoutTta", steps.plain, walked.plain);
  // The host's tokens in, the logits out to the bound buffer.
  if (steps.predict && generated) {
    const WalkedStep &p = walked.predict;
    os << "void Model::predictStep() {\n"
       << argsInit << "  " << gather << "predict_batch(" << hooks.gatherArgs << "b, "
       << numElements(steps.predict.getArgument(0)) << ", " << images << ");\n"
       << p.calls << "  "
       << target.copy("float", p.logitsElements,
                      "reinterpret_cast<const float *>(args.scratch + " +
                          std::to_string(p.logitsOffset) + ")",
                      "b.predict.logits")
       << "\n}\n\n";
  }
}

} // namespace

LogicalResult mlir::tcc::emitStepSource(ModuleOp module, const SourceHooks &hooks,
                                        TargetEmitter &target, llvm::raw_ostream &os) {
  FailureOr<PlannedSteps> found =
      findPlannedSteps(module, hooks.target,
                       hooks.predict && hooks.runner == StepRunner::Generated);
  if (failed(found))
    return failure();
  PlannedSteps steps = *found;
  WalkedSteps walked;
  if (failed(walkSteps(steps, target, walked)))
    return failure();
  os << "// Generated by tcc from model '"
     << module->getAttrOfType<StringAttr>(kModelAttr).getValue() << "' for the " << hooks.target
     << " target. Do not edit.\n";
  printIncludes(hooks, os);
  os << "namespace {\nusing namespace tcc::rt;\nusing namespace tcc::rt::kernels;\n"
     << hooks.aliases << "\n"
     << hooks.declarations;
  printModelClass(steps, hooks, os);
  emitModelDescription(module, steps.train, steps.eval, steps.frozen, steps.predict, hooks.target,
                       hooks.memory, steps.batch.endOffset, os);
  printStepArgs(hooks, os);
  os << target.fileScope() << siteTable(walked.train) << walked.functions.text << walked.train.parts
     << walked.eval.parts << walked.plain.parts << walked.frozen.parts << walked.predict.parts;
  printStepFunctions(steps, walked, hooks, target, os);
  os << "} // namespace\n\n"
     << "extern \"C\" tcc::rt::CompiledModel *tccCreateModel() { return new Model(); }\n";
  return success();
}
