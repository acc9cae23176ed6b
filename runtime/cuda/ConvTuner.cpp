//===- ConvTuner.cpp - cuDNN engines measured on the running GPU ----------===//

#include "runtime/cuda/ConvTuner.h"

#include "runtime/cuda/ConvGraph.h"
#include "runtime/cuda/TuneTiming.h"

#include <algorithm>
#include <unordered_map>

namespace tcc::cuda {

namespace {

TimedType timedTypeOf(ConvDataType dtype) {
  return dtype == ConvDataType::Float32    ? TimedType::f32
         : dtype == ConvDataType::BFloat16 ? TimedType::bf16
                                           : TimedType::f16;
}

} // namespace

bool timeConvEngines(const ConvProblem &problem, cudnnHandle_t handle, int64_t workspaceLimit,
                     int repeats, int maxCandidates, bool keepReference, ConvTiming &timing,
                     std::string &error) {
  ConvGraph graph;
  std::vector<std::pair<int64_t, ConvEngine>> built;
  if (!buildConvGraph(problem, nullptr, handle, graph, error) ||
      !buildAllCandidates(problem, graph, workspaceLimit, maxCandidates, built, timing.offered,
                          error))
    return false;
  int64_t workspace = 0;
  for (const auto &candidate : built)
    workspace = std::max(workspace, candidate.second.workspaceBytes);

  const ConvProblem &p = problem;
  const ConvOperands operands(p);
  const int64_t *counts = operands.counts;
  DeviceBuffer x, w, y, bias, scratch;
  const TimedType type = timedTypeOf(p.dtype);
  if (!x.allocate(counts[0] * bytesOf(type)) || !w.allocate(counts[1] * bytesOf(type)) ||
      !y.allocate(counts[2] * bytesOf(type)) || !bias.allocate(p.k * 8) ||
      !scratch.allocate(workspace) || !x.fillRandom(counts[0], type, operands.seeds[0]) ||
      !w.fillRandom(counts[1], type, operands.seeds[1]) ||
      !y.fillRandom(counts[2], type, operands.seeds[2]) || !bias.fillRandom(p.k, type, 4)) {
    error = "cannot allocate the buffers of [" + problem.key() + "] on the GPU (" +
            std::to_string((counts[0] + counts[1] + counts[2]) * bytesOf(type) + workspace) +
            " bytes)";
    return false;
  }
  std::unordered_map<int64_t, void *> pointers = {
      {kInputUid, x.data}, {kWeightUid, w.data}, {kOutputUid, y.data}};
  // The bias, or the statistics' two f32 vectors (the buffer holds 8
  // bytes per channel).
  if (p.epilogue == ConvEpilogue::Statistics) {
    pointers[kSumUid] = bias.data;
    pointers[kSquareSumUid] = static_cast<char *>(bias.data) + p.k * 4;
  } else if (p.epilogue != ConvEpilogue::None) {
    pointers[kBiasUid] = bias.data;
  }
  cudaStream_t stream = nullptr;
  cudnnGetStream(handle, &stream);
  Events events;
  for (const auto &[index, engine] : built) {
    double median = 0;
    std::string failure;
    auto execute = [&, index = index] {
      return graph.execute_plan_at_index(handle, pointers, scratch.data, index).is_good();
    };
    if (!timeCandidate(stream, events, repeats, execute, median, failure)) {
      timing.failures.push_back(engine.name + ": " + failure);
      continue;
    }
    timing.timed.push_back({engine, int(index), median});
  }
  if (timing.timed.empty()) {
    error = "none of the " + std::to_string(built.size()) + " engine configurations of [" +
            problem.key() + "] ran on this GPU";
    return false;
  }
  std::stable_sort(timing.timed.begin(), timing.timed.end(),
                   [](const TimedConvEngine &a, const TimedConvEngine &b) {
                     return a.microseconds < b.microseconds;
                   });
  if (keepReference) {
    const int64_t fastest = timing.timed.front().heuristicRank;
    DeviceBuffer *outputs[] = {&x, &w, &y};
    const int out = ConvOperands::output(p.direction);
    if (!graph.execute_plan_at_index(handle, pointers, scratch.data, fastest).is_good() ||
        cudaStreamSynchronize(stream) != cudaSuccess ||
        !copyToHostAsFloat(outputs[out]->data, counts[out], p.dtype, timing.reference)) {
      error = "the fastest engine of [" + problem.key() + "] did not run again";
      return false;
    }
  }
  return true;
}

bool describeGpu(int device, std::string &json, std::string &error) {
  fe::DeviceProperties properties;
  properties.set_device_id(device);
  std::vector<uint8_t> bytes;
  fe::error_t status = properties.build();
  if (status.is_good())
    status = properties.serialize(bytes);
  if (status.is_bad()) {
    error = "cuDNN cannot describe this GPU: " + status.get_message();
    return false;
  }
  json.assign(bytes.begin(), bytes.end());
  while (!json.empty() && json.back() == '\0')
    json.pop_back();
  return true;
}

} // namespace tcc::cuda
