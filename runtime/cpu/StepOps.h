//===- StepOps.h - Kernels that read the step's values themselves -*- C++ -*-===//
//
// The ops whose inputs include values computed by the step (the learning
// rate, the step counter, the seed, a loss gradient, a norm, the valid
// count) take them as pointers and read them inside the kernel, never in
// the generated code: on a device those values live in device memory, and a
// step that read them on the host would synchronise every step and could
// not be replayed as one CUDA graph. The cpu target keeps the same rule, so
// both targets' printers pass the same operands. Each function here reads
// its scalars and calls the reference kernel of runtime/kernels/.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_STEPOPS_H
#define TCC_RUNTIME_CPU_STEPOPS_H

#include "runtime/CompiledModel.h"
#include "runtime/comm/Communicator.h"
#include "runtime/common/LossScale.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Step.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tcc::rt::cpu {

using kernels::Reduction;

/// y = factor * x, the factor a value of the step.
template <class T>
void scale_by(int64_t n, const T *factor, const T *x, T *y) {
  kernels::scale<T>(n, *factor, x, y);
}

/// tcc.all_reduce of `count` tensors: packed into one message (one
/// collective per bucket; its buffer kept from step to step), summed over
/// the ranks, averaged for `mean`, unpacked into the results.
template <class T>
void all_reduce(Communicator *comm, int64_t count, const T *const *inputs,
                T *const *results, const int64_t *sizes, bool mean) {
  int64_t total = 0;
  for (int64_t k = 0; k < count; ++k)
    total += sizes[k];
  static thread_local std::vector<T> message;
  message.resize(static_cast<size_t>(total));
  for (int64_t k = 0, at = 0; k < count; at += sizes[k++])
    std::copy(inputs[k], inputs[k] + sizes[k], message.data() + at);
  comm->allReduceSum(message.data(), total);
  const T scale = mean ? T(1) / T(comm->size()) : T(1);
  for (int64_t k = 0, at = 0; k < count; at += sizes[k++])
    for (int64_t i = 0; i < sizes[k]; ++i)
      results[k][i] = message[at + i] * scale;
}

/// tcc.shard: elements [rank * c, rank * c + c) of x's n, zero past n.
template <class T>
void shard(const StepControl *control, int64_t n, int64_t c, const T *x, T *chunk) {
  const int64_t first = control->run.rank * c;
  for (int64_t i = 0; i < c; ++i)
    chunk[i] = first + i < n ? x[first + i] : T(0);
}

/// tcc.all_gather of `count` tensors: this rank's chunks (chunks[k] of
/// sizes[k] = ceil(wholes[k] / ranks) elements of bytes[k] bytes each: f32
/// or 16-bit, whose bits are moved) packed into one message, gathered from
/// every rank, each tensor put together in rank order and cut to its
/// wholes[k] elements.
inline void all_gather(Communicator *comm, int64_t count, const void *const *chunks,
                       void *const *results, const int64_t *sizes, const int64_t *wholes,
                       const int64_t *bytes) {
  int64_t total = 0; // this rank's bytes
  for (int64_t k = 0; k < count; ++k)
    total += sizes[k] * bytes[k];
  static thread_local std::vector<char> mine, all;
  mine.resize(size_t(total));
  all.resize(size_t(total * comm->size()));
  for (int64_t k = 0, at = 0; k < count; at += sizes[k] * bytes[k], ++k)
    std::memcpy(mine.data() + at, chunks[k], size_t(sizes[k] * bytes[k]));
  allGatherBytes(*comm, mine.data(), all.data(), total);
  for (int64_t r = 0; r < comm->size(); ++r)
    for (int64_t k = 0, at = r * total; k < count; at += sizes[k] * bytes[k], ++k) {
      const int64_t first = r * sizes[k];
      const int64_t n = std::min(sizes[k], std::max<int64_t>(0, wholes[k] - first));
      std::memcpy(static_cast<char *>(results[k]) + first * bytes[k], all.data() + at,
                  size_t(n * bytes[k]));
    }
}

/// tcc.reduce_scatter of `count` tensors (inputs[k] of wholes[k] values):
/// rank r's block of the message holds chunk r of each (zero past its
/// end); summed over the ranks, this rank's block unpacked into its chunks
/// (results[k] of sizes[k] values).
inline void reduce_scatter(Communicator *comm, int64_t count, const float *const *inputs,
                           float *const *results, const int64_t *sizes,
                           const int64_t *wholes) {
  int64_t total = 0;
  for (int64_t k = 0; k < count; ++k)
    total += sizes[k];
  static thread_local std::vector<float> all, mine;
  all.assign(size_t(total * comm->size()), 0.0f);
  mine.resize(size_t(total));
  for (int64_t r = 0; r < comm->size(); ++r)
    for (int64_t k = 0, at = r * total; k < count; at += sizes[k++]) {
      const int64_t first = r * sizes[k];
      const int64_t n = std::min(sizes[k], std::max<int64_t>(0, wholes[k] - first));
      std::copy(inputs[k] + first, inputs[k] + first + n, all.data() + at);
    }
  comm->reduceScatterSum(all.data(), mine.data(), total);
  for (int64_t k = 0, at = 0; k < count; at += sizes[k++])
    std::copy(mine.data() + at, mine.data() + at + sizes[k], results[k]);
}

/// Dropout of this rank's slice: its elements are those from rank * n of
/// the one-process tensor, and so are their mask bits.
template <class T>
void dropout_forward(int64_t n, double p, const int64_t *seed, uint64_t stream,
                     const StepControl *control, const T *x, T *y) {
  kernels::detail::dropout_apply<T>(n, p, uint64_t(*seed), stream,
                                    uint64_t(control->run.rank) * uint64_t(n), x, y);
}

/// Attention whose probabilities' dropout (p > 0: `seed` is the step's)
/// draws this rank's slice of the one-process mask, as dropout_forward
/// (also on the device: runtime/cuda/device/Attention.cuh).
TCC_HOST_DEVICE inline kernels::AttentionDropout
attention_dropout(const kernels::AttentionShape &s, double p, const int64_t *seed,
                  uint64_t stream, const StepControl *control) {
  const uint64_t perRank = uint64_t(s.n * s.heads * s.tq * s.tk);
  return {p, seed ? uint64_t(*seed) : 0, stream, uint64_t(control->run.rank) * perRank};
}

template <class T>
void attention_forward(const kernels::AttentionShape &s, double p, const int64_t *seed,
                       uint64_t stream, const StepControl *control, const T *q, const T *k,
                       const T *v, T *out, T *lse) {
  kernels::attention_forward<T>(s, attention_dropout(s, p, seed, stream, control), q, k, v, out,
                                lse);
}

template <class T>
void attention_backward(const kernels::AttentionShape &s, double p, const int64_t *seed,
                        uint64_t stream, const StepControl *control, const T *dout, const T *q,
                        const T *k, const T *v, const T *out, const T *lse, T *dq, T *dk,
                        T *dv) {
  kernels::attention_backward<T>(s, attention_dropout(s, p, seed, stream, control), dout, q, k,
                                 v, out, lse, dq, dk, dv);
}

template <class T>
void cross_entropy_backward(int64_t n, int64_t k, const T *logits,
                            const int64_t *labels, double labelSmoothing,
                            Reduction reduction, const T *dloss, T *dlogits) {
  kernels::cross_entropy_backward<T>(n, k, logits, labels, labelSmoothing,
                                     reduction, *dloss, dlogits);
}

template <class T>
void mse_loss_backward(int64_t n, const T *x, const T *target,
                       Reduction reduction, const T *dloss, T *dx) {
  kernels::mse_loss_backward<T>(n, x, target, reduction, *dloss, dx);
}

/// *correct = rows i < *valid whose argmax is labels[i].
template <class T>
void count_correct(int64_t n, int64_t k, const T *logits, const int64_t *labels,
                   const int64_t *valid, int64_t *correct) {
  *correct = kernels::count_correct<T>(n, k, logits, labels, *valid);
}

template <class T>
void token_cross_entropy_backward(int64_t n, int64_t k, const T *logits, const int64_t *labels,
                                  int64_t ignoreIndex, double labelSmoothing,
                                  Reduction reduction, const T *dloss, T *dlogits) {
  kernels::token_cross_entropy_backward<T>(n, k, logits, labels, ignoreIndex, labelSmoothing,
                                           reduction, *dloss, dlogits);
}

/// *correct = positions not ignored whose argmax is their label.
template <class T>
void count_correct_tokens(int64_t n, int64_t k, const T *logits, const int64_t *labels,
                          int64_t ignoreIndex, int64_t *correct) {
  *correct = kernels::count_correct_tokens<T>(n, k, logits, labels, ignoreIndex);
}

/// *out = *in + 1, or *in when `skip` is given and nonzero (a step that
/// fp16 loss scaling skipped).
inline void increment(const int64_t *in, const float *skip, int64_t *out) {
  *out = *in + (skip && *skip != 0 ? 0 : 1);
}

/// Whether fp16 loss scaling skips this step's updates.
TCC_HOST_DEVICE inline bool skipped(const float *skip) { return skip && *skip != 0; }

/// *y = 1 / *x (the inverse loss scale, runtime/common/LossScale.h).
inline void reciprocal(const float *x, float *y) { *y = loss_scale::inverse(*x); }

/// *found = 1 if an element of one of `count` tensors is inf or nan, else 0.
template <class T>
void found_non_finite(int64_t count, const T *const *tensors, const int64_t *sizes,
                      float *found) {
  bool any = false;
  for (int64_t k = 0; k < count; ++k) {
    const T *x = tensors[k];
#pragma omp parallel for schedule(static) reduction(|| : any)
    for (int64_t i = 0; i < sizes[k]; ++i)
      any = any || !loss_scale::isFinite(float(x[i]));
  }
  *found = any ? 1.0f : 0.0f;
}

/// GradScaler.update (runtime/common/LossScale.h). In place allowed.
inline void update_loss_scale(double growth, double backoff, int64_t interval,
                              const float *scale, const int64_t *tracker,
                              const float *foundInf, float *newScale,
                              int64_t *newTracker) {
  float s = *scale;
  int64_t t = *tracker;
  loss_scale::update(growth, backoff, interval, *foundInf != 0, s, t);
  *newScale = s;
  *newTracker = t;
}

inline void mix_seed(const int64_t *seed, const int64_t *step, int64_t *out) {
  *out = kernels::mix_seed(*seed, *step);
}

/// *lr = baseLr * factor(step) of the schedule.
inline void lr_schedule(const kernels::ScheduleDesc &schedule, double baseLr,
                        const int64_t *step, const int64_t *stepsPerEpoch,
                        const int64_t *totalSteps, float *lr) {
  *lr = float(baseLr *
              kernels::lr_factor(schedule, *step, *stepsPerEpoch, *totalSteps));
}

/// *norm = sqrt of the sum of squares of `count` tensors.
template <class T>
void global_norm(int64_t count, const T *const *tensors, const int64_t *sizes,
                 T *norm) {
  double total = 0;
  for (int64_t k = 0; k < count; ++k) {
    T part;
    kernels::sum_of_squares<T>(sizes[k], tensors[k], &part);
    total += part;
  }
  *norm = T(std::sqrt(total));
}

/// *coefficient = min(1, maxNorm / (norm + 1e-6)).
template <class T>
void clip_coefficient(double maxNorm, const T *norm, T *coefficient) {
  *coefficient = T(std::min(1.0, maxNorm / (double(*norm) + 1e-6)));
}

/// One SGD step at learning rate *lr * lrScale; *step == 0 is the first.
/// Nothing when `skip` is set (skipped()).
template <class T>
void sgd_update(int64_t n, T *param, const T *grad, T *momentumBuffer,
                const float *lr, double lrScale, double momentum, double dampening,
                double weightDecay, bool nesterov, const int64_t *step,
                const float *skip, bool lrScaledBuffer = false) {
  if (skipped(skip))
    return;
  kernels::sgd_step<T>(n, param, grad, momentumBuffer, double(*lr) * lrScale,
                       momentum, dampening, weightDecay, nesterov, *step == 0,
                       lrScaledBuffer);
}

template <class T>
void adamw_update(int64_t n, T *param, const T *grad, T *expAvg, T *expAvgSq,
                  const float *lr, double lrScale, double beta1, double beta2,
                  double eps, double weightDecay, const int64_t *step,
                  const float *skip) {
  if (skipped(skip))
    return;
  kernels::adamw_step<T>(n, param, grad, expAvg, expAvgSq,
                         double(*lr) * lrScale, beta1, beta2, eps, weightDecay,
                         *step + 1);
}

template <class T>
void lamb_update(int64_t n, T *param, const T *grad, T *expAvg, T *expAvgSq,
                 const T *lr, double lrScale, double beta1, double beta2,
                 double eps, double weightDecay, const int64_t *step,
                 const float *skip) {
  if (skipped(skip))
    return;
  std::vector<T> update(n);
  T paramNorm, updateNorm;
  kernels::lamb_compute_update<T>(n, param, grad, expAvg, expAvgSq, beta1,
                                  beta2, eps, weightDecay, *step + 1,
                                  update.data(), &paramNorm, &updateNorm);
  kernels::lamb_apply<T>(n, param, update.data(), double(*lr) * lrScale,
                         paramNorm, updateNorm);
}

/// Whether an update done after every `every`-th step runs in the step that
/// `step` steps precede.
TCC_HOST_DEVICE inline bool every_nth_step(int64_t step, int64_t every) { return (step + 1) % every == 0; }

/// Lookahead's alpha_t, the share the slow weights keep in that step: alpha,
/// or alpha * ((step + 1) / totalSteps)^3 when `cubic`.
TCC_HOST_DEVICE inline double lookahead_alpha(double alpha, bool cubic, int64_t step, int64_t totalSteps) {
  return cubic ? alpha * std::pow(double(step + 1) / double(totalSteps), 3.0) : alpha;
}

/// Whether the EMA update runs in the step that `step` steps precede: after
/// every `every`-th step of the run, or, given the steps per epoch, after
/// steps 1, 1 + every, ... of each epoch (myrtle.ai's update_ema restarts its
/// counter with each epoch).
TCC_HOST_DEVICE inline bool ema_due(int64_t step, int64_t every, const int64_t *stepsPerEpoch) {
  if (!stepsPerEpoch)
    return every_nth_step(step, every);
  const int64_t inEpoch = *stepsPerEpoch > 0 ? step % *stepsPerEpoch : step;
  return inEpoch % every == 0;
}

/// Whether Lookahead runs in that step: after every `every`-th step, and
/// with `copyBack` after the run's last (which only restarts the fast
/// weights from the slow ones).
TCC_HOST_DEVICE inline bool lookahead_due(int64_t step, int64_t every, bool copyBack,
                                          int64_t totalSteps) {
  return every_nth_step(step, every) || (copyBack && step + 1 == totalSteps);
}

/// How far the slow weights move towards the fast ones in that step:
/// 1 - alpha_t, or 0 in a copy-back-only step.
TCC_HOST_DEVICE inline double lookahead_move(int64_t step, int64_t every, double alpha,
                                             bool cubic, int64_t totalSteps) {
  return every_nth_step(step, every) ? 1.0 - lookahead_alpha(alpha, cubic, step, totalSteps)
                                     : 0.0;
}

/// When ema_due: ema = decay * ema + (1 - decay) * value, where `decay` is
/// the per-step decay to the power `every`.
template <class T>
void ema_update(int64_t n, double decay, int64_t every, const int64_t *step,
                const T *value, T *ema, const int64_t *stepsPerEpoch = nullptr) {
  if (ema_due(*step, every, stepsPerEpoch))
    kernels::ema_update<T>(n, decay, value, ema);
}

/// After every `every`-th step the slow weights keep the share alpha_t and
/// take 1 - alpha_t of the fast ones, and the fast ones restart from them;
/// alpha_t = alpha, or alpha * ((step + 1) / totalSteps)^3 when `cubic`.
/// With `copyBack` the last step of the run ends with fast = slow.
template <class T>
void lookahead_update(int64_t n, double alpha, bool cubic, int64_t every,
                      const int64_t *step, const int64_t *totalSteps, T *fast,
                      T *slow, bool copyBack = false) {
  if (!lookahead_due(*step, every, copyBack, *totalSteps))
    return;
  // The kernel moves the slow weights by its alpha towards the fast ones.
  kernels::lookahead_update<T>(n, lookahead_move(*step, every, alpha, cubic, *totalSteps),
                               fast, slow);
}

/// *frozen = 1 from step epochs * stepsPerEpoch on, or when `skip` is set:
/// the skip flag of a parameter that trains for its first `epochs` only.
TCC_HOST_DEVICE inline float frozen_after(int64_t step, int64_t stepsPerEpoch, int64_t epochs,
                                          const float *skip) {
  return skipped(skip) || step >= epochs * stepsPerEpoch ? 1.0f : 0.0f;
}

inline void frozen_after(const int64_t *step, const int64_t *stepsPerEpoch, int64_t epochs,
                         const float *skip, float *frozen) {
  *frozen = frozen_after(*step, *stepsPerEpoch, epochs, skip);
}

} // namespace tcc::rt::cpu

#endif // TCC_RUNTIME_CPU_STEPOPS_H
