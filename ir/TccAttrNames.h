//===- TccAttrNames.h - Names of tcc's discardable attributes ---*- C++ -*-===//
//
// The attributes that the frontend and the passes put on the module, on
// functions, their arguments and results, and on ops, for later passes, the
// code generators and the report to read: every `tcc.*` discardable attribute
// name, and the string values of `tcc.role` and `tcc.kind`, named once.
// docs/ir.md says what each holds.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_TCCATTRNAMES_H
#define TCC_IR_TCCATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::tcc {

//===----------------------------------------------------------------------===//
// The frontend's IR (frontend/ImportModel.cpp, frontend/ModelImporter.cpp)
//===----------------------------------------------------------------------===//

/// On the module: the model's name (string).
inline constexpr llvm::StringLiteral kModelAttr = "tcc.model";
/// On the module: the number of classes of the model's output (i64).
inline constexpr llvm::StringLiteral kClassesAttr = "tcc.classes";
/// On the module: the shape of one input sample, no batch dim (dense i64 array).
inline constexpr llvm::StringLiteral kInputShapeAttr = "tcc.input_shape";
/// On the module of a token input: its ids are in [0, vocab).
inline constexpr llvm::StringLiteral kVocabAttr = "tcc.vocab";
/// On the module of sequence targets: positions per sample (T), and the
/// target value that counts nowhere.
inline constexpr llvm::StringLiteral kSequenceTargetsAttr = "tcc.sequence_targets";
inline constexpr llvm::StringLiteral kIgnoreIndexAttr = "tcc.ignore_index";
/// On the module: model.json's `train` section, defaults filled (dictionary).
inline constexpr llvm::StringLiteral kTrainAttr = "tcc.train";
/// On the module: model.json's `data` section, defaults filled (dictionary).
inline constexpr llvm::StringLiteral kDataAttr = "tcc.data";
/// On the module: model.json's `eval` section, defaults filled (dictionary).
inline constexpr llvm::StringLiteral kEvalAttr = "tcc.eval";
/// On a parameter argument of @forward: its state_dict name (string).
inline constexpr llvm::StringLiteral kParamAttr = "tcc.param";
/// On a buffer argument of @forward and on the result that is its new value:
/// the buffer's state_dict name (string).
inline constexpr llvm::StringLiteral kBufferAttr = "tcc.buffer";
/// On @forward's parameter and buffer arguments, then on the step functions'
/// state arguments: how the tensor starts (dictionary: `kind` and its values).
inline constexpr llvm::StringLiteral kInitAttr = "tcc.init";
/// On @forward's parameter arguments, then on the step functions' `param`
/// state arguments: false for no gradient and no update (bool).
inline constexpr llvm::StringLiteral kTrainableAttr = "tcc.trainable";
/// On @forward's parameter arguments: a parameter that trains for its first
/// that many epochs only, then stays frozen (model.json's `train_epochs`;
/// i64, absent for the whole run).
inline constexpr llvm::StringLiteral kTrainEpochsAttr = "tcc.train_epochs";
/// The training step after the parameters with `train_epochs` have stopped
/// training (tcc-frozen-step): they are constants of its backward.
inline constexpr llvm::StringLiteral kFrozenStepName = "train_step_frozen";
/// A token model's forward-only entry (tcc-build-train-step): eval-mode
/// logits of one sequence, for `tcc sample` (docs/step-contract.md).
inline constexpr llvm::StringLiteral kPredictStepName = "predict_step";
/// On @train_step_frozen: the epoch from which the trainer runs it instead
/// of @train_step, the largest `train_epochs` (i64).
inline constexpr llvm::StringLiteral kFrozenFromEpochAttr = "tcc.frozen_from_epoch";
/// On @train_step_frozen: the parameters it leaves out (array of strings).
inline constexpr llvm::StringLiteral kFrozenParamsAttr = "tcc.frozen_params";
/// On @forward's parameter arguments: the learning-rate scale of the
/// parameter's optimizer group (f64).
inline constexpr llvm::StringLiteral kLrScaleAttr = "tcc.lr_scale";
/// On @forward's parameter arguments: the weight-decay scale of the
/// parameter's optimizer group (f64).
inline constexpr llvm::StringLiteral kWeightDecayScaleAttr = "tcc.weight_decay_scale";
/// On a bias that tcc-bn-bias-elimination removed from the step (@forward's
/// argument, then the state argument): the state_dict name of the running
/// mean of the batch norm that cancels it. A loaded nonzero bias is folded
/// into that running mean (string).
inline constexpr llvm::StringLiteral kFoldedIntoAttr = "tcc.folded_into";
/// On a state argument that is this rank's chunk of a sharded tensor
/// (train.distributed.shard): the whole tensor's shape, as checkpoints hold it.
inline constexpr llvm::StringLiteral kShardOfAttr = "tcc.shard_of";
/// On a state argument of the evaluation step of sharded parameters
/// (shard "parameters"): the tensor whole, read from the whole state the
/// trainer gathers before each evaluation (StepBuffers::wholeState), not
/// from the state arena (unit).
inline constexpr llvm::StringLiteral kGatheredAttr = "tcc.gathered";
/// On a tcc.all_gather of sharded parameters before their reads in the
/// forward ("forward") or the backward ("backward") (string;
/// tcc-gather-parameters places them).
inline constexpr llvm::StringLiteral kGatherForAttr = "tcc.gather_for";

//===----------------------------------------------------------------------===//
// The step functions (tcc-build-train-step: passes/StepPlan.cpp,
// passes/BuildTrainStep.cpp, passes/BuildEvalStep.cpp)
//===----------------------------------------------------------------------===//

/// On a state argument of @train_step or @eval_step: its checkpoint name; on a
/// result of @train_step: the name of the state tensor it is the new value of
/// (string).
inline constexpr llvm::StringLiteral kStateAttr = "tcc.state";
/// On a state argument of @train_step or @eval_step: what the tensor is, one
/// of the kind:: values (string).
inline constexpr llvm::StringLiteral kKindAttr = "tcc.kind";
/// On a non-state argument or result of @forward, @train_step or @eval_step:
/// what the value is, one of the role:: values (string).
inline constexpr llvm::StringLiteral kRoleAttr = "tcc.role";

/// The values of kRoleAttr, and the functions whose arguments or results
/// carry each.
namespace role {
/// Argument of @forward, @train_step and @eval_step: the batch of samples.
inline constexpr llvm::StringLiteral kInput = "input";
/// Argument of @train_step and @eval_step: the batch's class labels.
inline constexpr llvm::StringLiteral kLabels = "labels";
/// Argument of @train_step: optimizer steps per epoch, for the schedule.
inline constexpr llvm::StringLiteral kStepsPerEpoch = "steps_per_epoch";
/// Argument of @train_step: optimizer steps in the run, for the schedule.
inline constexpr llvm::StringLiteral kTotalSteps = "total_steps";
/// Argument of @train_step, and of @forward if the model has dropout: the
/// run's seed (tensor<i64>).
inline constexpr llvm::StringLiteral kSeed = "seed";
/// Argument of @eval_step: how many samples of the batch are real.
inline constexpr llvm::StringLiteral kValid = "valid";
/// Result of @train_step: the loss summed over the batch.
inline constexpr llvm::StringLiteral kLossSum = "loss_sum";
/// Result of @train_step and @eval_step: the number of correct predictions.
inline constexpr llvm::StringLiteral kCorrect = "correct";
/// Result of @predict_step: the model's output (logits) for its input.
inline constexpr llvm::StringLiteral kLogits = "logits";
/// First result of @forward: the model's output.
inline constexpr llvm::StringLiteral kOutput = "output";
} // namespace role

/// The values of kKindAttr, on the state arguments of @train_step and
/// @eval_step, in the order the state lists them.
namespace kind {
/// The optimizer step counter, `step` (i64; the first state argument).
inline constexpr llvm::StringLiteral kCounter = "counter";
/// A model parameter (`tcc.param` of @forward).
inline constexpr llvm::StringLiteral kParam = "param";
/// A model buffer (`tcc.buffer` of @forward), e.g. BN running statistics.
inline constexpr llvm::StringLiteral kBuffer = "buffer";
/// An optimizer slot of a trainable parameter (momentum, Adam moments).
inline constexpr llvm::StringLiteral kOptimizer = "optimizer";
/// Lookahead's slow copy of a trainable parameter.
inline constexpr llvm::StringLiteral kLookahead = "lookahead";
/// The EMA copy of a parameter or buffer, which @eval_step evaluates.
inline constexpr llvm::StringLiteral kEma = "ema";
/// fp16 loss scaling's state (GradScaler's): `amp.loss_scale` (f32),
/// `amp.growth_tracker` and `amp.optimizer_steps` (i64: the steps the
/// optimizer applied, which bias corrections and SGD's first step count).
inline constexpr llvm::StringLiteral kAmp = "amp";
} // namespace kind

//===----------------------------------------------------------------------===//
// The collectives of a distributed step (tcc-build-train-step,
// tcc-bucket-collectives: passes/BucketCollectives.cpp)
//===----------------------------------------------------------------------===//

/// On a `tcc.all_reduce` or `tcc.reduce_scatter` (a sharded state's): it
/// sums the trainable parameters' gradients (tcc-build-train-step sets it
/// on the one it builds after the backward; each bucket
/// tcc-bucket-collectives splits it into, and each per-node reduce-scatter
/// of tcc-gather-parameters, keeps it). The running statistics' and a
/// synchronised batch norm's all-reduces have none (unit).
inline constexpr llvm::StringLiteral kGradientsAttr = "tcc.gradients";
/// On a gradient `tcc.all_reduce` or ZeRO-2 `tcc.reduce_scatter` that
/// tcc-bucket-collectives formed: the bucket's index, in the order the
/// buckets run (i64).
inline constexpr llvm::StringLiteral kBucketAttr = "tcc.bucket";
/// On a bucket: it runs on a stream of its own from its op to the first op
/// of its block that reads one of its results (sideStreamJoin,
/// ir/TccPlan.h), which waits for it; its inputs stay live until then. Set
/// by a target that overlaps the buckets with the backward
/// (tcc-cuda-overlap-buckets) (unit).
inline constexpr llvm::StringLiteral kSideStreamAttr = "tcc.side_stream";

//===----------------------------------------------------------------------===//
// The memory plan (tcc-plan-memory, passes/PlanMemory.cpp; ir/TccPlanAttrs.td,
// read and written through ir/TccPlan.h)
//===----------------------------------------------------------------------===//

/// On the module: the state arena (#tcc.state_arena: its bytes and the
/// offset of each `tcc.state` argument).
inline constexpr llvm::StringLiteral kStateArenaAttr = "tcc.state_arena";
/// On each planned function: its scratch arena (#tcc.scratch_arena).
inline constexpr llvm::StringLiteral kScratchArenaAttr = "tcc.scratch_arena";
/// On each planned op: where each result lives (#tcc.placement: a scratch
/// offset or a state slot).
inline constexpr llvm::StringLiteral kPlacementAttr = "tcc.placement";
/// On an op, set by a target before planning: the scratch it needs while it
/// runs, and where the plan put it (#tcc.workspace).
inline constexpr llvm::StringLiteral kWorkspaceAttr = "tcc.workspace";

//===----------------------------------------------------------------------===//
// Physical layout (tcc-channels-last, passes/ChannelsLast.cpp; ir/PhysicalLayout.h)
//===----------------------------------------------------------------------===//

/// On an op: its 4-d results are stored NHWC (channels last), their logical
/// shape still [n, c, h, w] (unit).
inline constexpr llvm::StringLiteral kChannelsLastAttr = "tcc.channels_last";

//===----------------------------------------------------------------------===//
// The optimization passes' report (passes/PassReport.h)
//===----------------------------------------------------------------------===//

/// On the module: what each optimization pass did, by pass name (dictionary
/// of dictionaries); `tcc compile --report` copies it.
inline constexpr llvm::StringLiteral kPassReportAttr = "tcc.pass_report";

//===----------------------------------------------------------------------===//
// The cuda target (tcc compile --target=cuda: codegen/cuda/CudaConvPlans.cpp)
//===----------------------------------------------------------------------===//

/// On the module: what the cuda target bakes into the trainer (dictionary:
/// `gpu`, `sm`, `cudnn_version`, `allow_fallback`, and `convs`, each
/// convolution problem's key with its cuDNN `plan`, `workspace_bytes` and
/// `nodes`).
inline constexpr llvm::StringLiteral kCudaTargetAttr = "tcc.cuda_target";

} // namespace mlir::tcc

#endif // TCC_IR_TCCATTRNAMES_H
