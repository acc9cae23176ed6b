//===- Init.cpp - Initial values of the state tensors ----------------------===//

#include "runtime/trainer/Init.h"

#include "runtime/trainer/Text.h"

#include "runtime/common/Float16.h"
#include "runtime/common/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

namespace tcc::rt {

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr,
                                      std::array<uint32_t, 2> key) {
  const philox::Words r =
      philox::philox4x32_10(philox::Words{{ctr[0], ctr[1], ctr[2], ctr[3]}}, key[0], key[1]);
  return {r.w[0], r.w[1], r.w[2], r.w[3]};
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : text) {
    h ^= static_cast<uint8_t>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}

TensorRandom::TensorRandom(uint64_t seed, std::string_view tensorName)
    : key{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
      nameHash(fnv1a64(tensorName)) {}

namespace {
constexpr double kTwoPow53Inv = 1.0 / 9007199254740992.0;

std::array<uint32_t, 4> block(const std::array<uint32_t, 2> &key,
                              uint64_t nameHash, uint64_t i) {
  return philox4x32_10({static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                        static_cast<uint32_t>(nameHash),
                        static_cast<uint32_t>(nameHash >> 32)},
                       key);
}

uint64_t bits53(uint32_t hi, uint32_t lo) {
  return (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
}
} // namespace

double TensorRandom::uniform(uint64_t i) const {
  auto w = block(key, nameHash, i);
  return static_cast<double>(bits53(w[0], w[1])) * kTwoPow53Inv;
}

double TensorRandom::normal(uint64_t i) const {
  auto w = block(key, nameHash, i);
  double u1 = static_cast<double>(bits53(w[0], w[1]) + 1) * kTwoPow53Inv;
  double u2 = static_cast<double>(bits53(w[2], w[3])) * kTwoPow53Inv;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

//===----------------------------------------------------------------------===//
// Element conversions
//===----------------------------------------------------------------------===//

// runtime/common/Float16.h, under the trainer's names.
uint16_t floatToHalf(float value) { return half::floatToF16(value); }
float halfToFloat(uint16_t bits) { return half::f16ToFloat(bits); }
uint16_t floatToBFloat16(float value) { return half::floatToBf16(value); }
float bfloat16ToFloat(uint16_t bits) { return half::bf16ToFloat(bits); }

void storeValue(DType dtype, void *dst, double value) {
  switch (dtype) {
  case DType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(dst, &f, 4);
    return;
  }
  case DType::F16: {
    uint16_t h = floatToHalf(static_cast<float>(value));
    std::memcpy(dst, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBFloat16(static_cast<float>(value));
    std::memcpy(dst, &h, 2);
    return;
  }
  case DType::I64: {
    int64_t v = 0;
    if (std::isnan(value))
      v = 0;
    else if (value >= 9.2233720368547758e18)
      v = INT64_MAX;
    else if (value <= -9.2233720368547758e18)
      v = INT64_MIN;
    else
      v = std::llround(value);
    std::memcpy(dst, &v, 8);
    return;
  }
  case DType::U8: {
    double r = std::isnan(value) ? 0 : std::nearbyint(value);
    *static_cast<uint8_t *>(dst) =
        static_cast<uint8_t>(std::clamp(r, 0.0, 255.0));
    return;
  }
  }
}

double loadValue(DType dtype, const void *src) {
  switch (dtype) {
  case DType::F32: {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, src, 2);
    return halfToFloat(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, src, 2);
    return bfloat16ToFloat(h);
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, src, 8);
    return static_cast<double>(v);
  }
  case DType::U8:
    return *static_cast<const uint8_t *>(src);
  }
  return 0;
}

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
                           std::string &error) {
  const int64_t c = data.c, h = data.h, w = data.w;
  if (!data.images || data.n <= 0) {
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
  for (int64_t img = 0; img < data.n; ++img) {
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
  const double count = static_cast<double>(data.n) * ph * pw;
  for (int64_t r = 0; r < d; ++r)
    for (int64_t s = r; s < d; ++s) {
      double v = sum[r * d + s] / count;
      sum[r * d + s] = sum[s * d + r] = v;
    }
  std::vector<double> values, vectors;
  symmetricEigen(sum, static_cast<int>(d), values, vectors);

  weights.assign(static_cast<size_t>(2 * d * d), 0.0);
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
    double scale = sign / std::sqrt(std::max(lambda, 0.0) + kWhiteningEps);
    for (int64_t k = 0; k < d; ++k) {
      double v = vectors[k * d + col] * scale;
      weights[r * d + k] = v;
      weights[(d + r) * d + k] = -v;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// State initialisation
//===----------------------------------------------------------------------===//

bool needsWhiteningData(const ModelInfo &info) {
  for (const StateTensor &t : info.state)
    if (t.init.kind == "patch_whitening")
      return true;
  return false;
}

namespace {

uint8_t *at(void *state, const StateTensor &t) {
  return static_cast<uint8_t *>(state) + t.offset;
}

bool initOne(const StateTensor &t, void *state, uint64_t seed,
             const WhiteningData *whitening, std::string &error) {
  const std::string where = "state tensor '" + t.name + "'";
  uint8_t *dst = at(state, t);
  const size_t size = dtypeSize(t.dtype);
  const int64_t n = t.numElements();
  const InitDesc &init = t.init;
  if (init.kind == "constant") {
    std::vector<uint8_t> one(size);
    storeValue(t.dtype, one.data(), init.a);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + i * size, one.data(), size);
    return true;
  }
  if (init.kind == "uniform" || init.kind == "dirac") {
    TensorRandom rng(seed, t.name);
    for (int64_t i = 0; i < n; ++i)
      storeValue(t.dtype, dst + i * size,
                 init.a + (init.b - init.a) * rng.uniform(i));
    if (init.kind == "uniform")
      return true;
    if (t.shape.size() < 3) {
      error = where + " has dirac init, which needs a conv weight [O, I, "
                      "k...], but its shape is " +
              shapeText(t.shape);
      return false;
    }
    const int64_t o = t.shape[0], in = t.shape[1];
    int64_t spatial = 1, center = 0;
    for (size_t k = 2; k < t.shape.size(); ++k) {
      spatial *= t.shape[k];
      center = center * t.shape[k] + t.shape[k] / 2;
    }
    for (int64_t f = 0; f < std::min(o, in); ++f) {
      uint8_t *filter = dst + f * in * spatial * size;
      for (int64_t i = 0; i < in * spatial; ++i)
        storeValue(t.dtype, filter + i * size, 0.0);
      storeValue(t.dtype, filter + (f * spatial + center) * size, 1.0);
    }
    return true;
  }
  if (init.kind == "normal") {
    TensorRandom rng(seed, t.name);
    for (int64_t i = 0; i < n; ++i)
      storeValue(t.dtype, dst + i * size, init.a + init.b * rng.normal(i));
    return true;
  }
  if (init.kind == "patch_whitening") {
    if (!whitening || !whitening->images) {
      error = where + " has patch_whitening init, which needs the training "
                      "images, but none were given";
      return false;
    }
    if (t.shape.size() != 4) {
      error = where + " has patch_whitening init, which needs a conv weight "
                      "[O, C, kh, kw], but its shape is " +
              shapeText(t.shape);
      return false;
    }
    const int64_t o = t.shape[0], c = t.shape[1], kh = t.shape[2],
                  kw = t.shape[3];
    if (c != whitening->c || o != 2 * c * kh * kw) {
      error = where + " has patch_whitening init, which needs shape [" +
              std::to_string(2 * whitening->c * kh * kw) + ", " +
              std::to_string(whitening->c) + ", " + std::to_string(kh) + ", " +
              std::to_string(kw) + "] (2*C*kh*kw filters for " +
              std::to_string(whitening->c) + "-channel images), but it is " +
              shapeText(t.shape);
      return false;
    }
    std::vector<double> weights;
    if (!patchWhiteningWeights(*whitening, kh, kw, weights, nullptr, error)) {
      error = where + ": " + error;
      return false;
    }
    for (int64_t i = 0; i < n; ++i)
      storeValue(t.dtype, dst + i * size, weights[i]);
    return true;
  }
  error = where + " has an unknown init kind '" + init.kind +
          "' (constant, uniform, normal, dirac, patch_whitening, copy)";
  return false;
}

} // namespace

bool applyCopyInits(const ModelInfo &info, void *state, std::string &error) {
  std::map<std::string, const StateTensor *> byName;
  for (const StateTensor &t : info.state)
    byName[t.name] = &t;
  std::set<std::string> done;
  // Resolve chains (a copy of a copy) in dependency order; a cycle is an
  // error.
  std::vector<const StateTensor *> pending;
  for (const StateTensor &t : info.state)
    if (t.init.kind == "copy") {
      auto it = byName.find(t.init.source);
      if (it == byName.end()) {
        error = "state tensor '" + t.name + "' is a copy of '" +
                t.init.source + "', which is not a state tensor";
        return false;
      }
      const StateTensor &s = *it->second;
      if (s.shape != t.shape) {
        error = "state tensor '" + t.name + "' " + shapeText(t.shape) +
                " is a copy of '" + s.name + "', whose shape is " +
                shapeText(s.shape);
        return false;
      }
      pending.push_back(&t);
    }
  while (!pending.empty()) {
    std::vector<const StateTensor *> later;
    for (const StateTensor *t : pending) {
      const StateTensor &s = *byName[t->init.source];
      if (s.init.kind == "copy" && !done.count(s.name)) {
        later.push_back(t);
        continue;
      }
      uint8_t *dst = at(state, *t);
      const uint8_t *src = at(state, s);
      if (s.dtype == t->dtype) {
        std::memmove(dst, src, t->numBytes());
      } else {
        size_t ds = dtypeSize(t->dtype), ss = dtypeSize(s.dtype);
        for (int64_t i = 0; i < t->numElements(); ++i)
          storeValue(t->dtype, dst + i * ds, loadValue(s.dtype, src + i * ss));
      }
      done.insert(t->name);
    }
    if (later.size() == pending.size()) {
      error = "state tensor '" + later.front()->name +
              "' is part of a cycle of copy inits";
      return false;
    }
    pending.swap(later);
  }
  return true;
}

bool initializeState(const ModelInfo &info, void *state, uint64_t seed,
                     const WhiteningData *whitening, std::string &error) {
  for (const StateTensor &t : info.state)
    if (t.offset + t.numBytes() > info.stateBytes) {
      error = "internal error: state tensor '" + t.name +
              "' lies outside the state arena";
      return false;
    }
  for (const StateTensor &t : info.state)
    if (t.init.kind != "copy" && !initOne(t, state, seed, whitening, error))
      return false;
  return applyCopyInits(info, state, error);
}

std::vector<std::string> foldRemovedBiases(const ModelInfo &info, void *state) {
  std::vector<std::string> notes;
  auto *bytes = static_cast<uint8_t *>(state);
  for (const StateTensor &bias : info.state) {
    if (bias.foldedInto.empty())
      continue;
    const StateTensor *mean = nullptr;
    for (const StateTensor &t : info.state)
      if (t.name == bias.foldedInto)
        mean = &t;
    const int64_t n = bias.numElements();
    if (!mean || mean->numElements() != n)
      continue; // the compiler pairs them; a mismatch cannot be folded
    const size_t size = dtypeSize(bias.dtype), meanSize = dtypeSize(mean->dtype);
    bool nonzero = false;
    for (int64_t i = 0; i < n && !nonzero; ++i)
      nonzero = loadValue(bias.dtype, bytes + bias.offset + i * size) != 0;
    if (!nonzero)
      continue;
    for (int64_t i = 0; i < n; ++i) {
      uint8_t *m = bytes + mean->offset + i * meanSize;
      uint8_t *b = bytes + bias.offset + i * size;
      storeValue(mean->dtype, m, loadValue(mean->dtype, m) - loadValue(bias.dtype, b));
      storeValue(bias.dtype, b, 0);
    }
    notes.push_back(bias.name + " is not zero, but the batch norm after it cancels it (tcc "
                    "removed it from the step: bn-bias-elimination); folded into " +
                    mean->name + " (running_mean -= bias, bias = 0), which computes the same "
                    "function");
  }
  return notes;
}

} // namespace tcc::rt
