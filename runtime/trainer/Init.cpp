//===- Init.cpp - Initial values of the state tensors ---------------------===//
//
// The walk over the state: each tensor from its InitDesc, then the copies,
// and the folding of removed biases. Random streams: InitRandom.cpp; element
// conversions: InitValues.cpp; patch whitening: InitWhitening.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Init.h"

#include "runtime/trainer/Text.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace tcc::rt {

//===----------------------------------------------------------------------===//
// State initialisation
//===----------------------------------------------------------------------===//

int64_t whiteningImagesNeeded(const ModelInfo &info) {
  int64_t most = 0;
  for (const StateTensor &t : info.state)
    if (t.init.kind == "patch_whitening")
      most = std::max(most, static_cast<int64_t>(t.init.b));
  return most;
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
    const int64_t d = whitening->c * kh * kw;
    if (c != whitening->c || (o != d && o != 2 * d)) {
      error = where + " has patch_whitening init, which needs shape [" +
              std::to_string(2 * d) + ", " + std::to_string(whitening->c) + ", " +
              std::to_string(kh) + ", " + std::to_string(kw) + "] (2*C*kh*kw filters for " +
              std::to_string(whitening->c) + "-channel images, or C*kh*kw without the "
              "negated ones), but it is " + shapeText(t.shape);
      return false;
    }
    WhiteningSettings settings;
    settings.eps = init.a;
    settings.images = static_cast<int64_t>(init.b);
    settings.ddof = static_cast<int>(init.c);
    settings.negated = o == 2 * d;
    std::vector<double> weights;
    if (!patchWhiteningWeights(*whitening, kh, kw, weights, nullptr, error, settings)) {
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
        convertValues(t->dtype, dst, s.dtype, src, t->numElements());
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

/// An embedding's padding row, zeroed after its table's draw.
static bool zeroRowOf(const StateTensor &t, void *state, std::string &error) {
  if (!t.shardOf.empty() || t.shape.empty() || t.init.zeroRow >= t.shape[0]) {
    error = "state tensor '" + t.name + "' has a zero row " + std::to_string(t.init.zeroRow) +
            " but its shape is " + shapeText(t.shape) +
            (t.shardOf.empty() ? "" : " (a sharded chunk: shard an embedding's table is not "
                                      "supported yet; set train.distributed.shard to none)");
    return false;
  }
  const int64_t rowElements = t.numElements() / t.shape[0];
  const size_t size = dtypeSize(t.dtype);
  uint8_t *row = at(state, t) + t.init.zeroRow * rowElements * size;
  for (int64_t i = 0; i < rowElements; ++i)
    storeValue(t.dtype, row + i * size, 0.0);
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
  for (const StateTensor &t : info.state) {
    if (t.init.kind != "copy" && !initOne(t, state, seed, whitening, error))
      return false;
    if (t.init.zeroRow >= 0 && !zeroRowOf(t, state, error))
      return false;
  }
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
