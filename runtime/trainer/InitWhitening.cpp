//===- InitWhitening.cpp - Jacobi eigen solver, patch whitening -----------===//

#include "runtime/trainer/InitWhitening.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tcc::rt {

//===----------------------------------------------------------------------===//
// Symmetric eigen-decomposition (cyclic Jacobi)
//===----------------------------------------------------------------------===//

void symmetricEigen(std::vector<double> a, int n, std::vector<double> &values,
                    std::vector<double> &vectors) {
  vectors.assign(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    vectors[i * n + i] = 1.0;
  auto A = [&](int r, int c) -> double & { return a[r * n + c]; };
  auto V = [&](int r, int c) -> double & { return vectors[r * n + c]; };
  double total = 0;
  for (double v : a)
    total += v * v;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q)
        off += A(p, q) * A(p, q);
    if (off == 0 || off <= 1e-30 * total)
      break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        double apq = A(p, q);
        if (apq == 0)
          continue;
        double theta = (A(q, q) - A(p, p)) / (2 * apq);
        double t = std::abs(theta) > 1e150
                       ? 0.5 / theta
                       : (theta >= 0 ? 1.0 : -1.0) /
                             (std::abs(theta) + std::sqrt(theta * theta + 1));
        double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {
          double akp = A(k, p), akq = A(k, q);
          A(k, p) = c * akp - s * akq;
          A(k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {
          double apk = A(p, k), aqk = A(q, k);
          A(p, k) = c * apk - s * aqk;
          A(q, k) = s * apk + c * aqk;
        }
        A(p, q) = A(q, p) = 0;
        for (int k = 0; k < n; ++k) {
          double vkp = V(k, p), vkq = V(k, q);
          V(k, p) = c * vkp - s * vkq;
          V(k, q) = s * vkp + c * vkq;
        }
      }
  }
  // Ascending eigenvalues, vectors permuted alike.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return A(x, x) < A(y, y); });
  values.resize(n);
  std::vector<double> sorted(static_cast<size_t>(n) * n);
  for (int j = 0; j < n; ++j) {
    values[j] = A(order[j], order[j]);
    for (int k = 0; k < n; ++k)
      sorted[k * n + j] = V(k, order[j]);
  }
  vectors.swap(sorted);
}

//===----------------------------------------------------------------------===//
// Patch whitening
//===----------------------------------------------------------------------===//

bool patchWhiteningWeights(const WhiteningData &data, int64_t kh, int64_t kw,
                           std::vector<double> &weights,
                           std::vector<double> *eigenvalues,
                           std::string &error, const WhiteningSettings &settings) {
  const int64_t c = data.c, h = data.h, w = data.w;
  const int64_t images = std::min(data.n, settings.images);
  if (!data.images || images <= 0) {
    error = "patch whitening needs training images, and there are none";
    return false;
  }
  if (kh < 1 || kw < 1 || kh > h || kw > w) {
    error = "patch whitening: a " + std::to_string(kh) + "x" +
            std::to_string(kw) + " kernel does not fit the " +
            std::to_string(h) + "x" + std::to_string(w) + " images";
    return false;
  }
  const int64_t d = c * kh * kw;
  const int64_t ph = h - kh + 1, pw = w - kw + 1;
  std::vector<double> sum(static_cast<size_t>(d * d), 0.0);
  std::vector<double> patch(static_cast<size_t>(d));
  for (int64_t img = 0; img < images; ++img) {
    const float *x = data.images + img * c * h * w;
    for (int64_t y = 0; y < ph; ++y)
      for (int64_t xx = 0; xx < pw; ++xx) {
        int64_t k = 0;
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              patch[k++] = x[(ch * h + y + i) * w + xx + j];
        for (int64_t r = 0; r < d; ++r) {
          double pr = patch[r];
          double *row = &sum[r * d];
          for (int64_t s = r; s < d; ++s)
            row[s] += pr * patch[s];
        }
      }
  }
  const double count = static_cast<double>(images) * ph * pw - settings.ddof;
  for (int64_t r = 0; r < d; ++r)
    for (int64_t s = r; s < d; ++s) {
      double v = sum[r * d + s] / count;
      sum[r * d + s] = sum[s * d + r] = v;
    }
  std::vector<double> values, vectors;
  symmetricEigen(sum, static_cast<int>(d), values, vectors);

  weights.assign(static_cast<size_t>((settings.negated ? 2 : 1) * d * d), 0.0);
  if (eigenvalues)
    eigenvalues->clear();
  for (int64_t r = 0; r < d; ++r) {
    int64_t col = d - 1 - r; // descending, as airbench's flip(0)
    double lambda = values[col];
    if (eigenvalues)
      eigenvalues->push_back(lambda);
    int64_t biggest = 0;
    for (int64_t k = 1; k < d; ++k)
      if (std::abs(vectors[k * d + col]) > std::abs(vectors[biggest * d + col]))
        biggest = k;
    double sign = vectors[biggest * d + col] < 0 ? -1.0 : 1.0;
    double scale = sign / std::sqrt(std::max(lambda, 0.0) + settings.eps);
    for (int64_t k = 0; k < d; ++k) {
      double v = vectors[k * d + col] * scale;
      weights[r * d + k] = v;
      if (settings.negated)
        weights[(d + r) * d + k] = -v;
    }
  }
  return true;
}

} // namespace tcc::rt
