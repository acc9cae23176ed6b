//===- InitWhitening.h - Patch-whitening initial weights ------*- C++ -*-===//
//
// Patch whitening (airbench94's init_whitening_conv; myrtle.ai's ResNet-9
// whitening_filter): for a conv weight [O, C, kh, kw] with O = D or 2*D,
// D = C*kh*kw, take every kh x kw patch (all C channels, stride 1, no
// padding) of the first `images` training images (normalised, not
// augmented), flatten each to D values in (c, i, j) order, form the
// uncentred second-moment matrix S = sum(p p^T) / (#patches - ddof)
// (airbench's "covariance" divides by n, cifar10-fast's by n - 1; in
// double), take its eigendecomposition (cyclic Jacobi), order eigenvalues
// descending, and set filter r = v_r / sqrt(lambda_r + eps), and with
// O = 2*D filter D + r = -filter r (airbench's [V; -V]).
// Eigenvector signs are arbitrary in any solver; ours makes each vector's
// largest-magnitude component positive. Eigenvalues are clamped at 0 before
// adding eps (the matrix is positive semi-definite; this only guards
// against rounding). Part of Init.h, which users include.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_INITWHITENING_H
#define TCC_RUNTIME_TRAINER_INITWHITENING_H

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

/// airbench's settings, model.json's defaults.
constexpr int64_t kWhiteningImages = 5000;
constexpr double kWhiteningEps = 5e-4;

/// model.json's patch_whitening settings.
struct WhiteningSettings {
  double eps = kWhiteningEps;
  int64_t images = kWhiteningImages; ///< the first that many (or all there are)
  int ddof = 0;                      ///< 1: the covariance divides by n - 1
  bool negated = true;               ///< [V; -V] (2*D filters), else V (D)
};

/// Eigen-decomposition of the symmetric n x n row-major matrix `a` by cyclic
/// Jacobi rotations. `values` ascending (as torch.linalg.eigh); `vectors`
/// row-major n x n with eigenvector j in column j.
void symmetricEigen(std::vector<double> a, int n, std::vector<double> &values,
                    std::vector<double> &vectors);

/// Normalised training images for patch whitening: [n, c, h, w] float.
struct WhiteningData {
  const float *images = nullptr;
  int64_t n = 0, c = 0, h = 0, w = 0;
};

/// The whitening conv weight [(2*)C*kh*kw, C, kh, kw] (row-major, double)
/// over the first `settings.images` images in `data`. `eigenvalues`
/// (optional) receives the descending eigenvalues.
bool patchWhiteningWeights(const WhiteningData &data, int64_t kh, int64_t kw,
                           std::vector<double> &weights,
                           std::vector<double> *eigenvalues,
                           std::string &error,
                           const WhiteningSettings &settings = WhiteningSettings());

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_INITWHITENING_H
