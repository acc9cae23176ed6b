//===- Profile.h - The report of ./train --profile -----------------*- C++ -*-===//
//
// A profiled run times every op of every training step (runtime/StepProfile.h);
// the first step of the run is a warm-up (lazy loading, first-call costs of
// the libraries) and counts only when it is the run's only step. These
// functions turn the model's per-site totals into the profile file (JSON)
// and the summary the trainer prints. docs/training.md, "Profiling a step".
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_PROFILE_H
#define TCC_RUNTIME_TRAINER_PROFILE_H

#include "runtime/CompiledModel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

/// `after` less `before` (the totals at the end of the warm-up step),
/// site by site.
std::vector<OpTime> profileSince(const std::vector<OpTime> &after,
                                 const std::vector<OpTime> &before);

/// The profile file: the model, the target, `steps` profiled steps, per
/// site and per op kind the milliseconds per step, calls per step and share
/// of the step, and the collectives' communication time and how much of it
/// the step's other work hid.
std::string profileJson(const ModelInfo &info, const std::vector<OpTime> &sites,
                        int64_t steps, int64_t warmupSteps);

/// A few lines for the terminal: the step time, the `top` op kinds that
/// took the most of it, and the communication time (if any collective).
std::string profileSummary(const std::vector<OpTime> &sites, int64_t steps, int top);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_PROFILE_H
