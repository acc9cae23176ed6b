//===- Batch.h - The step's gather of its batch, on the host -----*- C++ -*-===//
//
// The first thing a cpu step does: fill the batch buffers (in the scratch
// arena) from the bound, resident data set, sample by sample in parallel,
// with the per-element functions of runtime/common/Batch.h. The result is a
// pure function of (seed, epoch, position): the same for any thread count,
// and the same as a device gather.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_BATCH_H
#define TCC_RUNTIME_CPU_BATCH_H

#include "runtime/CompiledModel.h"
#include "runtime/common/Batch.h"

#include <cstdint>

namespace tcc::rt::cpu {

/// Sample `slot` of a batch: row `row` of `data`, augmented by `draw` (or
/// not, when null), written to `image` ([c, h, w]) and `label`.
inline void gather_sample(const DataView &data, const BatchSpec &spec,
                          int64_t row, const rng::AugmentDraw *draw,
                          float *image, int64_t *label) {
  for (int64_t t = 0; t < spec.targets; ++t)
    label[t] = data.labels[row * spec.targets + t];
  for (int64_t ch = 0; ch < spec.c; ++ch)
    for (int64_t y = 0; y < spec.h; ++y)
      for (int64_t x = 0; x < spec.w; ++x)
        *image++ = batch::samplePixel(data.pixels, data.isFloat, row, spec.c,
                                      spec.h, spec.w, draw, spec.augment, ch,
                                      y, x, spec.mean[ch], spec.std[ch]);
}

/// Sequence targets: the positions of `size` samples' labels that count
/// (not ignore_index), the per-token metrics' denominator.
inline int64_t counted_targets(const BatchSpec &spec, int64_t size, const int64_t *labels) {
  int64_t counted = 0;
  for (int64_t i = 0; i < size * spec.targets; ++i)
    counted += labels[i] != spec.ignoreIndex;
  return counted;
}

/// The training batch of step `*step` (batch step % stepsPerEpoch of epoch
/// step / stepsPerEpoch), `size` samples, shuffled and augmented as the
/// bound BatchSpec says. Sets control->valid to `size`. In a distributed
/// run it is rank `rank`'s slots of the global batch of `size * ranks`
/// samples (batch::globalSlot): the positions, order and draws the
/// one-process run gives those slots. Defined in Batch.cpp, which every
/// trainer shares (KernelInstances.h says how).
void gather_train_batch(const StepBuffers &b, const int64_t *step, int64_t size,
                        float *images, int64_t *labels);

/// Test batch control->evalBatch (then advanced), `size` samples in file
/// order, not augmented; slots past the end of the test set hold zeros and
/// label 0. Sets control->valid to the number of real samples. A
/// distributed run's rank r takes batches r, r + ranks, ... of the test
/// set, and the trainer adds up the ranks' totals.
void gather_eval_batch(const StepBuffers &b, int64_t size, float *images, int64_t *labels);

/// predictStep()'s input: the host's `n` token ids (PredictBuffers), as the
/// step reads token ids (floats, exact below 2^24).
inline void gather_predict_batch(const StepBuffers &b, int64_t n, float *images) {
  for (int64_t i = 0; i < n; ++i)
    images[i] = static_cast<float>(b.predict.tokens[i]);
}

/// Adds the step's sums (either may be null) and its real samples to the
/// totals.
inline void add_step_totals(StepControl *control, const float *lossSum,
                            const int64_t *correct) {
  if (lossSum)
    control->totals.lossSum += double(*lossSum);
  if (correct)
    control->totals.correct += *correct;
  control->totals.count += control->valid;
}

} // namespace tcc::rt::cpu

#endif // TCC_RUNTIME_CPU_BATCH_H
