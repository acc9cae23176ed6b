//===- TestUtil.h - Random data and the gradient check ----------*- C++ -*-===//
#ifndef TCC_TEST_RUNTIME_KERNELS_TESTUTIL_H
#define TCC_TEST_RUNTIME_KERNELS_TESTUTIL_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace tcc::rt::kernels::test {

using Vec = std::vector<double>;

/// n uniform values in [lo, hi) from a seeded generator.
inline Vec random_vec(size_t n, uint64_t seed, double lo = -1.0,
                      double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Vec v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

/// Like random_vec, but every |value| >= margin (away from kinks at 0).
inline Vec random_vec_away_from_zero(size_t n, uint64_t seed,
                                     double margin = 0.05) {
  Vec v = random_vec(n, seed, -1.0, 1.0);
  for (double &x : v)
    x = x >= 0 ? margin + x * (1.0 - margin) : -margin + x * (1.0 - margin);
  return v;
}

/// n distinct values (a shuffled grid of spacing 0.01 with a little noise): no
/// ties and no near-ties, for max-based ops.
inline Vec random_distinct(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Vec v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (double(i) - double(n) / 2) * 0.01;
  std::shuffle(v.begin(), v.end(), rng);
  std::uniform_real_distribution<double> noise(0.0, 0.003);
  for (double &x : v)
    x += noise(rng);
  return v;
}

/// sum a[i] * b[i] in long double (so that the finite differences see the
/// function, not the rounding of the sum).
inline long double dot_ld(const Vec &a, const Vec &b) {
  long double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += (long double)a[i] * (long double)b[i];
  return s;
}

/// Checks `grad` = d<f(x), dy>/dx against central differences
/// (<f(x+h e_i), dy> - <f(x-h e_i), dy>) / 2h for every element of x, or for
/// `max_checks` randomly chosen ones when x is larger. `f` writes f(x) for the
/// current contents of x into its argument (sized like dy). Passes when
/// |grad - fd| <= rtol * max(|grad|, |fd|) + atol, atol = 1e-9 * (1 +
/// sum|f*dy|).
inline void check_gradient(const std::string &what, Vec &x, const Vec &grad,
                           const Vec &dy, const std::function<void(Vec &)> &f,
                           size_t max_checks = 0, double h = 1e-6,
                           double rtol = 1e-6) {
  ASSERT_EQ(x.size(), grad.size()) << what;
  Vec out(dy.size());
  f(out);
  double scale = 0;
  for (size_t k = 0; k < out.size(); ++k)
    scale += std::fabs(out[k] * dy[k]);
  const double atol = 1e-9 * (1.0 + scale);

  std::vector<size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), size_t(0));
  if (max_checks && idx.size() > max_checks) {
    std::mt19937_64 rng(12345 + x.size());
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(max_checks);
  }
  double maxAbsGrad = 0, worst = 0; // worst = max |grad - fd| / tol
  int failures = 0;
  for (size_t i : idx) {
    const double xi = x[i];
    x[i] = xi + h;
    f(out);
    const long double lp = dot_ld(out, dy);
    x[i] = xi - h;
    f(out);
    const long double lm = dot_ld(out, dy);
    x[i] = xi;
    const double fd = double((lp - lm) / (2.0L * h));
    const double tol =
        rtol * std::max(std::fabs(fd), std::fabs(grad[i])) + atol;
    maxAbsGrad = std::max(maxAbsGrad, std::fabs(grad[i]));
    worst = std::max(worst, std::fabs(fd - grad[i]) / tol);
    if (!(std::fabs(fd - grad[i]) <= tol) && failures++ < 5)
      ADD_FAILURE() << what << ": element " << i << " analytic " << grad[i]
                    << " finite-difference " << fd << " (tol " << tol << ")";
  }
  if (std::getenv("TCC_GRADCHECK_VERBOSE"))
    std::printf("gradcheck %-45s %4zu elements, max |error|/tol %.3g\n",
                what.c_str(), idx.size(), worst);
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << idx.size()
                         << " elements differ";
  // A check of an all-zero gradient would prove little.
  EXPECT_GT(maxAbsGrad, 1e-3) << what << ": gradient is (almost) zero";
}

} // namespace tcc::rt::kernels::test

#endif // TCC_TEST_RUNTIME_KERNELS_TESTUTIL_H
