//===- TuneTiming.h - Timing a GPU call the way tcc-tune does ---*- C++ -*-===//
//
// Shared by the tuners (ConvTuner.cpp, MatmulTuner.cpp, CutlassTuner.cpp):
// device buffers of random values (timings on zeros flatter tensor cores:
// less switching power), a convolution's operands drawn the same way for
// every source of kernels, and the timing itself, a warm-up call, then the
// median of several CUDA-event timings, each over enough calls to last
// about a millisecond.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_TUNETIMING_H
#define TCC_RUNTIME_CUDA_TUNETIMING_H

#include "runtime/common/Float16.h"
#include "runtime/cuda/ConvProblem.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tcc::cuda {

/// The element types the tuners fill buffers with.
enum class TimedType { f32, bf16, f16 };

inline int64_t bytesOf(TimedType type) { return type == TimedType::f32 ? 4 : 2; }

/// A device buffer, freed with it.
struct DeviceBuffer {
  void *data = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (data)
      cudaFree(data);
  }
  bool allocate(int64_t bytes) {
    return cudaMalloc(&data, size_t(std::max<int64_t>(bytes, 16))) == cudaSuccess;
  }
  /// Writes `count` random values in [-1, 1] of `type` from `offset` bytes on.
  bool fillRandom(int64_t count, TimedType type, uint32_t seed, int64_t offset = 0) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<unsigned char> host(size_t(count * bytesOf(type)));
    for (int64_t i = 0; i < count; ++i) {
      float value = uniform(generator);
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      if (type == TimedType::f32) {
        std::memcpy(&host[size_t(4 * i)], &bits, 4);
        continue;
      }
      uint16_t half;
      if (type == TimedType::bf16) {
        half = uint16_t(bits >> 16);
      } else { // IEEE half of a value in [-1, 1]; below 2^-14 it is zero
        int exponent = int((bits >> 23) & 0xff) - 127 + 15;
        half = uint16_t((bits >> 16) & 0x8000);
        if (exponent > 0)
          half |= uint16_t(exponent << 10 | ((bits >> 13) & 0x3ff));
      }
      std::memcpy(&host[size_t(2 * i)], &half, 2);
    }
    return cudaMemcpy(static_cast<char *>(data) + offset, host.data(), host.size(),
                      cudaMemcpyHostToDevice) == cudaSuccess;
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
  Events(const Events &) = delete;
  Events &operator=(const Events &) = delete;
};

/// The median over `times` timings of the mean time of `iterations` calls
/// of `enqueue` (which enqueues one execution on `stream`, false when it
/// cannot), in microseconds.
template <class Enqueue>
bool medianMicroseconds(cudaStream_t stream, Events &events, int iterations, int times,
                        const Enqueue &enqueue, double &microseconds) {
  std::vector<double> each;
  for (int r = 0; r < times; ++r) {
    cudaEventRecord(events.start, stream);
    for (int i = 0; i < iterations; ++i)
      if (!enqueue())
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
}

/// One candidate timed: a warm-up call (which also gives the scale of one),
/// then the median of `repeats` timings over about a millisecond each.
/// `failure` says which part failed, when one did.
template <class Enqueue>
bool timeCandidate(cudaStream_t stream, Events &events, int repeats, const Enqueue &enqueue,
                   double &median, std::string &failure) {
  double once = 0;
  if (!medianMicroseconds(stream, events, 1, 1, enqueue, once)) {
    cudaGetLastError();
    failure = "it does not run on this GPU";
    return false;
  }
  int iterations = int(std::clamp(1000.0 / std::max(once, 1.0), 1.0, 100.0));
  if (!medianMicroseconds(stream, events, iterations, repeats, enqueue, median)) {
    cudaGetLastError();
    failure = "a timed run failed";
    return false;
  }
  return true;
}

/// The operands a problem is timed on: x, the weight and y (ConvRunner's
/// order), their element counts, and the seed of each one's random values;
/// whichever the direction writes is overwritten.
struct ConvOperands {
  int64_t counts[3];
  static constexpr uint32_t seeds[3] = {1, 2, 3};
  explicit ConvOperands(const ConvProblem &p)
      : counts{p.n * p.c * p.h * p.w, p.k * (p.c / p.groups) * p.r * p.s,
               p.n * p.k * p.p * p.q} {}
  /// The operand the direction writes: y, x or the weight.
  static int output(ConvDirection direction) {
    return direction == ConvDirection::Forward ? 2
           : direction == ConvDirection::BackwardData ? 0
                                                      : 1;
  }
};

/// `count` values of `type` at `device` (a 16-bit or f32 buffer), as f32.
inline bool copyToHostAsFloat(const void *device, int64_t count, ConvDataType type,
                              std::vector<float> &values) {
  values.resize(size_t(count));
  if (type == ConvDataType::Float32)
    return cudaMemcpy(values.data(), device, size_t(count) * 4, cudaMemcpyDeviceToHost) ==
           cudaSuccess;
  std::vector<uint16_t> bits(static_cast<size_t>(count));
  if (cudaMemcpy(bits.data(), device, size_t(count) * 2, cudaMemcpyDeviceToHost) != cudaSuccess)
    return false;
  for (size_t i = 0; i < bits.size(); ++i)
    values[i] = type == ConvDataType::BFloat16 ? rt::half::bf16ToFloat(bits[i])
                                               : rt::half::f16ToFloat(bits[i]);
  return true;
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_TUNETIMING_H
