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
// compiler and described by ModelInfo::state; temporaries live in a
// "scratch" arena of ModelInfo::scratchBytes. Both are allocated by the
// trainer (host memory for the cpu target, device memory for cuda).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMPILEDMODEL_H
#define TCC_RUNTIME_COMPILEDMODEL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

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
};

struct StateTensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  StateRole role = StateRole::Parameter;
  bool trainable = false;
  InitDesc init;
  size_t offset = 0; ///< bytes from the start of the state arena

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t numBytes() const { return numElements() * dtypeSize(dtype); }
};

struct ModelInfo {
  std::string name;
  std::string target;              ///< "cpu" | "cuda"
  std::vector<int64_t> inputShape; ///< per sample, e.g. {1, 28, 28}
  int64_t classes = 0;
  int64_t batchSize = 0;           ///< samples per train step (micro-batch)
  int64_t evalBatchSize = 0;       ///< samples per eval step
  std::vector<StateTensor> state;
  size_t stateBytes = 0;
  size_t scratchBytes = 0;
  /// The model.json sections train, data and eval, normalised (every
  /// default filled), as JSON text: the trainer reads epochs, data paths,
  /// augmentation, TTA from here.
  std::string recipeJson;
  /// Identifies the architecture (names, shapes, dtypes of the state); a
  /// checkpoint with another fingerprint is refused.
  uint64_t fingerprint = 0;
};

/// What a step adds up on the device; the host reads it once per epoch.
struct StepTotals {
  double lossSum = 0;  ///< sum over samples of the per-sample loss
  int64_t correct = 0; ///< samples whose argmax matches the label
  int64_t count = 0;   ///< samples seen
};

/// Values that are constant for a whole run and that the step's schedule
/// needs; set once before the first step.
struct RunConstants {
  int64_t stepsPerEpoch = 0;
  int64_t totalSteps = 0;
  uint64_t seed = 0; ///< the run's --seed (dropout masks derive from it)
};

class CompiledModel {
public:
  virtual ~CompiledModel() = default;
  virtual const ModelInfo &info() const = 0;

  /// One optimizer step (forward, loss, backward, update, schedule, EMA) on
  /// `images` ([batchSize, C, H, W], normalised f32) and `labels`
  /// ([batchSize] i64). Reads and updates the state arena in place.
  virtual void trainStep(void *state, void *scratch, const RunConstants &run,
                         const float *images, const int64_t *labels,
                         StepTotals &totals) = 0;

  /// Evaluation of one batch with the running BN statistics (and EMA weights
  /// if the recipe has EMA), averaging the logits over the recipe's TTA
  /// views. Only the first `valid` samples count (the last batch is padded).
  virtual void evalStep(void *state, void *scratch, const float *images,
                        const int64_t *labels, int64_t valid,
                        StepTotals &totals) = 0;
};

} // namespace tcc::rt

/// Defined by the generated source.
extern "C" tcc::rt::CompiledModel *tccCreateModel();

#endif // TCC_RUNTIME_COMPILEDMODEL_H
