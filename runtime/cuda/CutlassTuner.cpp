//===- CutlassTuner.cpp - CUTLASS's convolutions timed beside cuDNN -------===//

#include "runtime/cuda/CutlassTuner.h"

#include "runtime/cuda/TuneTiming.h"

#include <algorithm>
#include <cmath>

namespace tcc::cuda {

namespace {

std::vector<CutlassCandidate> &registry() {
  static std::vector<CutlassCandidate> candidates;
  return candidates;
}

/// max |a - b| / max |b|; infinite where `a` is not finite.
double relativeDifference(const std::vector<float> &a, const std::vector<float> &b) {
  double difference = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i]))
      return INFINITY;
    difference = std::max(difference, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? difference / scale : difference;
}

} // namespace

bool registerCutlassCandidates(const std::vector<CutlassCandidate> &candidates) {
  registry().insert(registry().end(), candidates.begin(), candidates.end());
  return true;
}

const std::vector<CutlassCandidate> &cutlassCandidates() { return registry(); }

std::vector<std::string> cutlassCandidatesFor(const ConvProblem &problem) {
  std::vector<std::string> names;
  for (const CutlassCandidate &c : cutlassCandidates())
    if (c.kernel.direction == problem.direction && c.kernel.dtype == problem.dtype &&
        c.unsupported(problem).empty())
      names.push_back(c.name());
  return names;
}

double cutlassDifferenceBound(ConvDataType dtype) {
  return dtype == ConvDataType::BFloat16 ? std::ldexp(1.0, -5) : std::ldexp(1.0, -8);
}

bool timeCutlassConvs(const ConvProblem &problem, cudaStream_t stream, int repeats,
                      const std::vector<float> &reference, CutlassTiming &timing,
                      std::string &error) {
  std::vector<const CutlassCandidate *> mine;
  int64_t workspace = 0;
  for (const CutlassCandidate &c : cutlassCandidates()) {
    if (c.kernel.direction != problem.direction || c.kernel.dtype != problem.dtype)
      continue;
    ++timing.candidates;
    if (std::string why = c.unsupported(problem); !why.empty()) {
      timing.failures.push_back(c.name() + ": " + why);
      continue;
    }
    mine.push_back(&c);
    workspace = std::max(workspace, c.workspaceBytes(problem));
  }
  if (mine.empty())
    return true;

  const ConvOperands operands(problem);
  const int out = ConvOperands::output(problem.direction);
  if (reference.size() != size_t(operands.counts[out])) {
    error = "no cuDNN output of [" + problem.key() + "] to compare CUTLASS's with";
    return false;
  }
  const TimedType type = problem.dtype == ConvDataType::BFloat16 ? TimedType::bf16
                                                                 : TimedType::f16;
  DeviceBuffer buffers[3], scratch;
  for (int i = 0; i < 3; ++i)
    if (!buffers[i].allocate(operands.counts[i] * bytesOf(type))) {
      error = "cannot allocate the buffers of [" + problem.key() + "] on the GPU";
      return false;
    }
  if (!scratch.allocate(workspace)) {
    error = "cannot allocate CUTLASS's workspace of [" + problem.key() + "] (" +
            std::to_string(workspace) + " bytes)";
    return false;
  }
  Events events;
  for (const CutlassCandidate *c : mine) {
    // The inputs as cuDNN's engines had them (their seeds), for every
    // candidate: the one before may have left its output in place.
    for (int i = 0; i < 3; ++i)
      if (!buffers[i].fillRandom(operands.counts[i], type, operands.seeds[i])) {
        error = "cannot write the inputs of [" + problem.key() + "] on the GPU";
        return false;
      }
    // Bound once, as a trainer would: the timing is the kernels', not
    // CUTLASS's host-side set-up of each call.
    auto enqueue = c->bind(problem, buffers[0].data, buffers[1].data, buffers[2].data,
                           scratch.data, stream);
    if (!enqueue) {
      timing.failures.push_back(c->name() + ": CUTLASS does not initialize it");
      continue;
    }
    auto execute = [&] { return enqueue(stream); };
    std::vector<float> output;
    if (!execute() || cudaStreamSynchronize(stream) != cudaSuccess ||
        !copyToHostAsFloat(buffers[out].data, operands.counts[out], problem.dtype, output)) {
      cudaGetLastError();
      timing.failures.push_back(c->name() + ": it does not run on this GPU");
      continue;
    }
    const double difference = relativeDifference(output, reference);
    if (!(difference <= cutlassDifferenceBound(problem.dtype))) {
      timing.failures.push_back(c->name() + ": its output is not cuDNN's (relative difference " +
                                std::to_string(difference) + ")");
      continue;
    }
    double median = 0;
    std::string failure;
    if (!timeCandidate(stream, events, repeats, execute, median, failure)) {
      timing.failures.push_back(c->name() + ": " + failure);
      continue;
    }
    timing.timed.push_back({c->name(), median, c->workspaceBytes(problem), difference});
  }
  std::stable_sort(timing.timed.begin(), timing.timed.end(),
                   [](const TimedCutlassKernel &a, const TimedCutlassKernel &b) {
                     return a.microseconds < b.microseconds;
                   });
  return true;
}

} // namespace tcc::cuda
