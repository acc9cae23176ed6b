//===- StepBuilder.h - Shared by the train- and eval-step builders -*- C++ -*-//
#ifndef TCC_PASSES_STEPBUILDER_H
#define TCC_PASSES_STEPBUILDER_H

#include "ir/TccRecipe.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir::tcc {

/// One persistent tensor of the training state, in the order of the step
/// functions' state arguments: the step counter, then parameters and buffers
/// (PyTorch state_dict order), optimizer slots, Lookahead's slow weights,
/// and EMA copies.
struct StateEntry {
  std::string name; ///< checkpoint name: "step", "conv1.weight", "ema.conv1.weight"
  std::string kind; ///< counter | param | buffer | optimizer | lookahead | ema
  Type type;
  DictionaryAttr init;
  bool trainable = false;
  double lrScale = 1, weightDecayScale = 1;
  /// For params and buffers: the @forward argument; for the others: the
  /// state entry they belong to (the parameter or buffer).
  int source = -1;
  /// A bias the step no longer uses: the running mean it folds into.
  std::string foldedInto;
  /// A parameter that trains for its first that many epochs only (0: all).
  int64_t trainEpochs = 0;
  /// A parameter with train_epochs in the step built after its epochs
  /// (tcc-frozen-step): a constant of the backward, no gradient, no update.
  bool frozen = false;
  /// This rank's chunk of a sharded tensor of this shape (an optimizer
  /// slot under train.distributed.shard; with "parameters" also the
  /// trainable parameters and their EMA and Lookahead copies); empty: the
  /// whole tensor.
  SmallVector<int64_t> shardOf;
};

/// The recipe and the state layout both step functions share.
struct StepPlan {
  func::FuncOp forward, loss;
  ::tcc::rt::TrainRecipe train; ///< the module's tcc.train
  ::tcc::rt::EvalRecipe eval;   ///< the module's tcc.eval
  std::vector<StateEntry> state;
  int inputArg = 0, seedArg = -1; ///< @forward arguments

  /// Index of the state entry called `name`, or -1.
  int find(StringRef name) const;
  /// The state indices of the buffers (batch-norm running statistics).
  SmallVector<int> bufferIndices() const;
  /// The state entries' types and argument attributes; `whole`: each
  /// sharded parameter and EMA copy whole and marked tcc.gathered (the
  /// evaluation's, with sharded parameters).
  void appendStateArgs(SmallVectorImpl<Type> &types, SmallVectorImpl<Attribute> &attrs,
                       MLIRContext *ctx, bool whole = false) const;
  /// Whether the trainable parameters are chunks (shard "parameters").
  bool shardsParameters() const {
    return train.distributed.sharded() &&
           train.distributed.shard == ::tcc::rt::Distributed::Parameters;
  }

private:
  /// find's index of the first `indexed` entries' names (entries are only
  /// appended): a scan per lookup was quadratic in the parameters.
  mutable llvm::StringMap<int> byName;
  mutable size_t indexed = 0;
};

/// Reads the recipe and lays out the state. Fails with an error on the
/// module if @forward, @loss or the recipe is missing or malformed.
FailureOr<StepPlan> planSteps(ModuleOp module);

/// Clones @forward's ops at the builder with its arguments replaced by
/// `args`, re-inferring every result type so the batch size may differ.
/// In eval mode batch_norm uses the running statistics (tcc.batch_norm_inference)
/// and dropout is the identity. Returns the values @forward returns.
FailureOr<SmallVector<Value>> inlineForward(OpBuilder &builder,
                                            func::FuncOp forward,
                                            ArrayRef<Value> args, bool evalMode);

/// Clones the single-block function `fn` with its arguments replaced;
/// returns the returned values.
SmallVector<Value> inlineFunction(OpBuilder &builder, func::FuncOp fn,
                                  ArrayRef<Value> args);

/// A 0-d tensor constant.
Value scalarConstant(OpBuilder &builder, Location loc, Type elementType,
                     double value);

/// Builds the training step `name` (BuildTrainStep.cpp): @train_step, or
/// with the `frozen` entries of `plan` left out of AD and the updates,
/// @train_step_frozen (tcc-frozen-step).
LogicalResult buildTrainStep(ModuleOp module, StepPlan &plan, StringRef name);

/// Builds @eval_step, with TTA @eval_step_plain, and for a token model
/// @predict_step (BuildEvalStep.cpp).
LogicalResult buildEvalStep(ModuleOp module, StepPlan &plan);

} // namespace mlir::tcc

#endif // TCC_PASSES_STEPBUILDER_H
