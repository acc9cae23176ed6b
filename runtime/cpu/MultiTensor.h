//===- MultiTensor.h - Every parameter's update in one loop nest -*- C++ -*-===//
//
// The cpu kernel of a tcc.fusion_group "multi_tensor_update" (the optimizer,
// EMA and Lookahead updates of all parameters of a step; codegen/common/UpdateChains.cpp
// prints the tables). The group's updates come as chains: the stages that
// touch one tensor's elements in order (a parameter's SGD step, then the EMA
// of the new parameter, then Lookahead), one element loop per chain running
// every stage at element i before element i + 1. Each stage is the element
// function of its own kernel (runtime/kernels/Optimizer.h), gated and scaled
// as runtime/cpu/StepOps.h does it, so the group gives the same bits as its
// ops one by one. The learning rate and the step counter are values of the
// step, read here, never in the generated code (docs/step-contract.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_MULTITENSOR_H
#define TCC_RUNTIME_CPU_MULTITENSOR_H

#include "runtime/cpu/StepOps.h"
#include "runtime/kernels/Optimizer.h"

#include <cmath>
#include <cstdint>

namespace tcc::rt::cpu {

/// One update of a chain. Pointers by kind:
///   Sgd:       a param (updated), b grad, c momentum buffer (updated) or null
///   Adamw:     a param, b grad, c exp_avg, d exp_avg_sq (all but b updated)
///   Ema:       a ema (updated), b value
///   Lookahead: a fast, b slow (both updated)
///   Copy:      a = b (an update's input that an earlier stage of the chain
///              wrote, moved into the update's own buffer at element i)
template <class T> struct UpdateStage {
  enum Kind : int { Sgd, Adamw, Ema, Lookahead, Copy } kind;
  T *a, *b, *c, *d;
  const float *lr;
  const int64_t *step, *totalSteps;
  const int64_t *stepsPerEpoch; ///< Ema: the cadence restarts each epoch, or null
  const float *skip; ///< Sgd, Adamw: skip the step (fp16 loss scaling, frozen), or null
  double lrScale, momentum, dampening, weightDecay, beta1, beta2, eps;
  double decay;  ///< Ema: the per-step decay to the power `every`
  double alpha;  ///< Lookahead: the share the slow weights keep
  bool nesterov, cubic;
  bool lrScaledBuffer; ///< Sgd: the buffer holds lr-scaled steps
  bool copyBack;       ///< Lookahead: the run's last step ends on the slow weights
  int64_t every; ///< Ema, Lookahead: every `every`-th step
};

template <class T>
UpdateStage<T> sgd_stage(T *param, const T *grad, T *buffer, const float *lr,
                         const int64_t *step, const float *skip, double lrScale,
                         double momentum, double dampening, double weightDecay,
                         bool nesterov, bool lrScaledBuffer = false) {
  return {UpdateStage<T>::Sgd, param, const_cast<T *>(grad), buffer, nullptr, lr, step,
          nullptr, nullptr, skip, lrScale, momentum, dampening, weightDecay, 0, 0, 0, 0, 0,
          nesterov, false, lrScaledBuffer, false, 1};
}

template <class T>
UpdateStage<T> adamw_stage(T *param, const T *grad, T *expAvg, T *expAvgSq,
                           const float *lr, const int64_t *step, const float *skip,
                           double lrScale, double beta1, double beta2, double eps,
                           double weightDecay) {
  return {UpdateStage<T>::Adamw, param, const_cast<T *>(grad), expAvg, expAvgSq, lr, step,
          nullptr, nullptr, skip, lrScale, 0, 0, weightDecay, beta1, beta2, eps, 0, 0, false,
          false, false, false, 1};
}

template <class T>
UpdateStage<T> ema_stage(T *ema, const T *value, const int64_t *step, double decay,
                         int64_t every, const int64_t *stepsPerEpoch = nullptr) {
  return {UpdateStage<T>::Ema, ema, const_cast<T *>(value), nullptr, nullptr, nullptr,
          step, nullptr, stepsPerEpoch, nullptr, 0, 0, 0, 0, 0, 0, 0, decay, 0, false, false,
          false, false, every};
}

template <class T>
UpdateStage<T> lookahead_stage(T *fast, T *slow, const int64_t *step,
                               const int64_t *totalSteps, double alpha, bool cubic,
                               int64_t every, bool copyBack = false) {
  return {UpdateStage<T>::Lookahead, fast, slow, nullptr, nullptr, nullptr, step,
          totalSteps, nullptr, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, alpha, false, cubic, false,
          copyBack, every};
}

template <class T> UpdateStage<T> copy_stage(T *to, const T *from) {
  return {UpdateStage<T>::Copy, to, const_cast<T *>(from), nullptr, nullptr, nullptr,
          nullptr, nullptr, nullptr, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, false, false,
          false, 1};
}

/// The stages [first, first + count) update the n elements of one tensor.
struct UpdateChain {
  int64_t n;
  int first, count;
};

/// Stages per chain (an optimizer step, EMA, Lookahead and spares).
constexpr int kMaxChainStages = 8;

/// A chain's constants for this step, as StepOps.h computes them: which
/// stages run, and their rates.
struct ChainConstants {
  bool active[kMaxChainStages], firstStep[kMaxChainStages];
  double lr[kMaxChainStages], alpha[kMaxChainStages];
  kernels::AdamwFactors adamw[kMaxChainStages];
};

/// The constants of the `count` stages at `first` for the step they read.
/// Host and device: the cuda kernel of a group computes them the same way.
template <class T>
TCC_HOST_DEVICE inline void prepare_chain(const UpdateStage<T> *first, int count,
                                          ChainConstants &c) {
  for (int s = 0; s < count; ++s) {
    const UpdateStage<T> &stage = first[s];
    c.active[s] = true;
    if (stage.kind == UpdateStage<T>::Copy)
      continue;
    const int64_t step = *stage.step;
    c.firstStep[s] = step == 0;
    switch (stage.kind) {
    case UpdateStage<T>::Sgd:
      c.active[s] = !skipped(stage.skip);
      c.lr[s] = double(*stage.lr) * stage.lrScale;
      break;
    case UpdateStage<T>::Adamw:
      c.active[s] = !skipped(stage.skip);
      c.lr[s] = double(*stage.lr) * stage.lrScale;
      c.adamw[s] = kernels::AdamwFactors(c.lr[s], stage.beta1, stage.beta2,
                                         stage.weightDecay, step + 1);
      break;
    case UpdateStage<T>::Ema:
      c.active[s] = ema_due(step, stage.every, stage.stepsPerEpoch);
      break;
    case UpdateStage<T>::Lookahead:
      c.active[s] = lookahead_due(step, stage.every, stage.copyBack, *stage.totalSteps);
      c.alpha[s] =
          lookahead_move(step, stage.every, stage.alpha, stage.cubic, *stage.totalSteps);
      break;
    case UpdateStage<T>::Copy:
      break;
    }
  }
}

/// Every active stage of a chain on element i, in order.
template <class T>
TCC_HOST_DEVICE inline void apply_chain_at(int64_t i, const UpdateStage<T> *first,
                                           int count, const ChainConstants &c) {
  for (int s = 0; s < count; ++s) {
    if (!c.active[s])
      continue;
    const UpdateStage<T> &st = first[s];
    switch (st.kind) {
    case UpdateStage<T>::Sgd:
      kernels::sgd_element(i, st.a, st.b, st.c, c.lr[s], st.momentum, st.dampening,
                           st.weightDecay, st.nesterov, c.firstStep[s], st.lrScaledBuffer);
      break;
    case UpdateStage<T>::Adamw:
      kernels::adamw_element(i, st.a, st.b, st.c, st.d, c.adamw[s], st.beta1, st.beta2,
                             st.eps);
      break;
    case UpdateStage<T>::Ema:
      kernels::ema_element(i, st.decay, st.b, st.a);
      break;
    case UpdateStage<T>::Lookahead:
      kernels::lookahead_element(i, c.alpha[s], st.a, st.b);
      break;
    case UpdateStage<T>::Copy:
      st.a[i] = st.b[i];
      break;
    }
  }
}

template <class T>
void multi_tensor_update(const UpdateChain *chains, int chainCount,
                         const UpdateStage<T> *stages) {
  for (int k = 0; k < chainCount; ++k) {
    const UpdateChain &chain = chains[k];
    const UpdateStage<T> *first = stages + chain.first;
    ChainConstants constants;
    prepare_chain(first, chain.count, constants);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < chain.n; ++i)
      apply_chain_at(i, first, chain.count, constants);
  }
}

} // namespace tcc::rt::cpu

#endif // TCC_RUNTIME_CPU_MULTITENSOR_H
