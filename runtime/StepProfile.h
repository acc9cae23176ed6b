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
// the GPU spends them). A gradient bucket on the cuda target's side stream
// is timed on that stream too (SiteTotals::bucket). Plain C++, no CUDA.
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
/// model.json node it comes from ("" for the step's own ops); for a
/// collective, its gradient bucket (tcc-bucket-collectives' index, -1 for
/// none), the bytes of the whole tensors it reduces or gathers, and whether
/// it runs on the cuda step's side stream (tcc-cuda-overlap-buckets).
struct OpSite {
  const char *op;
  const char *node;
  bool collective = false;
  int bucket = -1;
  int64_t bytes = 0;
  bool sideStream = false;
};

/// The time the training steps spent in one site, summed over the profiled
/// steps, and how often it ran (a micro-batch loop runs its sites once per
/// micro-batch). A side-stream bucket's `seconds` are the fork on the step's
/// stream; `sideSeconds` its collective on the side stream, timed
/// `sideCalls` times, of which `hiddenSeconds` passed before the step's
/// stream reached the bucket's join.
struct OpTime {
  std::string op, node;
  int64_t calls = 0;
  double seconds = 0;
  bool collective = false;
  int bucket = -1;
  int64_t bytes = 0;
  bool sideStream = false;
  int64_t sideCalls = 0;
  double sideSeconds = 0, hiddenSeconds = 0;
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
      OpTime &t = times.back();
      t.op = site.op;
      t.node = site.node;
      t.collective = site.collective;
      t.bucket = site.bucket;
      t.bytes = site.bytes;
      t.sideStream = site.sideStream;
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
  /// Side-stream bucket `bucket` ran from `start` to `end` (seconds), and
  /// the step's stream reached its join at `reached`: the part of its run
  /// after that the step waited for (exposed), the part before was hidden.
  void bucket(int bucket, double start, double end, double reached) {
    for (OpTime &t : times)
      if (t.sideStream && t.bucket == bucket) {
        const double ran = end > start ? end - start : 0;
        const double exposed = end - (reached > start ? reached : start);
        ++t.sideCalls;
        t.sideSeconds += ran;
        t.hiddenSeconds += exposed > 0 ? ran - exposed : ran;
        return;
      }
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
