//===- Batch.cpp - The step's gather of its batch, on the host ------------===//
//
// Batch.h's gathers, compiled once with a trainer's flags and shared by
// every trainer (tools/tcc/ObjectCache.h), not again in each generated step.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Batch.h"

namespace tcc::rt::cpu {

void gather_train_batch(const StepBuffers &b, const int64_t *step, int64_t size,
                        float *images, int64_t *labels) {
  const RunConstants &run = b.control->run;
  const int64_t epoch = *step / run.stepsPerEpoch;
  const int64_t index = *step % run.stepsPerEpoch;
  const int64_t global = size * run.ranks;
  const int64_t plane = b.batch.c * b.batch.h * b.batch.w;
  const AugmentConfig &ac = b.batch.augment;
#pragma omp parallel for schedule(static)
  for (int64_t slot = 0; slot < size; ++slot) {
    const int64_t position = batch::trainPosition(
        index, batch::globalSlot(slot, size, run.rank, run.ranks, run.microBatches), global,
        b.train.n);
    const int64_t row =
        b.batch.shuffle ? rng::shuffledRow(run.seed, uint64_t(epoch), position,
                                           b.train.n)
                        : position;
    rng::AugmentDraw draw;
    if (b.batch.augmentOn)
      draw = rng::drawAugment(run.seed, uint64_t(epoch), uint64_t(position),
                              b.batch.h, b.batch.w, ac.cropPadding, ac.flip,
                              ac.translate, ac.cutout, ac.alternateFlip, uint64_t(row),
                              ac.balanced, b.train.n);
    gather_sample(b.train, b.batch, row, b.batch.augmentOn ? &draw : nullptr,
                  images + slot * plane, labels + slot * b.batch.targets);
  }
  b.control->valid = b.batch.sequence ? counted_targets(b.batch, size, labels) : size;
}

void gather_eval_batch(const StepBuffers &b, int64_t size, float *images, int64_t *labels) {
  const int64_t first = evalBatchIndex(b.control) * size;
  ++b.control->evalBatch;
  const int64_t left = b.test.n - first;
  const int64_t valid = left < 0 ? 0 : left < size ? left : size;
  const int64_t plane = b.batch.c * b.batch.h * b.batch.w;
#pragma omp parallel for schedule(static)
  for (int64_t slot = 0; slot < size; ++slot) {
    if (slot < valid) {
      gather_sample(b.test, b.batch, first + slot, nullptr,
                    images + slot * plane, labels + slot * b.batch.targets);
      continue;
    }
    for (int64_t i = 0; i < plane; ++i)
      images[slot * plane + i] = 0.0f;
    for (int64_t t = 0; t < b.batch.targets; ++t)
      labels[slot * b.batch.targets + t] = b.batch.sequence ? b.batch.ignoreIndex : 0;
  }
  b.control->valid = b.batch.sequence ? counted_targets(b.batch, size, labels) : valid;
}

} // namespace tcc::rt::cpu
