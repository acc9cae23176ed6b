//===- FloatInstantiationTest.cpp - Every kernel for float ----------------===//
//
// Explicit instantiations for T = float (the other tests run in double), and
// a check that float results agree with double ones.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "runtime/kernels/Kernels.h"

namespace tcc::rt::kernels {
using F = float;
using CF = const float;
template void conv2d_forward<F>(const Conv2dShape &, CF *, CF *, CF *, F *);
template void conv2d_backward_data<F>(const Conv2dShape &, CF *, CF *, F *);
template void conv2d_backward_filter<F>(const Conv2dShape &, CF *, CF *, F *);
template void conv2d_backward_bias<F>(const Conv2dShape &, CF *, F *);
template void linear_forward<F>(int64_t, int64_t, int64_t, CF *, CF *, CF *,
                                F *);
template void linear_backward_data<F>(int64_t, int64_t, int64_t, CF *, CF *,
                                      F *);
template void linear_backward_weight<F>(int64_t, int64_t, int64_t, CF *, CF *,
                                        F *);
template void linear_backward_bias<F>(int64_t, int64_t, CF *, F *);
template void batch_norm_forward_train<F>(const BatchNormShape &, CF *, CF *,
                                          CF *, double, double, F *, F *, F *,
                                          F *, F *);
template void batch_norm_forward_inference<F>(const BatchNormShape &, CF *,
                                              CF *, CF *, CF *, CF *, double,
                                              F *);
template void batch_norm_backward<F>(const BatchNormShape &, CF *, CF *, CF *,
                                     CF *, CF *, F *, F *, F *);
template void batch_norm_apply<F>(const BatchNormShape &, CF *, CF *, CF *, CF *,
                                  CF *, F *);
template void layer_norm_forward<F>(int64_t, int64_t, CF *, CF *, CF *, double,
                                    F *, F *, F *);
template void layer_norm_backward<F>(int64_t, int64_t, CF *, CF *, CF *, CF *,
                                     CF *, F *, F *, F *);
template void relu_forward<F>(int64_t, CF *, F *);
template void relu_backward<F>(int64_t, CF *, CF *, F *);
template void leaky_relu_forward<F>(int64_t, double, CF *, F *);
template void leaky_relu_backward<F>(int64_t, double, CF *, CF *, F *);
template void elu_forward<F>(int64_t, double, CF *, F *);
template void elu_backward<F>(int64_t, double, CF *, CF *, F *);
template void celu_forward<F>(int64_t, double, CF *, F *);
template void celu_backward<F>(int64_t, double, CF *, CF *, F *);
template void gelu_forward<F>(int64_t, CF *, F *);
template void gelu_backward<F>(int64_t, CF *, CF *, F *);
template void gelu_tanh_forward<F>(int64_t, CF *, F *);
template void gelu_tanh_backward<F>(int64_t, CF *, CF *, F *);
template void silu_forward<F>(int64_t, CF *, F *);
template void silu_backward<F>(int64_t, CF *, CF *, F *);
template void sigmoid_forward<F>(int64_t, CF *, F *);
template void sigmoid_backward<F>(int64_t, CF *, CF *, F *);
template void tanh_forward<F>(int64_t, CF *, F *);
template void tanh_backward<F>(int64_t, CF *, CF *, F *);
template void softmax_forward<F>(int64_t, int64_t, int64_t, CF *, F *);
template void log_softmax_forward<F>(int64_t, int64_t, int64_t, CF *, F *);
template void softmax_backward<F>(int64_t, int64_t, int64_t, CF *, CF *, F *);
template void log_softmax_backward<F>(int64_t, int64_t, int64_t, CF *, CF *,
                                      F *);
template void max_pool2d_forward<F>(const Pool2dShape &, CF *, F *);
template void max_pool2d_backward<F>(const Pool2dShape &, CF *, CF *, F *);
template void avg_pool2d_forward<F>(const Pool2dShape &, bool, CF *, F *);
template void avg_pool2d_backward<F>(const Pool2dShape &, bool, CF *, F *);
template void global_avg_pool_forward<F>(int64_t, int64_t, int64_t, CF *, F *);
template void global_avg_pool_backward<F>(int64_t, int64_t, int64_t, CF *, F *);
template void global_max_pool_forward<F>(int64_t, int64_t, int64_t, CF *, F *);
template void global_max_pool_backward<F>(int64_t, int64_t, int64_t, CF *, CF *,
                                          F *);
template void cross_entropy_forward<F>(int64_t, int64_t, CF *, const int64_t *,
                                       double, Reduction, F *, F *, const int64_t *);
template void cross_entropy_backward<F>(int64_t, int64_t, CF *, const int64_t *,
                                        double, Reduction, F, F *);
template void mse_loss_forward<F>(int64_t, CF *, CF *, Reduction, F *, const int64_t *,
                                  int64_t);
template void mse_loss_backward<F>(int64_t, CF *, CF *, Reduction, F, F *);
template void one_hot<F>(int64_t, int64_t, const int64_t *, F *);
template void fill<F>(int64_t, F, F *);
template void copy<F>(int64_t, CF *, F *);
template void add<F>(int64_t, CF *, CF *, F *);
template void add_accumulate<F>(int64_t, CF *, F *);
template void sub<F>(int64_t, CF *, CF *, F *);
template void mul<F>(int64_t, CF *, CF *, F *);
template void scale<F>(int64_t, F, CF *, F *);
template void scale_inplace<F>(int64_t, F, F *);
template void reduce_sum<F>(int64_t, int64_t, int64_t, CF *, F *);
template void reduce_sum_backward<F>(int64_t, int64_t, int64_t, CF *, F *);
template void concat<F>(int64_t, int64_t, int64_t, CF *const *, const int64_t *,
                        F *);
template void concat_backward<F>(int64_t, int64_t, int64_t, const int64_t *,
                                 CF *, F *const *);
template void slice<F>(int64_t, int64_t, int64_t, int64_t, int64_t, CF *, F *);
template void slice_backward<F>(int64_t, int64_t, int64_t, int64_t, int64_t,
                                CF *, F *);
template void flip<F>(int64_t, int64_t, int64_t, CF *, F *);
template void transpose<F>(int, const int64_t *, const int64_t *, CF *, F *);
template void cast<F, double>(int64_t, CF *, double *);
template void cast<double, F>(int64_t, const double *, F *);
template void uniform_fill<F>(int64_t, uint64_t, uint64_t, double, double, F *);
template void dropout_forward<F>(int64_t, double, uint64_t, uint64_t, CF *,
                                 F *);
template void dropout_backward<F>(int64_t, double, uint64_t, uint64_t, CF *,
                                  F *);
template void sgd_step<F>(int64_t, F *, CF *, F *, double, double, double,
                          double, bool, bool, bool);
template void adamw_step<F>(int64_t, F *, CF *, F *, F *, double, double,
                            double, double, double, int64_t);
template void lamb_compute_update<F>(int64_t, CF *, CF *, F *, F *, double,
                                     double, double, double, int64_t, F *, F *,
                                     F *);
template void lamb_apply<F>(int64_t, F *, CF *, double, F, F);
template void sum_of_squares<F>(int64_t, CF *, F *);
template void clip_grad_norm_coefficient<F>(int64_t, CF *, double, F *, F *);
template void ema_update<F>(int64_t, double, CF *, F *);
template void lookahead_update<F>(int64_t, double, F *, F *);
template int64_t count_correct<F>(int64_t, int64_t, CF *, const int64_t *,
                                  int64_t);
template void count_correct_accumulate<F>(int64_t, int64_t, CF *,
                                          const int64_t *, int64_t, int64_t *);
template double loss_sum<F>(int64_t, CF *, int64_t);
template void loss_sum_accumulate<F>(int64_t, CF *, int64_t, double *);
} // namespace tcc::rt::kernels

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

std::vector<float> to_float(const Vec &v) {
  return std::vector<float>(v.begin(), v.end());
}

TEST(FloatKernels, AgreeWithDouble) {
  const Conv2dShape s =
      make_conv2d_shape(2, 4, 9, 9, 6, 3, 3, 2, 2, 1, 1, 1, 1, 2);
  Vec x = random_vec(s.n * s.c * s.h * s.w, 1), w = random_vec(6 * 2 * 9, 2);
  Vec y(s.n * s.o * s.oh * s.ow);
  std::vector<float> xf = to_float(x), wf = to_float(w), yf(y.size());
  conv2d_forward(s, x.data(), w.data(), (const double *)nullptr, y.data());
  conv2d_forward(s, xf.data(), wf.data(), (const float *)nullptr, yf.data());
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(yf[i], y[i], 1e-5);

  const BatchNormShape bs{2, 6, 25, 1}; // two ghost batches of 1 sample
  Vec z(y.size()), m(12), is(12);
  std::vector<float> zf(y.size()), mf(12), isf(12), rmf(6, 0.f), rvf(6, 1.f);
  batch_norm_forward_train(
      bs, y.data(), (const double *)nullptr, (const double *)nullptr, 1e-5, 0.1,
      z.data(), m.data(), is.data(), (double *)nullptr, (double *)nullptr);
  batch_norm_forward_train(bs, yf.data(), (const float *)nullptr,
                           (const float *)nullptr, 1e-5, 0.1, zf.data(),
                           mf.data(), isf.data(), rmf.data(), rvf.data());
  for (size_t i = 0; i < z.size(); ++i)
    ASSERT_NEAR(zf[i], z[i], 1e-4);

  const int64_t labels[] = {1, 0, 3};
  std::vector<float> logits = to_float(random_vec(12, 3, -2, 2)), d(12);
  float loss = 0;
  Vec logitsD(logits.begin(), logits.end());
  double lossD = 0;
  cross_entropy_forward(3, 4, logits.data(), labels, 0.2, Reduction::Mean,
                        &loss, (float *)nullptr);
  cross_entropy_forward(3, 4, logitsD.data(), labels, 0.2, Reduction::Mean,
                        &lossD, (double *)nullptr);
  EXPECT_NEAR(loss, lossD, 1e-6);
}

} // namespace
