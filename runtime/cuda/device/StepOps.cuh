//===- StepOps.cuh - The step's ops on the device ----------------*- CUDA -*-===//
//
// What the generated cuda step calls for each op that is not a matmul or a
// fused group: launches (Launch.cuh) of the element math the cpu target
// uses (runtime/kernels, runtime/common, runtime/cpu/StepOps.h). Like
// runtime/cpu/StepOps.h, every value of the step (the learning rate, the
// counter, the valid count) is read inside the kernel through its pointer,
// never on the host: the step is captured once and replayed as a CUDA graph.
//
// These kernels are correct first and simple (one thread per element or
// per row, one block per small reduction); issue 11 makes them fast.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_STEPOPS_CUH
#define TCC_RUNTIME_CUDA_DEVICE_STEPOPS_CUH

#include "runtime/CompiledModel.h"
#include "runtime/common/Batch.h"
#include "runtime/common/DropoutMask.h"
#include "runtime/common/LossScale.h"
#include "runtime/common/Schedule.h"
#include "runtime/cpu/StepOps.h"
#include "runtime/cuda/device/Chunk.cuh"
#include "runtime/cuda/device/FaultInjection.cuh"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/cuda/device/RowSums.cuh"
#include "runtime/kernels/Activation.h"
#include "runtime/kernels/ChannelMul.h"
#include "runtime/kernels/Loss.h"
#include "runtime/kernels/Metrics.h"
#include "runtime/kernels/Optimizer.h"

namespace tcc::rt::cuda {

using kernels::Reduction;

//--- the batch -------------------------------------------------------------//

/// An index of a batch's pixels as 32 bits: a 64-bit division is a
/// subroutine call on the GPU (and spills registers around it). A batch
/// has far fewer than 2^32 pixels (checked by checkBatchIndex).
TCC_HOST_DEVICE inline uint32_t narrow(int64_t i) { return static_cast<uint32_t>(i); }

inline void checkBatchIndex(int64_t pixels) {
  if (pixels >= (int64_t(1) << 32))
    throw std::runtime_error("a batch of more than 2^32 pixels");
}

/// Where pixel i of a batch of `spec`'s images is: its sample and (ch, y, x).
struct BatchPixel {
  int64_t slot, ch, y, x;
};
TCC_HOST_DEVICE inline BatchPixel batchPixel(int64_t i, const BatchSpec &spec) {
  const uint32_t plane = narrow(spec.c * spec.h * spec.w), e = narrow(i) % plane;
  return {narrow(i) / plane, e / narrow(spec.h * spec.w), e / narrow(spec.w) % narrow(spec.h),
          e % narrow(spec.w)};
}

/// Sets control->valid to the batch's `size` samples, or with sequence
/// targets to the positions of its labels that are not ignore_index (the
/// per-token metrics' count, runtime/cpu/Batch.h's counted_targets), one
/// block's sum.
inline void set_valid(cudaStream_t s, const BatchSpec &spec, int64_t size,
                      const int64_t *labels, StepControl *control) {
  if (!spec.sequence)
    return single(s, [=] __device__() { control->valid = size; });
  const int64_t ignoreIndex = spec.ignoreIndex;
  block_sum(
      s, size * spec.targets,
      [=] __device__(int64_t i) {
        return labels[i] != ignoreIndex ? 1.0 : 0.0;
      },
      [=] __device__(double counted) { control->valid = int64_t(counted); });
}

/// The training batch of step *step, as runtime/cpu/Batch.h gathers it:
/// one block per sample, its threads over the sample's pixels (neighbouring
/// threads, neighbouring pixels). Each thread draws the sample's order and
/// augmentation (pure functions of (seed, epoch, position)) once, where one
/// thread per pixel drew them for each of a CIFAR image's 3072 pixels: the
/// gather took 0.18 ms of airbench94's 4.7 ms step on the H200. Sets
/// control->valid. A distributed run's rank r gathers its slots of the
/// global batch, as runtime/cpu/Batch.h does.
inline void gather_train_batch(cudaStream_t s, const StepBuffers &b, const int64_t *step,
                               int64_t size, float *images, int64_t *labels) {
  const DataView data = b.train;
  const BatchSpec spec = b.batch;
  StepControl *control = b.control;
  const int64_t plane = spec.c * spec.h * spec.w;
  checkBatchIndex(size * plane);
  per_block(s, size, plane, [=] __device__(int64_t slot, const BlockSums &pixels) {
    const RunConstants &run = control->run;
    const int64_t epoch = *step / run.stepsPerEpoch, index = *step % run.stepsPerEpoch;
    // A distributed run's rank takes its slots of the global batch.
    const int64_t position = batch::trainPosition(
        index, batch::globalSlot(slot, size, run.rank, run.ranks, run.microBatches),
        size * run.ranks, data.n);
    const int64_t row =
        spec.shuffle ? rng::shuffledRow(run.seed, uint64_t(epoch), position, data.n) : position;
    rng::AugmentDraw draw;
    if (spec.augmentOn)
      draw = rng::drawAugment(run.seed, uint64_t(epoch), uint64_t(position), spec.h, spec.w,
                              spec.augment.cropPadding, spec.augment.flip,
                              spec.augment.translate, spec.augment.cutout,
                              spec.augment.alternateFlip, uint64_t(row),
                              spec.augment.balanced, data.n);
    pixels.each(1, [&](int64_t, int64_t e) {
      const BatchPixel px = batchPixel(e, spec); // pixel e of the sample: px.slot is 0
      images[slot * plane + e] = batch::samplePixel(
          data.pixels, data.isFloat, row, spec.c, spec.h, spec.w,
          spec.augmentOn ? &draw : nullptr, spec.augment, px.ch, px.y, px.x,
          spec.mean[px.ch], spec.std[px.ch]);
    });
    if (pixels.leader())
      for (int64_t t = 0; t < spec.targets; ++t)
        labels[slot * spec.targets + t] = data.labels[row * spec.targets + t];
  });
  set_valid(s, spec, size, labels, control);
}

/// Test batch control->evalBatch in file order, zero-padded past the end
/// (sequence targets: labels ignore_index there); then advances the cursor
/// and sets control->valid. A distributed run's rank r takes batches r,
/// r + ranks, ... (runtime/cpu/Batch.h).
inline void gather_eval_batch(cudaStream_t s, const StepBuffers &b, int64_t size,
                              float *images, int64_t *labels) {
  const DataView data = b.test;
  const BatchSpec spec = b.batch;
  StepControl *control = b.control;
  const int64_t plane = spec.c * spec.h * spec.w;
  checkBatchIndex(size * plane);
  for_each(s, size * plane, [=] __device__(int64_t i) {
    const BatchPixel px = batchPixel(i, spec);
    const int64_t row = evalBatchIndex(control) * size + px.slot;
    const bool real = row < data.n;
    images[i] = real ? batch::samplePixel(data.pixels, data.isFloat, row, spec.c, spec.h,
                                          spec.w, nullptr, spec.augment, px.ch, px.y, px.x,
                                          spec.mean[px.ch], spec.std[px.ch])
                     : 0.0f;
    if (px.ch == 0 && px.y == 0 && px.x == 0)
      for (int64_t t = 0; t < spec.targets; ++t)
        labels[px.slot * spec.targets + t] =
            real            ? data.labels[row * spec.targets + t]
            : spec.sequence ? spec.ignoreIndex
                            : 0;
  });
  single(s, [=] __device__() {
    const int64_t left = data.n - evalBatchIndex(control) * size;
    ++control->evalBatch;
    control->valid = left < 0 ? 0 : left < size ? left : size;
  });
  // Sequence targets: the positions that count, over the padded slots too.
  if (spec.sequence)
    set_valid(s, spec, size, labels, control);
}

/// Adds the step's sums (either may be null) and its real samples to the
/// totals.
inline void add_step_totals(cudaStream_t s, StepControl *control, const float *lossSum,
                            const int64_t *correct) {
  single(s, [=] __device__() {
    if (lossSum)
      control->totals.lossSum += double(*lossSum);
    if (correct)
      control->totals.correct += *correct;
    control->totals.count += control->valid;
  });
}

//--- elementwise -----------------------------------------------------------//

template <class T> void copy(cudaStream_t s, int64_t n, const T *x, T *y) {
  check(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice, s), "copying");
}

// The elementwise ops over chunks of elements (Chunk.cuh: vector loads
// and stores).

template <class T> void add_accumulate(cudaStream_t s, int64_t n, const T *x, T *y) {
  map_chunks(s, n, y, x, y, [] __device__(T a, T b, int64_t) { return T(a + b); });
}

/// y[n, c, plane] += bias[c]: a convolution's bias, after cuDNN's conv.
inline void add_channel_bias(cudaStream_t s, int64_t n, int64_t channels, int64_t plane,
                             const float *bias, float *y) {
  map_chunks(s, n * channels * plane, y, y, [=] __device__(float v, int64_t i) {
    return v + bias[i / plane % channels];
  });
}

/// y = f(x), an activation functor of runtime/kernels/Activation.h.
template <class F> void map_forward(cudaStream_t s, int64_t n, F f, const float *x, float *y) {
  map_chunks(s, n, x, y, [=] __device__(float v, int64_t) { return f(v); });
}

/// dx = f(v, dy), a backward functor (v: what it reads of the forward).
template <class F>
void map_backward(cudaStream_t s, int64_t n, F f, const float *v, const float *dy, float *dx) {
  map_chunks(s, n, v, dy, dx,
             [=] __device__(float value, float grad, int64_t) { return f(value, grad); });
}

template <class T> void scale(cudaStream_t s, int64_t n, T factor, const T *x, T *y) {
  map_chunks(s, n, x, y, [=] __device__(T v, int64_t) { return T(factor * v); });
}

/// y = x reversed along the middle axis of [outer, axis, inner] (a TTA
/// view's horizontal flip; kernels::flip).
template <class T>
void flip(cudaStream_t s, int64_t outer, int64_t axis, int64_t inner, const T *x, T *y) {
  for_each(s, outer * axis * inner, [=] __device__(int64_t k) {
    const int64_t i = k % inner, a = k / inner % axis, o = k / inner / axis;
    y[k] = x[(o * axis + (axis - 1 - a)) * inner + i];
  });
}

/// Images [nc, h, w] translated by (dy, dx), reflected at the border (a TTA
/// view; kernels::shift_reflect).
template <class T>
void shift_reflect(cudaStream_t s, int64_t nc, int64_t h, int64_t w, int64_t dy, int64_t dx,
                   const T *x, T *y) {
  for_each(s, nc * h * w, [=] __device__(int64_t k) {
    auto reflect = [](int64_t i, int64_t n) { return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; };
    const int64_t j = k % w, i = k / w % h, p = k / w / h;
    y[k] = x[(p * h + reflect(i - dy, h)) * w + reflect(j - dx, w)];
  });
}

/// Sum over every dim but the middle of x viewed as [outer, mid, inner]
/// (a bias's gradient): each j's outer * inner elements over several blocks
/// (RowSums.cuh, with the workspace the memory plan gave the op), in double,
/// then each j's parts added by a block.
template <class T>
void reduce_sum_keep(cudaStream_t s, char *workspace, int64_t workspaceBytes, int64_t outer,
                     int64_t mid, int64_t inner, const T *x, T *y) {
  const BatchNormShape rows{outer, mid, inner};
  const tcc::cuda::RowSplit split = tcc::cuda::rowSplit(rows);
  const RowWorkspace w = row_workspace(split, workspace, workspaceBytes);
  row_part_sums(s, rows, split, w.parts, [=] __device__(int64_t, int64_t k) {
#if TCC_INJECT_FAULT == TCC_FAULT_BIAS_GRAD_DROP_LAST
    if (k >= (outer - 1) * mid * inner)
      return kernels::Sums{0, 0};
#endif
    return kernels::Sums{double(x[k]), 0};
  });
  combine_parts(s, split, w.parts,
                [=] __device__(int64_t j, const kernels::Sums &total) { y[j] = T(total.first); });
}

//--- losses and metrics ----------------------------------------------------//

/// *loss = the reduced cross entropy of the first min(n, *valid) rows
/// (`valid` may be null: all rows).
inline void cross_entropy_forward(cudaStream_t s, int64_t n, int64_t k, const float *logits,
                                  const int64_t *labels, double smoothing, Reduction reduction,
                                  float *loss, const int64_t *valid) {
  block_sum(
      s, n,
      [=] __device__(int64_t i) {
        if (valid && i >= *valid)
          return 0.0;
        return kernels::detail::cross_entropy_row(logits + i * k, k, labels[i], smoothing);
      },
      [=] __device__(double total) {
        int64_t rows = valid ? (*valid < n ? (*valid < 0 ? 0 : *valid) : n) : n;
        *loss = float(reduction == Reduction::Mean ? (rows ? total / double(rows) : 0.0)
                                                   : total);
      });
}

inline void cross_entropy_backward(cudaStream_t s, int64_t n, int64_t k, const float *logits,
                                   const int64_t *labels, double smoothing,
                                   Reduction reduction, const float *dloss, float *dlogits) {
  // Divisions on the host: a double division in the kernel's loop is a
  // subroutine call that spills registers. (1/n differs from the cpu
  // kernel's division by n by at most one double rounding.)
  const double perRow = reduction == Reduction::Mean ? 1.0 / double(n) : 1.0;
  const double off = smoothing / double(k);
  for_each(s, n, [=] __device__(int64_t i) {
    const double scale = double(*dloss) * perRow;
    const float *row = logits + i * k;
    double mx, lse;
    kernels::detail::row_logsumexp(row, k, mx, lse);
    for (int64_t j = 0; j < k; ++j) {
      double g = exp(double(row[j]) - mx - lse) - off;
      if (j == labels[i])
        g -= 1.0 - smoothing;
      dlogits[i * k + j] = float(scale * g);
    }
  });
}

/// *correct = rows i < *valid whose argmax is labels[i].
inline void count_correct(cudaStream_t s, int64_t n, int64_t k, const float *logits,
                          const int64_t *labels, const int64_t *valid, int64_t *correct) {
  block_sum(
      s, n,
      [=] __device__(int64_t i) {
        return i < *valid && kernels::argmax_row(logits + i * k, k) == labels[i] ? 1.0 : 0.0;
      },
      [=] __device__(double total) { *correct = int64_t(total); });
}

//--- step counter, schedule, updates ---------------------------------------//

/// The step's dropout seed (tcc.mix_seed; dropout::mixSeed, as the cpu's).
inline void mix_seed(cudaStream_t s, const int64_t *seed, const int64_t *step, int64_t *out) {
  single(s, [=] __device__() { *out = dropout::mixSeed(*seed, *step); });
}

/// y = dropout(x) with the mask of (p, *seed, stream): the cpu kernel's
/// (kernels/Dropout.h) element by element, each thread drawing its own
/// element's bits (dropout::keep), from element rank * n on in a run of
/// several ranks; the backward is the same call on dy.
template <class T>
void apply_dropout(cudaStream_t s, int64_t n, double p, const int64_t *seed, uint64_t stream,
                   const StepControl *control, const T *x, T *y) {
  if (p >= 1.0)
    return for_each(s, n, [=] __device__(int64_t i) { y[i] = T(0); });
  const T scale = T(dropout::keptScale(p));
  for_each(s, n, [=] __device__(int64_t i) {
    const uint64_t first = uint64_t(control->run.rank) * uint64_t(n);
    y[i] = dropout::keep(p, uint64_t(*seed), stream, first + uint64_t(i)) ? x[i] * scale : T(0);
  });
}

inline void increment(cudaStream_t s, const int64_t *in, const float *skip, int64_t *out) {
  single(s, [=] __device__() { *out = *in + (skip && *skip != 0 ? 0 : 1); });
}

/// The skip flag of a parameter that trains for its first `epochs` only
/// (runtime/cpu/StepOps.h).
inline void frozen_after(cudaStream_t s, const int64_t *step, const int64_t *stepsPerEpoch,
                         int64_t epochs, const float *skip, float *frozen) {
  single(s, [=] __device__() { *frozen = cpu::frozen_after(*step, *stepsPerEpoch, epochs, skip); });
}

//--- fp16 loss scaling (runtime/common/LossScale.h) ------------------------//

inline void reciprocal(cudaStream_t s, const float *x, float *y) {
  single(s, [=] __device__() { *y = loss_scale::inverse(*x); });
}

/// *found = 1 if an element of one of the tensors is inf or NaN, else 0:
/// cleared, then set by any thread that sees one (they all store 1).
inline void found_non_finite(cudaStream_t s, int count, const float *const *tensors,
                             const int64_t *sizes, float *found) {
  single(s, [=] __device__() { *found = 0.0f; });
  for (int k = 0; k < count; ++k) {
    const float *x = tensors[k];
    for_each(s, sizes[k], [=] __device__(int64_t i) {
      if (!loss_scale::isFinite(x[i]))
        *found = 1.0f;
    });
  }
}

inline void update_loss_scale(cudaStream_t s, double growth, double backoff, int64_t interval,
                              const float *scale, const int64_t *tracker, const float *foundInf,
                              float *newScale, int64_t *newTracker) {
  single(s, [=] __device__() {
    float value = *scale;
    int64_t count = *tracker;
    loss_scale::update(growth, backoff, interval, *foundInf != 0, value, count);
    *newScale = value;
    *newTracker = count;
  });
}

inline void lr_schedule(cudaStream_t s, const ScheduleDesc &schedule, double baseLr,
                        const int64_t *step, const int64_t *stepsPerEpoch,
                        const int64_t *totalSteps, float *lr) {
  single(s, [=] __device__() {
    *lr = float(baseLr * lrFactor(schedule, *step, *stepsPerEpoch, *totalSteps));
  });
}

//--- MSE, clipping and LAMB ------------------------------------------------//

/// *loss = the reduced squared error of the first min(n / row, *valid) rows
/// of `row` elements (`valid` may be null: all n elements).
inline void mse_loss_forward(cudaStream_t s, int64_t n, const float *x, const float *target,
                             Reduction reduction, float *loss, const int64_t *valid,
                             int64_t row) {
  block_sum(
      s, n,
      [=] __device__(int64_t i) {
        if (valid && i >= *valid * row)
          return 0.0;
        const double d = double(x[i]) - double(target[i]);
        return d * d;
      },
      [=] __device__(double total) {
        const int64_t rows = valid ? (*valid < n / row ? (*valid < 0 ? 0 : *valid) : n / row)
                                   : n / row;
        const int64_t count = rows * row;
        *loss = float(reduction == Reduction::Mean
                          ? (count ? kernels::divide(total, double(count)) : 0.0)
                          : total);
      });
}

/// dx = *dloss * 2 (x - target) (/ n for Mean).
inline void mse_loss_backward(cudaStream_t s, int64_t n, const float *x, const float *target,
                              Reduction reduction, const float *dloss, float *dx) {
  const double perElement = reduction == Reduction::Mean ? 1.0 / double(n) : 1.0;
  for_each(s, n, [=] __device__(int64_t i) {
    const double scale = 2.0 * double(*dloss) * perElement;
    dx[i] = float(scale * (double(x[i]) - double(target[i])));
  });
}

/// *norm = sqrt of the sum of squares of every tensor: each tensor's sum in
/// double by one block (rounded to f32 as the cpu kernel rounds it), added
/// into *norm in f32, then the root (the cpu adds the f32 parts in double:
/// within count f32 roundings of it).
inline void global_norm(cudaStream_t s, int count, const float *const *tensors,
                        const int64_t *sizes, float *norm) {
  single(s, [=] __device__() { *norm = 0.0f; });
  for (int k = 0; k < count; ++k) {
    const float *x = tensors[k];
    block_sum(
        s, sizes[k], [=] __device__(int64_t i) { return double(x[i]) * double(x[i]); },
        [=] __device__(double total) { *norm += float(total); });
  }
  single(s, [=] __device__() { *norm = float(sqrt(double(*norm))); });
}

/// *coefficient = min(1, maxNorm / (norm + 1e-6)).
inline void clip_coefficient(cudaStream_t s, double maxNorm, const float *norm,
                             float *coefficient) {
  single(s, [=] __device__() {
    *coefficient = float(fmin(1.0, kernels::divide(maxNorm, double(*norm) + 1e-6)));
  });
}

/// One LAMB step (runtime/cpu/StepOps.h's lamb_update) of a tensor of n
/// elements by one block: the squared norms of the parameter and of the
/// update direction in one pass over the state before the step, then every
/// element updated from that same state (kernels::lamb_element), so no
/// buffer holds the direction. Each thread reads and writes only its own
/// elements (BlockSums hands over() and each() the same ones). Nothing when
/// `skip` is set.
inline void lamb_update(cudaStream_t s, int64_t n, float *param, const float *grad,
                        float *expAvg, float *expAvgSq, const float *lr, double lrScale,
                        double beta1, double beta2, double eps, double weightDecay,
                        const int64_t *step, const float *skip) {
  per_block(s, 1, n, [=] __device__(int64_t, const BlockSums &sums) {
    if (cpu::skipped(skip))
      return;
    const double t = double(*step + 1);
    const double bc1 = 1.0 - pow(beta1, t), bc2 = 1.0 - pow(beta2, t);
    auto element = [&](int64_t i) {
      return kernels::lamb_element(i, param, grad, expAvg, expAvgSq, beta1, beta2, eps,
                                   weightDecay, bc1, bc2);
    };
    const kernels::Sums norms = sums.over(1, [&](int64_t, int64_t i) {
      const float u = element(i).u;
      return kernels::Sums{double(param[i]) * double(param[i]), double(u) * double(u)};
    });
    // The squared norms rounded to f32, as the cpu kernel keeps them.
    const double k = kernels::lamb_step_size(double(*lr) * lrScale, double(float(norms.first)),
                                             double(float(norms.second)));
    sums.each(1, [&](int64_t, int64_t i) {
      const kernels::LambElementOf<float> e = element(i);
      expAvg[i] = e.m;
      expAvgSq[i] = e.v;
      param[i] = float(double(param[i]) - k * double(e.u));
    });
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_STEPOPS_CUH
