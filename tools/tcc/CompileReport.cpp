//===- CompileReport.cpp - The JSON report of `tcc compile --report` ------===//

#include "tools/tcc/CompileOptions.h"

#include "codegen/Codegen.h"
#include "ir/TccAttrNames.h"
#include "passes/MemoryPlan.h"

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

} // namespace

namespace tcc {

std::string compileReport(ModuleOp model, ModuleOp planned,
                               const CompileOptions &options,
                               const CompileFacts &facts) {
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
  if (auto train = model->getAttrOfType<DictionaryAttr>(mlir::tcc::kTrainAttr))
    if (auto precision = train.getAs<StringAttr>("precision"))
      report["precision_requested"] = precision.str();

  // Parameters and buffers are the arguments of the frontend's @forward.
  // What trains is what the planned step trains: passes can freeze a
  // parameter (tcc-bn-bias-elimination).
  auto trains = [](func::FuncOp fn, unsigned i) {
    auto t = fn.getArgAttrOfType<BoolAttr>(i, mlir::tcc::kTrainableAttr);
    return t && t.getValue();
  };
  auto elements = [](func::FuncOp fn, unsigned i) {
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
  report["ops"] = countOps(forward);

  if (FailureOr<::mlir::tcc::MemoryPlanSizes> plan = ::mlir::tcc::readMemoryPlan(planned);
      succeeded(plan)) {
    report["state_bytes"] = plan->stateBytes;
    report["scratch_bytes"] = {{"train_step", plan->trainScratchBytes},
                               {"eval_step", plan->evalScratchBytes}};
    report["batch_bytes"] = plan->batchBytes;
    report["step_bytes"] = plan->stepBytes();
  }
  report["train_step_ops"] = countOps(planned.lookupSymbol<func::FuncOp>("train_step"));
  if (auto train = model->getAttrOfType<DictionaryAttr>(mlir::tcc::kTrainAttr))
    if (auto budget = train.getAs<IntegerAttr>("memory_budget"))
      report["memory_budget"] = budget.getInt();
  // The passes in the order they ran; what each optimization pass did
  // (its tcc.pass_report entry, passes/PassReport.h), by name; and the ones
  // --disable-pass left out.
  report["pipeline"] = facts.passes;
  report["passes"] = nlohmann::json::object();
  if (auto passes = planned->getAttrOfType<DictionaryAttr>(mlir::tcc::kPassReportAttr))
    report["passes"] = nlohmann::json::parse(::mlir::tcc::attributeToJson(passes));
  report["disabled_passes"] = options.disabledPasses;
  report["warnings"] = facts.warnings;
  return report.dump(2) + "\n";
}

} // namespace tcc
