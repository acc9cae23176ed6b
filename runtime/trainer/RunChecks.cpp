//===- RunChecks.cpp - Checks and helpers shared by the run's phases ------===//

#include "runtime/trainer/Run.h"

#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Interrupt.h"
#include "runtime/trainer/SaveTarget.h"
#include "runtime/trainer/Text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace tcc::rt::detail {

//===----------------------------------------------------------------------===//
// Data checks
//===----------------------------------------------------------------------===//

namespace {

void checkLabels(const Dataset &d, const std::string &where, const ModelInfo &info) {
  if (d.perToken)
    fail(where + " has [N, " + std::to_string(d.targets) + "] targets (one class per token), "
         "but model '" + info.name + "' takes one class per sample; set loss.targets "
         "\"sequence\" for per-token targets, or save [N] labels");
  for (int64_t i = 0; i < d.n; ++i)
    if (d.labels[i] < 0 || d.labels[i] >= info.classes)
      fail(where + " has label " + std::to_string(d.labels[i]) +
           " (sample " + std::to_string(i) + "), but model '" + info.name +
           "' has " + std::to_string(info.classes) + " classes [0, " +
           std::to_string(info.classes) + ")");
}

/// Token ids [N, T] (an NPY integer array): the model's T, ids below its
/// vocabulary, each problem named by file and position.
void checkTokens(const Dataset &d, const char *which, const std::string &path,
                 const ModelInfo &info) {
  const std::string file =
      oneLine(path) + "/" + (std::string(which) == "test" ? "test_x.npy" : "train_x.npy");
  if (!d.tokens)
    fail(file + ": holds " + (d.isFloat ? "float32" : "uint8") + " images, but model '" +
         info.name + "' takes token ids (input.type \"tokens\"): save integer ids [N, T] " +
         "(int32, int64, uint16 or uint8)");
  if (info.vocab == 0)
    fail(file + ": holds integer token ids [N, T], but model '" + info.name +
         "' takes input " + shapeText(info.inputShape) +
         " of float features; declare \"type\": \"tokens\" in its input, or save float32 "
         "features");
  if (info.inputShape.size() != 1 || d.w != info.inputShape[0])
    fail(file + ": holds sequences of " + std::to_string(d.w) + " tokens ([" +
         std::to_string(d.n) + ", " + std::to_string(d.w) + "]), but model '" + info.name +
         "' takes " + std::to_string(info.inputShape[0]) + " (input.shape " +
         shapeText(info.inputShape) + ")");
  for (int64_t i = 0; i < d.n * d.w; ++i)
    if (d.f32[i] >= float(info.vocab))
      fail(file + ": token id " + std::to_string(int64_t(d.f32[i])) + " at [" +
           std::to_string(i / d.w) + ", " + std::to_string(i % d.w) + "] is not below input.vocab " +
           std::to_string(info.vocab) + " of model '" + info.name + "'");
  if (info.sequenceTargets == 0) {
    checkLabels(d, std::string("the ") + which + " set in '" + oneLine(path) + "'", info);
    return;
  }
  // Sequence targets [N, T]: a class or ignore_index at each position.
  const std::string yFile =
      oneLine(path) + "/" + (std::string(which) == "test" ? "test_y.npy" : "train_y.npy");
  if (!d.perToken || d.targets != info.sequenceTargets)
    fail(yFile + ": holds " + (!d.perToken ? "one class per sample ([" + std::to_string(d.n) + "])"
                                             : std::to_string(d.targets) + " targets per sample") +
         ", but model '" + info.name + "' has sequence targets (loss.targets \"sequence\"): save " +
         "[N, " + std::to_string(info.sequenceTargets) + "], one class per token");
  for (int64_t i = 0; i < d.n * d.targets; ++i)
    if (d.labels[i] != info.ignoreIndex && (d.labels[i] < 0 || d.labels[i] >= info.classes))
      fail(yFile + ": target " + std::to_string(d.labels[i]) + " at [" +
           std::to_string(i / d.targets) + ", " + std::to_string(i % d.targets) +
           "] is neither a class in [0, " + std::to_string(info.classes) +
           ") nor loss.ignore_index " + std::to_string(info.ignoreIndex) + " of model '" +
           info.name + "'");
}

} // namespace

void checkDataset(const Dataset &d, const char *which, const std::string &path,
                  const ModelInfo &info) {
  const std::string where =
      std::string("the ") + which + " set in '" + oneLine(path) + "'";
  const int64_t sample = d.c * d.h * d.w;
  if (d.n < 0 || d.c < 0 || d.h < 0 || d.w < 0 ||
      static_cast<int64_t>(d.labels.size()) != d.n * d.targets ||
      (d.isFloat ? static_cast<int64_t>(d.f32.size())
                 : static_cast<int64_t>(d.u8.size())) != d.n * sample)
    fail("internal error: " + where + " was loaded with inconsistent sizes");
  if (info.vocab > 0 || d.tokens) {
    checkTokens(d, which, path, info);
    return;
  }
  std::vector<int64_t> shape = {d.c, d.h, d.w};
  bool ok;
  if (info.inputShape.size() == 3) {
    ok = shape == info.inputShape;
  } else {
    int64_t n = 1;
    for (int64_t x : info.inputShape)
      n *= x;
    ok = n == sample;
  }
  if (!ok) {
    // The commonest mistake: images saved channels-last, as torchvision's
    // CIFAR10.data and PIL hold them ([N, H, W, C] read as [N, C, H, W]).
    const std::vector<int64_t> &in = info.inputShape;
    bool channelsLast = in.size() == 3 && d.c == in[1] && d.h == in[2] && d.w == in[0];
    fail(where + " has images " + shapeText(shape) + ", but model '" +
         info.name + "' takes input " + shapeText(info.inputShape) +
         (channelsLast ? " (the images look channels-last, [N, H, W, C]: save "
                         "them as [N, C, H, W], e.g. x.transpose(0, 3, 1, 2); "
                         "docs/data.md)"
                       : ""));
  }
  checkLabels(d, where, info);
}

//===----------------------------------------------------------------------===//
// State helpers
//===----------------------------------------------------------------------===//

const StateTensor *findCounter(const ModelInfo &info) {
  for (const StateTensor &t : info.state)
    if (t.name == "step")
      return &t;
  return nullptr;
}

int64_t readCounter(const StateTensor &t, const void *hostState) {
  return static_cast<int64_t>(
      loadValue(t.dtype, static_cast<const uint8_t *>(hostState) + t.offset));
}

void checkLayout(const ModelInfo &info) {
  if (info.batchSize < 1)
    fail("internal error: the compiled model has batch size " +
         std::to_string(info.batchSize));
  if (info.classes < 1)
    fail("internal error: the compiled model has " +
         std::to_string(info.classes) + " classes");
  for (const StateTensor &t : info.state) {
    for (int64_t d : t.shape)
      if (d < 0)
        fail("internal error: state tensor '" + t.name +
             "' has a negative dimension");
    if (t.offset > info.stateBytes || t.numBytes() > info.stateBytes - t.offset)
      fail("internal error: state tensor '" + t.name +
           "' lies outside the state arena");
  }
}

/// The largest step count a counter of `dtype` holds exactly.
int64_t largestCount(DType dtype) {
  switch (dtype) {
  case DType::I64:
    return INT64_MAX;
  case DType::F32:
    return int64_t(1) << 24;
  case DType::F16:
    return 2048;
  case DType::BF16:
    return 256;
  case DType::U8:
    return 255;
  }
  return INT64_MAX;
}

/// "2", "0.3", "1e+30".
std::string numberText(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string durationText(double seconds) {
  const int64_t s = seconds > 0 && seconds < 1e9 ? static_cast<int64_t>(seconds + 0.5) : 0;
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)(s / 3600),
                  (long long)(s / 60 % 60), (long long)(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(s / 60),
                  (long long)(s % 60));
  return buf;
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * x);
  return buf;
}

} // namespace tcc::rt::detail
