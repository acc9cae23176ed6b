//===- Metrics.cpp - Per-epoch metrics and the progress line ---------------===//

#include "runtime/trainer/Metrics.h"

#include "runtime/trainer/Text.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace tcc::rt {

using Json = nlohmann::ordered_json;

std::string metricsLine(const EpochMetrics &m) {
  // JSON has no NaN or infinity; null would read as "does not apply", so
  // non-finite values are spelled as the strings Python's json module and
  // JavaScript use for them.
  auto number = [](double v) -> Json {
    if (std::isnan(v))
      return "NaN";
    if (std::isinf(v))
      return v > 0 ? "Infinity" : "-Infinity";
    return v;
  };
  auto opt = [&](const std::optional<double> &v) -> Json {
    if (!v)
      return nullptr;
    return number(*v);
  };
  Json j;
  j["type"] = m.stepRecord ? "step" : "epoch";
  if (m.epoch == std::floor(m.epoch) && std::abs(m.epoch) < 9e15)
    j["epoch"] = static_cast<int64_t>(m.epoch);
  else
    j["epoch"] = m.epoch;
  j["step"] = m.step;
  j["train_loss"] = opt(m.trainLoss);
  j["train_acc"] = opt(m.trainAcc);
  if (!m.stepRecord) {
    j["test_loss"] = opt(m.testLoss);
    j["test_acc"] = opt(m.testAcc);
    if (m.rawToo) {
      j["raw_test_loss"] = opt(m.rawTestLoss);
      j["raw_test_acc"] = opt(m.rawTestAcc);
    }
  }
  j["lr"] = opt(m.lr);
  j["elapsed_s"] = number(m.elapsedS);
  if (!m.stepRecord) {
    j["epoch_seconds"] = opt(m.epochSeconds);
    j["eval_seconds"] = opt(m.evalSeconds);
  }
  j["images_per_second"] = opt(m.imagesPerSecond);
  if (m.lossScale)
    j["loss_scale"] = number(*m.lossScale);
  if (m.skippedSteps)
    j["skipped_steps"] = *m.skippedSteps;
  if (m.final)
    j["final"] = true;
  return j.dump();
}

MetricsFile::~MetricsFile() {
  if (fd >= 0)
    close(fd);
}

bool MetricsFile::open(const std::string &p, bool append, std::string &error) {
  if (fd >= 0)
    close(fd);
  path = p;
  fd = ::open(p.c_str(),
              O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (append ? 0 : O_TRUNC),
              0666);
  if (fd < 0) {
    error = "cannot write '" + oneLine(p) + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool MetricsFile::writeLine(const std::string &line, std::string &error) {
  std::string text = line + "\n";
  const char *data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = "cannot write '" + oneLine(path) + "': " + std::strerror(errno);
      return false;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

double steadySeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ProgressLine::ProgressLine(std::ostream &out, bool enabled,
                           std::function<double()> clock)
    : out(&out), on(enabled), clock(clock ? std::move(clock) : steadySeconds) {}

void ProgressLine::update(const std::string &text, bool force) {
  if (!on)
    return;
  double now = clock();
  if (!force && now - last < 0.1)
    return;
  last = now;
  *out << '\r' << text;
  if (text.size() < shown)
    *out << std::string(shown - text.size(), ' ');
  out->flush();
  shown = text.size();
}

void ProgressLine::clear() {
  if (!on || shown == 0)
    return;
  *out << '\r' << std::string(shown, ' ') << '\r';
  out->flush();
  shown = 0;
}

} // namespace tcc::rt
