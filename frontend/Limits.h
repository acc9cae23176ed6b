//===- Limits.h - The largest sizes a model.json may ask for ----*- C++ -*-===//
//
// One place for the bounds that docs/model-format.md ("Limits") documents.
// Every size field is checked against them before any arithmetic uses it, so
// no product of sizes in the frontend, the passes or the trainer can
// overflow, and a value that is too large is reported at its field rather
// than as a wrong shape, an abort or a failure inside the trainer.
//
// Plain C++17, no LLVM: the runtime may share it.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_LIMITS_H
#define TCC_FRONTEND_LIMITS_H

#include <cstddef>
#include <cstdint>
#include <optional>

namespace tcc::frontend::limits {

/// Elements of one tensor (a parameter, an activation, a batch of inputs):
/// cuDNN and the generated kernels index a tensor with 32-bit integers.
constexpr int64_t kMaxTensorElements = (int64_t(1) << 31) - 1;
/// train.batch_size, eval.batch_size and the effective batch
/// batch_size * accumulate.
constexpr int64_t kMaxBatch = int64_t(1) << 20;
/// train.distributed.ranks: processes in one job.
constexpr int64_t kMaxRanks = 4096;
/// train.accumulate: the micro-batches run as one loop in the step; the
/// bound keeps the step's input (all micro-batches) a modest tensor.
constexpr int64_t kMaxAccumulate = 1024;
/// C of an image input [C, H, W]: data.normalize holds a value per channel.
constexpr int64_t kMaxInputChannels = int64_t(1) << 16;
/// kernel, stride, padding and dilation (the IR's own bound on windows).
constexpr int64_t kMaxWindow = int64_t(1) << 24;
/// out_channels, out_features and input.classes.
constexpr int64_t kMaxFeatures = int64_t(1) << 24;
/// An embedding's num_embeddings: token ids travel in the f32 batch, exact
/// below 2^24.
constexpr int64_t kMaxEmbeddings = int64_t(1) << 24;
/// train.epochs: keeps epochs * steps_per_epoch far inside an int64 count.
constexpr double kMaxEpochs = 1e6;
/// patch_whitening's `images`: the first that many training images.
constexpr int64_t kMaxWhiteningImages = int64_t(1) << 24;
/// A parameter's train_epochs (a whole number of epochs of the run).
constexpr int64_t kMaxTrainEpochs = 1000000;
/// Bytes of model.json; real models are a few KiB.
constexpr size_t kMaxModelBytes = size_t(64) << 20;
/// Characters of the model name (it becomes the file ./NAME).
constexpr size_t kMaxNameLength = 100;

/// Ends the message of a value above one of these limits.
inline constexpr const char *kLimitNote =
    " (a limit of tcc; see \"Limits\" in docs/model-format.md)";

/// a * b, or nullopt when it overflows int64.
inline std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

} // namespace tcc::frontend::limits

#endif // TCC_FRONTEND_LIMITS_H
