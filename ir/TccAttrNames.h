//===- TccAttrNames.h - Names of tcc's discardable attributes ---*- C++ -*-===//
//
// The attributes that passes put on ops, functions and the module for later
// passes and the code generators to read, named once. docs/ir.md says what
// each holds.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_TCCATTRNAMES_H
#define TCC_IR_TCCATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::tcc {

//===----------------------------------------------------------------------===//
// The memory plan (tcc-plan-memory, passes/PlanMemory.cpp)
//===----------------------------------------------------------------------===//

/// On the module: the state arena, one offset per `tcc.state` argument of
/// @train_step in argument order (dense i64 array), and its size (i64).
inline constexpr llvm::StringLiteral kStateOffsetsAttr = "tcc.state_offsets";
inline constexpr llvm::StringLiteral kStateBytesAttr = "tcc.state_bytes";
/// On each step function: the size of its scratch arena (i64).
inline constexpr llvm::StringLiteral kScratchBytesAttr = "tcc.scratch_bytes";
/// On each planned op: the scratch offset of each result, -1 for none (dense
/// i64 array). A tcc.flatten or tcc.reshape whose entry equals its input's
/// is a view: it shares the input's bytes and needs no copy.
inline constexpr llvm::StringLiteral kOffsetsAttr = "tcc.offsets";
/// On ops that update state in place: the state slot of each result, -1 for
/// none (dense i64 array).
inline constexpr llvm::StringLiteral kStateSlotsAttr = "tcc.state_slots";
/// Set by a target before planning: the scratch bytes an op needs for
/// itself while it runs (a cuDNN or cuBLASLt workspace; i64).
inline constexpr llvm::StringLiteral kWorkspaceBytesAttr = "tcc.workspace_bytes";
/// Set by the plan on each op with a non-zero `tcc.workspace_bytes`: where
/// that workspace starts in the scratch arena (i64).
inline constexpr llvm::StringLiteral kWorkspaceOffsetAttr = "tcc.workspace_offset";

//===----------------------------------------------------------------------===//
// The step functions' arguments and results (tcc-build-train-step)
//===----------------------------------------------------------------------===//

/// The checkpoint name of a state argument, or of the state tensor a result
/// is the new value of (string).
inline constexpr llvm::StringLiteral kStateAttr = "tcc.state";
/// What a state argument is: "counter", "param", "buffer", "optimizer",
/// "lookahead" or "ema" (string).
inline constexpr llvm::StringLiteral kKindAttr = "tcc.kind";
/// What a non-state argument or result is (string). Arguments: "input",
/// "labels", "steps_per_epoch", "total_steps", "seed" (@train_step;
/// passes/BuildTrainStep.cpp), "input", "labels", "valid" (@eval_step;
/// passes/BuildEvalStep.cpp). Results: "loss_sum", "correct" (@train_step),
/// "correct" (@eval_step). @forward's (frontend): "input", "seed", "output".
inline constexpr llvm::StringLiteral kRoleAttr = "tcc.role";

/// The values of kRoleAttr.
namespace role {
inline constexpr llvm::StringLiteral kInput = "input";   ///< the batch of images
inline constexpr llvm::StringLiteral kLabels = "labels"; ///< its labels
inline constexpr llvm::StringLiteral kStepsPerEpoch = "steps_per_epoch";
inline constexpr llvm::StringLiteral kTotalSteps = "total_steps";
inline constexpr llvm::StringLiteral kSeed = "seed";     ///< the run's seed
inline constexpr llvm::StringLiteral kValid = "valid";   ///< real samples of an eval batch
inline constexpr llvm::StringLiteral kLossSum = "loss_sum"; ///< result: the batch's summed loss
inline constexpr llvm::StringLiteral kCorrect = "correct";  ///< result: correct predictions
inline constexpr llvm::StringLiteral kOutput = "output";    ///< @forward's logits
} // namespace role

/// The values of kKindAttr.
namespace kind {
inline constexpr llvm::StringLiteral kCounter = "counter"; ///< the step counter
inline constexpr llvm::StringLiteral kParam = "param";
inline constexpr llvm::StringLiteral kBuffer = "buffer";   ///< e.g. BN running statistics
inline constexpr llvm::StringLiteral kOptimizer = "optimizer";
inline constexpr llvm::StringLiteral kLookahead = "lookahead";
inline constexpr llvm::StringLiteral kEma = "ema";
} // namespace kind

//===----------------------------------------------------------------------===//
// The frontend's IR (frontend/ImportModel.cpp)
//===----------------------------------------------------------------------===//

/// On the module: the model's name (string), classes (i64), per-sample
/// input shape (dense i64 array), and the recipe sections of model.json,
/// defaults filled (dictionaries).
inline constexpr llvm::StringLiteral kModelAttr = "tcc.model";
inline constexpr llvm::StringLiteral kClassesAttr = "tcc.classes";
inline constexpr llvm::StringLiteral kInputShapeAttr = "tcc.input_shape";
inline constexpr llvm::StringLiteral kTrainAttr = "tcc.train";
inline constexpr llvm::StringLiteral kDataAttr = "tcc.data";
inline constexpr llvm::StringLiteral kEvalAttr = "tcc.eval";
/// On @forward's arguments: a parameter's or buffer's state_dict name
/// (string), how it starts (dictionary: kind and its values), whether it
/// trains (bool), and its parameter group's scales (f64).
inline constexpr llvm::StringLiteral kParamAttr = "tcc.param";
inline constexpr llvm::StringLiteral kBufferAttr = "tcc.buffer";
inline constexpr llvm::StringLiteral kInitAttr = "tcc.init";
inline constexpr llvm::StringLiteral kTrainableAttr = "tcc.trainable";
inline constexpr llvm::StringLiteral kLrScaleAttr = "tcc.lr_scale";
inline constexpr llvm::StringLiteral kWeightDecayScaleAttr = "tcc.weight_decay_scale";

} // namespace mlir::tcc

#endif // TCC_IR_TCCATTRNAMES_H
