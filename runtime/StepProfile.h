//===- StepProfile.h - Per-op times of the training step ---------*- C++ -*-===//
//
// ./train --profile (docs/training.md, "Profiling a step"). The code
// generator numbers the ops of the training step in the order they run,
// its "sites" (site 0 is gathering the batch, the last one the state copies
// and totals at the end of the step), and prints before each op
//
//   if (args.clock) args.clock->at(K);
//
// so a step without a clock costs one untaken branch per op. A profiled step
// runs with a clock: an op's time is from its mark to the next one, on the
// host's steady clock for the cpu target and between CUDA events on the
// model's stream for the cuda target (the gaps between kernels included, as
// the GPU spends them). Plain C++, no CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_STEPPROFILE_H
#define TCC_RUNTIME_STEPPROFILE_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

/// One op of the generated training step, as a profile names it: the op
/// ("tcc.conv2d_backward_data", "fusion_group:norm_epilogue") and the
/// model.json node it comes from ("" for the step's own ops).
struct OpSite {
  const char *op;
  const char *node;
};

/// The time the training steps spent in one site, summed over the profiled
/// steps, and how often it ran (a micro-batch loop runs its sites once per
/// micro-batch).
struct OpTime {
  std::string op, node;
  int64_t calls = 0;
  double seconds = 0;
};

/// What the generated step calls: the op of site `site` starts now.
class OpClock {
public:
  virtual ~OpClock() = default;
  virtual void at(int site) = 0;
};

/// The per-site totals of a clock whose marks arrive as (site, seconds)
/// pairs, in order; the base of the targets' clocks.
class SiteTotals {
public:
  explicit SiteTotals(const std::vector<OpSite> &sites) {
    for (const OpSite &site : sites) {
      times.emplace_back();
      times.back().op = site.op;
      times.back().node = site.node;
    }
  }
  /// Site `site` started at `seconds` (-1: the step ended).
  void mark(int site, double seconds) {
    if (current >= 0)
      times[current].seconds += seconds - since;
    if (site >= 0 && size_t(site) < times.size()) {
      ++times[site].calls;
      current = site;
    } else {
      current = -1;
    }
    since = seconds;
  }
  const std::vector<OpTime> &totals() const { return times; }

private:
  std::vector<OpTime> times;
  int current = -1;
  double since = 0;
};

/// The cpu target's clock: the ops run on the calling thread, so a mark is
/// the host's time.
class HostOpClock final : public OpClock {
public:
  explicit HostOpClock(const std::vector<OpSite> &sites) : sums(sites) {}
  void at(int site) override { sums.mark(site, now()); }
  void endStep() { sums.mark(-1, now()); }
  const std::vector<OpTime> &totals() const { return sums.totals(); }

private:
  static double now() {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  SiteTotals sums;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_STEPPROFILE_H
