//===- ConvTuner.cpp - cuDNN engines measured on the running GPU ----------===//

#include "runtime/cuda/ConvTuner.h"

#include "runtime/cuda/ConvGraph.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <unordered_map>

namespace tcc::cuda {

namespace {

int64_t elementBytes(ConvDataType dtype) { return dtype == ConvDataType::Float32 ? 4 : 2; }

/// A device buffer of `count` random values in [-1, 1] of `dtype`: timings
/// on zeros flatter the engines (less switching power on the tensor cores).
struct DeviceBuffer {
  void *data = nullptr;
  ~DeviceBuffer() {
    if (data)
      cudaFree(data);
  }
  bool allocate(int64_t bytes) { return cudaMalloc(&data, std::max<int64_t>(bytes, 16)) == cudaSuccess; }
  bool fillRandom(int64_t count, ConvDataType dtype, uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<unsigned char> host(size_t(count * elementBytes(dtype)));
    for (int64_t i = 0; i < count; ++i) {
      float value = uniform(generator);
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      if (dtype == ConvDataType::Float32) {
        std::memcpy(&host[size_t(4 * i)], &bits, 4);
        continue;
      }
      uint16_t half;
      if (dtype == ConvDataType::BFloat16) {
        half = uint16_t(bits >> 16);
      } else { // IEEE half of a value in [-1, 1]; below 2^-14 it is zero
        int exponent = int((bits >> 23) & 0xff) - 127 + 15;
        half = uint16_t((bits >> 16) & 0x8000);
        if (exponent > 0)
          half |= uint16_t(exponent << 10 | ((bits >> 13) & 0x3ff));
      }
      std::memcpy(&host[size_t(2 * i)], &half, 2);
    }
    return cudaMemcpy(data, host.data(), host.size(), cudaMemcpyHostToDevice) == cudaSuccess;
  }
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

} // namespace

bool timeConvEngines(const ConvProblem &problem, cudnnHandle_t handle, int64_t workspaceLimit,
                     int repeats, int maxCandidates, ConvTiming &timing,
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
  int64_t counts[] = {p.n * p.c * p.h * p.w, p.k * (p.c / p.groups) * p.r * p.s,
                      p.n * p.k * p.p * p.q};
  DeviceBuffer x, w, y, scratch;
  int64_t bytes = elementBytes(p.dtype);
  if (!x.allocate(counts[0] * bytes) || !w.allocate(counts[1] * bytes) ||
      !y.allocate(counts[2] * bytes) || !scratch.allocate(workspace) ||
      !x.fillRandom(counts[0], p.dtype, 1) || !w.fillRandom(counts[1], p.dtype, 2) ||
      !y.fillRandom(counts[2], p.dtype, 3)) {
    error = "cannot allocate the buffers of [" + problem.key() + "] on the GPU (" +
            std::to_string((counts[0] + counts[1] + counts[2]) * bytes + workspace) + " bytes)";
    return false;
  }
  std::unordered_map<int64_t, void *> pointers = {
      {kInputUid, x.data}, {kWeightUid, w.data}, {kOutputUid, y.data}};
  cudaStream_t stream = nullptr;
  cudnnGetStream(handle, &stream);
  Events events;

  // The median over `repeats` of the mean time of `iterations` executions.
  auto measure = [&](int64_t index, int iterations, int times, double &microseconds) {
    std::vector<double> each;
    for (int r = 0; r < times; ++r) {
      cudaEventRecord(events.start, stream);
      for (int i = 0; i < iterations; ++i)
        if (graph.execute_plan_at_index(handle, pointers, scratch.data, index).is_bad())
          return false;
      cudaEventRecord(events.stop, stream);
      float ms = 0;
      if (cudaEventSynchronize(events.stop) != cudaSuccess ||
          cudaEventElapsedTime(&ms, events.start, events.stop) != cudaSuccess)
        return false;
      each.push_back(1000.0 * ms / iterations);
    }
    std::nth_element(each.begin(), each.begin() + each.size() / 2, each.end());
    microseconds = each[each.size() / 2];
    return true;
  };
  for (const auto &[index, engine] : built) {
    double once = 0, median = 0;
    if (!measure(index, 1, 1, once)) { // the warm-up, and the scale of one run
      cudaGetLastError();
      timing.failures.push_back(engine.name + ": it does not run on this GPU");
      continue;
    }
    int iterations = int(std::clamp(1000.0 / std::max(once, 1.0), 1.0, 100.0));
    if (!measure(index, iterations, repeats, median)) {
      cudaGetLastError();
      timing.failures.push_back(engine.name + ": a timed run failed");
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
