//===- Checkpoint.h - Save and load the state arena -----------*- C++ -*-===//
//
// A checkpoint is a .safetensors file holding every tensor of
// ModelInfo::state under its own name: parameters and buffers under their
// PyTorch state_dict names, optimizer state as "optimizer.<param>.<slot>",
// EMA weights as "ema.<param>", the step counter as "step". Its
// __metadata__ holds:
//
//   format       "pt" (what safetensors.torch writes; some loaders want it)
//   producer     "tcc"
//   model        the model's name
//   fingerprint  ModelInfo::fingerprint, 16 hex digits
//   epoch        completed epochs (integer: step / steps per epoch)
//   step         optimizer steps taken
//   seed         the run's seed
//   epochs       the run's epoch count (may be fractional)
//   total_steps  ceil(epochs * steps per epoch)
//   precision    the recipe's train.precision (fp32, bf16-mixed, bf16, ...)
//   shuffle      "true", or "false" for a --no-shuffle run
//
// Values: a checkpoint never holds NaN or infinity. saveCheckpoint refuses
// to write such a state (the file at the path keeps its previous contents),
// and --resume / --init refuse such a file, naming the tensor.
//
// PyTorch compatibility: for every buffer "X.running_mean" whose model has
// no "X.num_batches_tracked", the file also gets "X.num_batches_tracked", an
// I64 scalar equal to the step count, so that a batch-norm module's strict
// load_state_dict finds every key. The rest of a checkpoint (optimizer.*,
// ema.*, step) is not part of a PyTorch state_dict; load it with
//
//   sd = safetensors.torch.load_file("ckpt.safetensors")
//   model.load_state_dict({k: v for k, v in sd.items()
//                          if not k.startswith(("optimizer.", "ema."))
//                          and k != "step"})
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_CHECKPOINT_H
#define TCC_RUNTIME_TRAINER_CHECKPOINT_H

#include "runtime/CompiledModel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

struct CheckpointMeta {
  std::string model;
  uint64_t fingerprint = 0;
  int64_t epoch = 0;
  int64_t step = 0;
  uint64_t seed = 0;
  double epochs = 0;      ///< 0 when the file does not say
  int64_t totalSteps = 0; ///< 0 when the file does not say
  std::string precision;  ///< empty when the file does not say
  bool shuffle = true;    ///< true when the file does not say
};

/// Index of the first NaN or infinite element among the `count` elements of
/// `dtype` at `data`, or -1 (always -1 for the integer dtypes).
int64_t firstNonFinite(DType dtype, const void *data, int64_t count);

/// The first state tensor of `state` that holds a NaN or an infinity, with
/// a description such as "fc.weight holds nan (element 3)"; empty if none.
std::string nonFiniteStateTensor(const ModelInfo &info, const void *state);

/// Writes the host copy of the state arena `state` (ModelInfo::stateBytes
/// bytes laid out as info.state says) atomically to `path`. Refuses (false,
/// `path` untouched) a state with a non-finite value.
bool saveCheckpoint(const std::string &path, const ModelInfo &info,
                    const void *state, const CheckpointMeta &meta,
                    std::string &error);

/// --resume: the file must be a tcc checkpoint of this very model (same
/// fingerprint, every name, shape and dtype; its metadata names this model
/// and its step agrees with the tensor "step"), with finite values. Fills every state tensor and
/// `meta`; on failure leaves `state` untouched and sets `error` to e.g.
///   FILE: checkpoint of model 'X' does not match this trainer's model 'Y'
///   (tensor conv1.weight has shape [..] here, [..] in the file)
/// naming both precisions when they differ. A file larger than any
/// checkpoint of this model can be is refused unread.
bool loadCheckpoint(const std::string &path, const ModelInfo &info,
                    void *state, CheckpointMeta &meta, std::string &error);

/// --init: loads a PyTorch-style state_dict. Every parameter and buffer of
/// the model must be in the file with the same shape and dtype; names the
/// model does not know are an error naming the closest valid name;
/// "*.num_batches_tracked" entries the model does not have are ignored, and
/// so are the model's own optimizer/EMA/step entries (when the file is a tcc
/// checkpoint): optimizer state and the counter keep their initialization.
/// A float tensor of another float type (F32, F16, BF16) is rounded to the
/// model's; `converted` (optional) receives "name (F32 to F16)" for each.
/// The tensors copied must hold finite values, after rounding too.
/// On failure leaves `state` untouched. `loaded` (optional) receives the
/// names of the tensors copied.
bool loadStateDict(const std::string &path, const ModelInfo &info,
                   void *state, std::vector<std::string> *loaded,
                   std::string &error,
                   std::vector<std::string> *converted = nullptr);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_CHECKPOINT_H
