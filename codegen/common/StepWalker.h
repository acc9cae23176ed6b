//===- StepWalker.h - The walk shared by the targets -------------*- C++ -*-===//
//
// Private to codegen/. A planned step (@train_step or @eval_step after
// tcc-plan-memory) becomes host code the same way for every target: the
// walk visits its ops once, in schedule order, names every value after the
// memory plan (an offset into the state or scratch arena, or a field of the
// bound StepControl block), and prints the step as a table of rows, each a
// function per distinct op and its buffers. What those functions contain (kernel calls
// on the host, launches on a device) is the target's: a TargetEmitter.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_STEPWALKER_H
#define TCC_CODEGEN_STEPWALKER_H

#include "codegen/common/Emitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::tcc {

/// How a target calls the runtime's copy, accumulate and totals kernels:
/// `kernels` before "copy<T>(" ("", "cuda::"), `stream` first among their
/// arguments ("", "args.stream, "), the totals from `stepOps` ("cpu::").
struct StepCalls {
  std::string kernels, stream, stepOps;
};

/// What differs between targets inside a step. Every string it returns is
/// one complete statement or declaration of the generated host code.
class TargetEmitter {
public:
  explicit TargetEmitter(StepCalls calls) : calls(std::move(calls)) {}
  virtual ~TargetEmitter() = default;

  /// Prints the statements that run `op`, its buffers named in `names`
  /// (function parameters p0, p1, ...). Fails with an error on the op when
  /// the target cannot run it.
  virtual LogicalResult emitOp(Operation *op, StepEmitter &names) = 0;

  /// Declares `name` as a one-element buffer holding `value` (a C++
  /// literal of `type`) that kernels can read.
  virtual std::string scalarConstant(StringRef type, StringRef name,
                                     StringRef value) = 0;

  /// What the walk made the target declare at file scope, before the op
  /// functions (SourceSkeleton.cpp); empty by default.
  virtual std::string fileScope() const { return ""; }

  /// to[0..n) = from[0..n), elements of C++ type `type`.
  std::string copy(StringRef type, int64_t n, StringRef from, StringRef to) const;

  /// to[0..n) += from[0..n).
  std::string accumulate(StringRef type, int64_t n, StringRef from, StringRef to) const;

  /// Adds the step's loss sum and correct count (either may be empty: the
  /// step has none) and its real samples to the bound totals.
  std::string addTotals(StringRef lossSum, StringRef correct) const;

private:
  StepCalls calls;
};

/// Where the step's batch lives: the scratch arena past the memory plan.
struct BatchBuffers {
  int64_t imagesOffset = 0, labelsOffset = 0, endOffset = 0;
};

/// Prints every op of every function of `module` as `target` makes it, for
/// the emitter tests (tcc-translate): Codegen.h's emitCpuOps.
LogicalResult emitOpsOneByOne(ModuleOp module, TargetEmitter &target,
                              llvm::raw_ostream &os);

/// The functions that run each distinct op. Ops that differ only in the
/// buffers they read and write (the blocks of a deep model, a layer's
/// forward in the train and the eval step) share one function: the C++
/// compiler, which inlines the kernels into it, does that work once per
/// distinct op rather than once per op.
struct OpFunctions {
  std::string text;                   ///< their definitions
  llvm::StringMap<std::string> names; ///< by prologue and body

  /// The name of the function `void NAME(const StepArgs &args, const
  /// StepRef *r)` whose `prologue` names its buffers (p0 from r[0], ...)
  /// and whose `body` runs the op on them.
  StringRef get(const std::string &prologue, const std::string &body);
};

/// One site of a timed step (runtime/StepProfile.h's OpSite): the op and
/// its model node; for a collective, its gradient bucket (-1: none), the
/// bytes of the whole tensors it moves, and whether it runs on the side
/// stream (tcc.side_stream).
struct StepSite {
  std::string op, node;
  bool collective = false;
  int64_t bucket = -1, bytes = 0;
  bool sideStream = false;
};

/// One walked step: its tables (`k<Prefix>Refs`, `k<Prefix>Rows`:
/// runtime/StepTable.h) and the statements that run the rows in order (the
/// micro-batch loop among them).
struct WalkedStep {
  std::string parts, calls;
  /// A timed step's sites in the order they run; site 0 is the batch's
  /// gather, which the target prints. Empty if the step is not timed.
  std::vector<StepSite> sites;
  /// A step that returns logits (@predict_step) rather than totals: where
  /// they are in scratch, and their element count; -1: it returns none.
  int64_t logitsOffset = -1, logitsElements = 0;
};

/// The C++ table `kTrainSites` of the timed `step`'s sites and the
/// definition of `Model::trainSites()` that returns it.
std::string siteTable(const WalkedStep &step);

/// Walks `fn` with `target`, adding the functions of its ops to
/// `functions`. The generated code must define `struct StepArgs` with
/// `char *state, *scratch; StepControl *control; int64_t micro;` and
/// `tcc::rt::OpClock *clock`, which a `timed` step marks before each op
/// (./train --profile; runtime/StepProfile.h).
LogicalResult walkStep(func::FuncOp fn, TargetEmitter &target,
                       OpFunctions &functions, StringRef prefix,
                       const BatchBuffers &batch, bool timed, WalkedStep &out);

/// The planned steps of a module (after tcc-build-train-step and
/// tcc-plan-memory) and what every target derives from them.
struct PlannedSteps {
  func::FuncOp train, eval;
  /// With TTA, the evaluation without it (./train --tta off); else null.
  func::FuncOp plain;
  /// The training step after the parameters with train_epochs have stopped
  /// training (tcc-frozen-step); else null.
  func::FuncOp frozen;
  /// A token model's forward-only step (tcc.predict_step), when the target
  /// emits it (SourceHooks::predict); else null.
  func::FuncOp predict;
  int64_t counterOffset = 0; ///< of the state's step counter `step`
  BatchBuffers batch;        ///< after the larger of the steps' plans
};

/// The planned steps of `module` (@predict_step only if `predict`: the
/// target emits it); an error naming the `target` code generator when it
/// has none or no memory plan.
FailureOr<PlannedSteps> findPlannedSteps(ModuleOp module, StringRef target, bool predict);

/// Every step of `steps` walked with `target`, their op functions shared;
/// the training step timed (the frozen one is not: ./train --profile times
/// @train_step's ops).
struct WalkedSteps {
  OpFunctions functions;
  WalkedStep train, eval, plain, frozen, predict;
};
LogicalResult walkSteps(const PlannedSteps &steps, TargetEmitter &target, WalkedSteps &out);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_STEPWALKER_H
