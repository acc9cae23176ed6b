//===- Optimizer.h - SGD, AdamW, LAMB, clipping, EMA ------------*- C++ -*-===//
//
// Each kernel updates one parameter tensor of n elements in place, with
// torch.optim's formulas (PyTorch 1.13, single-tensor path, maximize=False).
// Hyper-parameters are doubles; the per-element math runs in double and is
// stored back as T.
//
// SGD (torch.optim.SGD):
//   g = grad + wd * p
//   if momentum != 0:
//     buf = first_step ? g : momentum * buf + (1 - dampening) * g
//     g   = nesterov ? g + momentum * buf : buf
//   p -= lr * g
// AdamW (torch.optim.AdamW), step t = 1, 2, ... (counted including this step):
//   p *= 1 - lr * wd
//   m = b1 m + (1-b1) g ;  v = b2 v + (1-b2) g^2
//   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//      (= lr * mhat / (sqrt(vhat) + eps), mhat = m/(1-b1^t), vhat = v/(1-b2^t))
// LAMB (You et al. 2019; apex FusedLAMB with bias correction and grad
// averaging), in two kernels so the norms can be reduced in between:
//   lamb_compute_update:  m, v as in Adam (updated in place);
//        u = mhat / (sqrt(vhat) + eps) + wd * p
//        *param_sq_norm = sum p^2, *update_sq_norm = sum u^2
//   lamb_apply:  r = (||p|| > 0 && ||u|| > 0) ? ||p|| / ||u|| : 1
//                p -= lr * r * u
// Gradient clipping (torch.nn.utils.clip_grad_norm_, 2-norm): sum_of_squares
//   of every gradient, then clip_grad_norm_coefficient:
//   total = sqrt(sum of the squares), coef = min(1, max_norm / (total + 1e-6)),
//   then scale_inplace(n, coef, grad) (Elementwise.h) on every gradient.
// EMA of weights: ema = decay * ema + (1 - decay) * p.
// Lookahead (Zhang et al. 2019), every k steps: slow += alpha * (fast - slow);
//   fast = slow.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_OPTIMIZER_H
#define TCC_RUNTIME_KERNELS_OPTIMIZER_H

#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tcc::rt::kernels {

// Each update is an element function (`*_element`) that the per-tensor
// kernels below map over n elements and the multi-tensor kernel
// (MultiTensor.h) runs for many tensors in one loop nest: the same math, so
// the two give the same bits.

/// The SGD step of element i. momentum_buf may be nullptr when momentum == 0.
/// `lr_scaled_buffer`: the buffer accumulates lr-scaled steps (myrtle.ai's
/// ResNet-9 form: d = -lr g, buf = momentum buf + d, p += nesterov ?
/// d + momentum buf : buf), no dampening.
template <class T>
TCC_HOST_DEVICE inline void sgd_element(int64_t i, T *param, const T *grad, T *momentum_buf,
                        double lr, double momentum, double dampening,
                        double weight_decay, bool nesterov, bool first_step,
                        bool lr_scaled_buffer = false) {
  double g = double(grad[i]) + weight_decay * double(param[i]);
  if (lr_scaled_buffer) {
    const double d = -lr * g;
    const double buf = first_step ? d : momentum * double(momentum_buf[i]) + d;
    momentum_buf[i] = T(buf);
    param[i] = T(double(param[i]) + (nesterov ? d + momentum * buf : buf));
    return;
  }
  if (momentum != 0.0) {
    const double buf = first_step ? g
                                  : momentum * double(momentum_buf[i]) +
                                        (1.0 - dampening) * g;
    momentum_buf[i] = T(buf);
    g = nesterov ? g + momentum * buf : buf;
  }
  param[i] = T(double(param[i]) - lr * g);
}

/// One SGD step. momentum_buf [n] may be nullptr when momentum == 0.
/// `first_step`: the momentum buffer does not exist yet (PyTorch initialises
/// it to g).
template <class T>
void sgd_step(int64_t n, T *param, const T *grad, T *momentum_buf, double lr,
              double momentum, double dampening, double weight_decay,
              bool nesterov, bool first_step, bool lr_scaled_buffer = false) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    sgd_element(i, param, grad, momentum_buf, lr, momentum, dampening,
                weight_decay, nesterov, first_step, lr_scaled_buffer);
}

/// AdamW's per-step constants for step t >= 1.
struct AdamwFactors {
  double stepSize = 0, decay = 0, bc2Sqrt = 0;
  AdamwFactors() = default;
  TCC_HOST_DEVICE AdamwFactors(double lr, double beta1, double beta2, double weight_decay,
               int64_t step)
      : stepSize(lr / (1.0 - std::pow(beta1, double(step)))),
        decay(1.0 - lr * weight_decay),
        bc2Sqrt(std::sqrt(1.0 - std::pow(beta2, double(step)))) {}
};

/// The AdamW step of element i.
template <class T>
TCC_HOST_DEVICE inline void adamw_element(int64_t i, T *param, const T *grad, T *exp_avg,
                          T *exp_avg_sq, const AdamwFactors &f, double beta1,
                          double beta2, double eps) {
  const double g = grad[i];
  const double p = double(param[i]) * f.decay;
  const double m = beta1 * double(exp_avg[i]) + (1.0 - beta1) * g;
  const double v = beta2 * double(exp_avg_sq[i]) + (1.0 - beta2) * g * g;
  exp_avg[i] = T(m);
  exp_avg_sq[i] = T(v);
  param[i] = T(p - f.stepSize * m / (std::sqrt(v) / f.bc2Sqrt + eps));
}

/// One AdamW step; `step` = t >= 1, counting this step.
template <class T>
void adamw_step(int64_t n, T *param, const T *grad, T *exp_avg, T *exp_avg_sq,
                double lr, double beta1, double beta2, double eps,
                double weight_decay, int64_t step) {
  const AdamwFactors f(lr, beta1, beta2, weight_decay, step);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    adamw_element(i, param, grad, exp_avg, exp_avg_sq, f, beta1, beta2, eps);
}

/// LAMB's element i from the state before the step: the new moments and
/// the update direction u (bc1, bc2: the bias corrections 1 - beta^t).
template <class T> struct LambElementOf {
  T m, v, u;
};
template <class T>
TCC_HOST_DEVICE LambElementOf<T> lamb_element(int64_t i, const T *param, const T *grad,
                                              const T *exp_avg, const T *exp_avg_sq,
                                              double beta1, double beta2, double eps,
                                              double weight_decay, double bc1, double bc2) {
  const double g = grad[i];
  const double m = beta1 * double(exp_avg[i]) + (1.0 - beta1) * g;
  const double v = beta2 * double(exp_avg_sq[i]) + (1.0 - beta2) * g * g;
  return {T(m), T(v),
          T(divide(divide(m, bc1), std::sqrt(divide(v, bc2)) + eps) +
            weight_decay * double(param[i]))};
}

/// LAMB, part 1: updates exp_avg / exp_avg_sq, writes the update direction u
/// [n] (may alias grad) and the squared norms of param and u (one element
/// each). `step` = t >= 1, counting this step.
template <class T>
void lamb_compute_update(int64_t n, const T *param, const T *grad, T *exp_avg,
                         T *exp_avg_sq, double beta1, double beta2, double eps,
                         double weight_decay, int64_t step, T *update,
                         T *param_sq_norm, T *update_sq_norm) {
  const double bc1 = 1.0 - std::pow(beta1, double(step));
  const double bc2 = 1.0 - std::pow(beta2, double(step));
  const acc_t pSq = detail::deterministic_sum(n, [&](int64_t i) {
    const double p = param[i];
    return p * p;
  });
  using LambElement = LambElementOf<T>;
  const acc_t uSq = detail::deterministic_sum(n, [&](int64_t i) {
    const LambElement e =
        lamb_element(i, param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay,
                     bc1, bc2);
    exp_avg[i] = e.m;
    exp_avg_sq[i] = e.v;
    update[i] = e.u;
    return double(e.u) * double(e.u);
  });
  *param_sq_norm = T(pSq);
  *update_sq_norm = T(uSq);
}

/// lr * r, LAMB's step with the trust ratio r = ||p|| / ||u|| (1 if either
/// norm is 0), from the squared norms.
TCC_HOST_DEVICE inline double lamb_step_size(double lr, double param_sq_norm,
                                             double update_sq_norm) {
  const double pn = std::sqrt(param_sq_norm), un = std::sqrt(update_sq_norm);
  return lr * ((pn > 0.0 && un > 0.0) ? divide(pn, un) : 1.0);
}

/// LAMB, part 2: p -= lr * r * u with the trust ratio r from the squared norms.
template <class T>
void lamb_apply(int64_t n, T *param, const T *update, double lr,
                T param_sq_norm, T update_sq_norm) {
  const double k = lamb_step_size(lr, double(param_sq_norm), double(update_sq_norm));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    param[i] = T(double(param[i]) - k * double(update[i]));
}

/// *out = sum of x^2 (summed in double, in a fixed order).
template <class T> void sum_of_squares(int64_t n, const T *x, T *out) {
  *out = T(detail::deterministic_sum(n, [&](int64_t i) {
    const double v = x[i];
    return v * v;
  }));
}

/// From `count` squared norms (one per gradient tensor): total = sqrt(sum),
/// *coef = min(1, max_norm / (total + 1e-6)). total_norm may be nullptr.
template <class T>
void clip_grad_norm_coefficient(int64_t count, const T *sq_norms,
                                double max_norm, T *coef, T *total_norm) {
  double s = 0;
  for (int64_t k = 0; k < count; ++k)
    s += double(sq_norms[k]);
  const double total = std::sqrt(s);
  if (total_norm)
    *total_norm = T(total);
  *coef = T(std::min(1.0, max_norm / (total + 1e-6)));
}

/// ema[i] = decay * ema[i] + (1 - decay) * param[i].
template <class T>
TCC_HOST_DEVICE inline void ema_element(int64_t i, double decay, const T *param, T *ema) {
  ema[i] = T(decay * double(ema[i]) + (1.0 - decay) * double(param[i]));
}

/// ema = decay * ema + (1 - decay) * param.
template <class T>
void ema_update(int64_t n, double decay, const T *param, T *ema) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    ema_element(i, decay, param, ema);
}

/// slow[i] += alpha * (fast[i] - slow[i]); fast[i] = slow[i].
template <class T>
TCC_HOST_DEVICE inline void lookahead_element(int64_t i, double alpha, T *fast, T *slow) {
  const double sl = slow[i];
  const T s = T(sl + alpha * (double(fast[i]) - sl));
  slow[i] = s;
  fast[i] = s;
}

/// slow += alpha * (fast - slow); fast = slow.
template <class T>
void lookahead_update(int64_t n, double alpha, T *fast, T *slow) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    lookahead_element(i, alpha, fast, slow);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_OPTIMIZER_H
