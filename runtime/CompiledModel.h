//===- CompiledModel.h - The contract between generated code and the trainer //
//
// `tcc compile` generates one source file that defines a CompiledModel (the
// training and evaluation steps, walked from the scheduled, memory-planned
// IR) and `tccCreateModel()`. The trainer program (runtime/trainer/) links it
// and owns everything else: data, initialisation, checkpoints, metrics, the
// command line. Plain C++; no MLIR.
//
// Memory: all persistent tensors live in one "state" arena (parameters,
// buffers, optimizer state, EMA weights, the step counter), laid out by the
// compiler and described by ModelInfo::state; temporaries, the batch among
// them, live in a "scratch" arena of ModelInfo::scratchBytes. The trainer
// allocates both, the StepControl block and the resident data set (host
// memory for the cpu target, device memory for cuda) and binds them once
// (StepBuffers); docs/step-contract.md describes the contract.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMPILEDMODEL_H
#define TCC_RUNTIME_COMPILEDMODEL_H

#include <cstddef>
#include "runtime/Recipe.h"
#include "runtime/common/Batch.h"
#include "runtime/common/Schedule.h"
#include "runtime/StepProfile.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcc::rt {

class Communicator;

enum class DType { F32, F16, BF16, I64, U8 };

/// Size in bytes of one element.
size_t dtypeSize(DType type);
/// "F32", "BF16", ... as safetensors spells them.
const char *dtypeName(DType type);

enum class StateRole {
  Parameter,      ///< a model parameter (state_dict name)
  Buffer,         ///< a model buffer such as bn1.running_mean
  OptimizerState, ///< e.g. "optimizer.conv1.weight.momentum_buffer"
  Ema,            ///< e.g. "ema.conv1.weight": averaged weights for evaluation
  Counter,        ///< "step": optimizer steps taken (i64 scalar)
};

/// How a state tensor starts (before --init or --resume).
struct InitDesc {
  /// constant (a = value), uniform (a = low, b = high), normal (a = mean,
  /// b = std), dirac (uniform(a, b), then identity filters),
  /// patch_whitening (computed from the training data), copy (of the tensor
  /// named `source`, e.g. EMA weights start as the parameters).
  std::string kind = "constant";
  double a = 0, b = 0;
  std::string source;
  /// patch_whitening: a = eps, b = the number of training images, c = the
  /// covariance's delta degrees of freedom (0: divide by n, 1: by n - 1).
  double c = 0;
  /// >= 0: after the draw, row zeroRow of the tensor ([rows, ...]) is set
  /// to 0, as torch.nn.Embedding does its padding_idx's.
  int64_t zeroRow = -1;
};

struct StateTensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  StateRole role = StateRole::Parameter;
  bool trainable = false;
  InitDesc init;
  size_t offset = 0; ///< bytes from the start of the state arena
  /// A bias the step does not use (a batch norm's batch statistics cancel
  /// it; tcc-bn-bias-elimination): the running mean a loaded nonzero value
  /// is folded into. Empty otherwise.
  std::string foldedInto;
  /// This rank's chunk ([ceil(n / ranks)], `shape`) of a sharded tensor
  /// of this whole shape (train.distributed.shard), which checkpoints hold
  /// whole; empty: not sharded.
  std::vector<int64_t> shardOf;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t numBytes() const { return numElements() * dtypeSize(dtype); }
};

/// Where a model's arenas and batches live, which decides the trainer's
/// memory provider (Trainer.h's tccDeviceMemory for Device).
enum class MemoryKind { Host, Device };

struct ModelInfo {
  std::string name;
  std::string target;              ///< "cpu" | "cuda": for messages and profiles
  MemoryKind memory = MemoryKind::Host;
  std::vector<int64_t> inputShape; ///< per sample, e.g. {1, 28, 28}
  int64_t classes = 0;
  /// A token input: integer ids in [0, vocab) (0: not a token input).
  int64_t vocab = 0;
  /// Sequence targets: T classes per sample, each in [0, classes) or
  /// ignoreIndex (0: one class per sample).
  int64_t sequenceTargets = 0;
  int64_t ignoreIndex = -100;
  int64_t batchSize = 0;           ///< samples per train step of this rank (all its micro-batches)
  int64_t evalBatchSize = 0;       ///< samples per eval step
  std::vector<StateTensor> state;
  size_t stateBytes = 0;
  size_t scratchBytes = 0;
  /// The model.json sections train, data and eval, every default filled:
  /// the trainer reads epochs, seed, data set, augmentation from here.
  Recipe recipe;
  /// Identifies the architecture (names, shapes, dtypes of the state); a
  /// checkpoint with another fingerprint is refused.
  uint64_t fingerprint = 0;
  /// The step's learning rate: baseLr * lrFactor(schedule, ...) (the
  /// tcc.lr_schedule op's), for the metrics; baseLr 0 where the step has
  /// none.
  double baseLr = 0;
  ScheduleDesc schedule;
  /// From step frozenFromEpoch * stepsPerEpoch on the trainer runs
  /// trainStepFrozen() instead of trainStep(); 0: trainStep() throughout.
  int64_t frozenFromEpoch = 0;
  /// Samples of one predictStep() (a token model on a target that emits
  /// it: the cpu target); 0: the model has no predictStep().
  int64_t predictBatch = 0;
};

/// What the steps add up on the device since the last resetTotals().
struct StepTotals {
  double lossSum = 0;  ///< sum over samples of the per-sample loss
  int64_t correct = 0; ///< samples whose argmax matches the label
  int64_t count = 0;   ///< samples seen
  // (Sequence targets: per position that is not ignore_index, throughout.)
};

/// Values constant for a whole run that the step reads.
struct RunConstants {
  int64_t stepsPerEpoch = 0;
  int64_t totalSteps = 0;
  uint64_t seed = 0; ///< the run's --seed: data order, augmentation, dropout
  /// A distributed run (docs/distributed.md): this process trains slice
  /// `rank` of `ranks` equal slices of each global batch.
  int64_t rank = 0, ranks = 1;
  /// The micro-batches of a step (train.accumulate): each is split over
  /// the ranks (batch::globalSlot).
  int64_t microBatches = 1;
};

/// The block of device memory the steps read and write besides the arenas:
/// the trainer writes `run` before bind(); the steps keep the rest.
struct StepControl {
  RunConstants run;
  StepTotals totals;     ///< added to by every step since resetTotals()
  int64_t evalBatch = 0; ///< the test batch the next evalStep() evaluates
  int64_t valid = 0;     ///< real samples in the batch being processed (sequence
                         ///< targets: its positions that are not ignore_index)
};

/// The test batch the next evaluation step reads: batch `evalBatch` of
/// this rank's, which are every `ranks`-th from its own (docs/distributed.md).
TCC_HOST_DEVICE inline int64_t evalBatchIndex(const StepControl *control) {
  return control->evalBatch * control->run.ranks + control->run.rank;
}

/// One split of the data set, resident where the step runs.
struct DataView {
  const void *pixels = nullptr;    ///< [n, c, h, w]: uint8 or float32
  bool isFloat = false;            ///< pixels are float32 (else uint8)
  const int64_t *labels = nullptr; ///< [n, BatchSpec::targets]
  int64_t n = 0;
};

/// How samples become the batch a step trains on
/// (runtime/common/Batch.h).
struct BatchSpec {
  int64_t c = 0, h = 0, w = 0;  ///< the image shape of both splits
  AugmentConfig augment;        ///< training samples only
  bool shuffle = true;          ///< a new order every epoch (CounterRng.h)
  bool augmentOn = true;        ///< false: --no-augment
  /// Targets per sample: 1 class, or T of sequence targets, where the
  /// gather sets StepControl::valid to the positions that are not
  /// ignoreIndex (the per-token metrics' count) and pads with ignoreIndex.
  int64_t targets = 1;
  bool sequence = false;
  int64_t ignoreIndex = -100;
  /// [c] each, resident: normalisation (x - mean[c]) / std[c].
  const float *mean = nullptr, *std = nullptr;
};

/// What predictStep() reads and writes (tcc sample): host memory on the cpu
/// target. Unused by the other steps.
struct PredictBuffers {
  /// [predictBatch, inputShape...] token ids in [0, vocab), written by the host.
  const int64_t *tokens = nullptr;
  /// [predictBatch, output...] the logits (a language model's [.., T, vocab]).
  float *logits = nullptr;
};

/// A tensor of the evaluation's whole state (StepBuffers::wholeState) that
/// the arena holds as this rank's chunk: gathered in place, every rank's
/// chunk one after the other from `wholeOffset` on (the last chunk's
/// padding past the whole tensor included).
struct GatheredTensor {
  size_t chunkOffset = 0; ///< this rank's chunk in the arena
  size_t chunkBytes = 0;  ///< ceil(n / ranks) elements, zero past n
  size_t wholeOffset = 0; ///< the whole tensor in the whole state
};

/// Everything a step touches, bound once (pointers into the target's
/// memory: host memory for the cpu target, device memory for cuda). None
/// of it is copied: it must outlive every step.
struct StepBuffers {
  void *state = nullptr;   ///< ModelInfo::stateBytes
  void *scratch = nullptr; ///< ModelInfo::scratchBytes
  /// With sharded parameters (train.distributed.shard "parameters"): the
  /// arena's bytes, then the parameters and EMA copies whole
  /// (runtime/trainer/ShardedState.h's wholeStateInfo(info, evaluated)),
  /// which the trainer gathers before an evaluation and binds for it; the
  /// evaluation steps read it instead of `state`. Null otherwise.
  void *wholeState = nullptr;
  DataView train, test;
  BatchSpec batch;
  StepControl *control = nullptr;
  /// The other ranks, for the step's collectives (tcc.all_reduce); null in
  /// a step that has none.
  Communicator *comm = nullptr;
  PredictBuffers predict;
};

/// What bind() throws when the model cannot run where it was started (no
/// GPU, a GPU or a cuDNN its plans were not made for): the trainer prints
/// the message as its one error line, so it says what and how to fix it.
struct ModelSetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The step contract. The host binds the buffers once, then calls
/// trainStep() and evalStep() with nothing else: the step counter, the
/// learning rate, the EMA cadence, which batch to gather and the metric
/// sums all live in device memory and are computed inside the step, so a
/// device target can replay a captured step (one CUDA graph) without
/// synchronising with the host. The host reads the totals at the points it
/// reports them (readTotals(), a synchronisation on a device).
class CompiledModel {
public:
  virtual ~CompiledModel() = default;
  virtual const ModelInfo &info() const = 0;

  /// Binds the buffers every later call uses.
  virtual void bind(const StepBuffers &buffers) = 0;

  /// Sharded parameters: the whole state the evaluation steps read from
  /// now on (StepBuffers::wholeState; null after the evaluation). Changes
  /// nothing else bind() bound, so a device target keeps its recorded
  /// training step, its stream and its library plans.
  virtual void bindWholeState(void *wholeState) = 0;

  /// Sharded parameters, gathered where the model's memory is: the arena's
  /// first `arenaBytes` bytes copied into `wholeState`, then each of
  /// `tensors` gathered in place, in their order (ascending wholeOffset: a
  /// gather's padding lands where a later one writes, or in the room past
  /// the whole state that `wholeState` has). A collective. False (the
  /// default): a model whose memory is the host's (the cpu target) leaves
  /// the gather to the trainer.
  virtual bool gatherWholeState(void *wholeState, size_t arenaBytes,
                                const std::vector<GatheredTensor> &tensors) {
    (void)wholeState, (void)arenaBytes, (void)tensors;
    return false;
  }

  /// One optimizer step: gathers batch `step % stepsPerEpoch` of epoch
  /// `step / stepsPerEpoch` (the state's step counter) from the training
  /// split, augmented; forward, loss, backward, update, schedule, EMA; adds
  /// the batch's loss, correct predictions and samples to the totals.
  virtual void trainStep() = 0;

  /// The training step once the parameters with `train_epochs` have
  /// stopped training (ModelInfo::frozenFromEpoch): trainStep() without
  /// their gradients, the backward work only those needed and their
  /// updates, which trainStep() skips by then. The same state afterwards.
  virtual void trainStepFrozen() { trainStep(); }

  /// Evaluates test batch `evalBatch` (then advances it) with the running
  /// BN statistics (and the EMA weights if the recipe has EMA), averaging the
  /// logits over the recipe's TTA views, and adds its real samples (the last
  /// batch is padded) to the totals.
  virtual void evalStep() = 0;

  /// Whether evalStep() averages TTA views (the recipe's eval.tta); then
  /// evalStepWithoutTta() evaluates the plain images, as evalStep() does
  /// otherwise (./train --tta off).
  virtual bool hasTta() const { return false; }
  virtual void evalStepWithoutTta() { evalStep(); }

  /// A token model's forward only (ModelInfo::predictBatch > 0): the
  /// evaluation's forward (running statistics, no dropout, the EMA weights
  /// if the recipe has EMA, no TTA) on the bound PredictBuffers::tokens,
  /// writing PredictBuffers::logits; the totals are not touched.
  /// By default (no predict step) it throws a ModelSetupError that says so
  /// (runtime/trainer/CompiledModel.cpp).
  virtual void predictStep();

  /// The totals since the last resetTotals().
  virtual StepTotals readTotals() = 0;
  /// Returns once the steps queued so far have run: before the host copies
  /// the state, a device target of several ranks waits here against its
  /// collective timeout (Communicator::awaitDevice) rather than in a copy
  /// that cannot time out. Others have nothing queued.
  virtual void awaitSteps() {}
  /// Zeroes the totals and rewinds evalBatch to the first test batch.
  virtual void resetTotals() = 0;

  /// ./train --profile: from now on every trainStep() also times each of
  /// its ops (runtime/StepProfile.h); a device target then runs the step's
  /// launches one by one instead of replaying its graph, and waits for
  /// each step. The step computes the same numbers. False if this model
  /// has no op sites to time (a model not generated by tcc).
  virtual bool startProfiling() { return false; }
  /// The profiled steps' time per site, in the order the step runs them.
  virtual std::vector<OpTime> profile() const { return {}; }
};

} // namespace tcc::rt

/// Defined by the generated source.
extern "C" tcc::rt::CompiledModel *tccCreateModel();

#endif // TCC_RUNTIME_COMPILEDMODEL_H
