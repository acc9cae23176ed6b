//===- HostEmulation.h - The device runtime's CUDA calls on the host -*- C++ -*-//
//
// With TCC_CUDA_HOST_EMULATION defined, a generated .cu file and this
// runtime compile as plain C++ and run on the CPU: CI has no GPU, and this
// is how its tests run the cuda target's generated step against the cpu
// trainer (test/e2e/cuda_host_emulation.py). It emulates exactly the CUDA
// calls runtime/cuda/ makes, with their stream semantics:
//  - a stream runs its work in order, when enqueued;
//  - while a stream is captured, its work is recorded instead, and a graph
//    launch replays the recording. A stream that waits for an event recorded
//    in a capture joins it (a fork: its work is recorded into the same
//    graph, in program order); ending the capture fails, as CUDA's does,
//    when a forked stream's last work was not waited for by another stream
//    of the capture (a join). Host code that ran during the capture
//    (anything not enqueued) does not run again: a step that read a device
//    value on the host, or depended on host work per step, gives wrong
//    results here as it would on a GPU.
// "Device" memory is host memory. The execution-space keywords are empty.
// What it does not model: concurrency between threads of a kernel (each
// launch runs its elements in order), and the GPU's own rounding (fused
// multiply-adds, library algorithms).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_HOSTEMULATION_H
#define TCC_RUNTIME_CUDA_DEVICE_HOSTEMULATION_H

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#define __device__
#define __host__
#define __global__
#define __launch_bounds__(threads)

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNotReady = 600,
  cudaErrorStreamCaptureUnjoined = 904
};
enum cudaMemcpyKind {
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice
};
enum cudaStreamCaptureMode { cudaStreamCaptureModeThreadLocal };
constexpr unsigned cudaStreamNonBlocking = 1;

inline const char *cudaGetErrorString(cudaError_t status) {
  return status == cudaSuccess ? "no error" : "emulated CUDA error";
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }

namespace tcc::rt::cuda::emulation {

struct Stream;

/// Work recorded by a capture: the graph.
struct Graph {
  std::vector<std::function<void()>> work;
  /// The streams forked into the capture, each with how much of its work
  /// (Stream::enqueued) another stream of the capture has waited for.
  std::vector<std::pair<Stream *, uint64_t>> forked;
};

struct Stream {
  Graph *capturing = nullptr; ///< the graph being recorded, or null
  uint64_t enqueued = 0;      ///< work items enqueued so far
};

/// Runs `work` now, or records it while `stream` is captured.
inline void enqueue(Stream *stream, std::function<void()> work) {
  if (stream)
    ++stream->enqueued;
  if (stream && stream->capturing)
    stream->capturing->work.push_back(std::move(work));
  else
    work();
}

/// A library's workspace (cuDNN's, cuBLASLt's) after it ran: NaN bits
/// everywhere, so that a value the memory plan wrongly placed there is
/// destroyed, as the library might destroy it on a GPU.
inline void scribble(void *workspace, int64_t bytes) {
  if (workspace && bytes > 0)
    std::memset(workspace, 0xff, size_t(bytes));
}

} // namespace tcc::rt::cuda::emulation

using cudaStream_t = tcc::rt::cuda::emulation::Stream *;
using cudaGraph_t = tcc::rt::cuda::emulation::Graph *;
using cudaGraphExec_t = tcc::rt::cuda::emulation::Graph *;

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
  *stream = new tcc::rt::cuda::emulation::Stream();
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
// The work ran when it was enqueued.
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (stream->capturing)
    return cudaErrorInvalidValue;
  stream->capturing = new tcc::rt::cuda::emulation::Graph();
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  *graph = stream->capturing;
  stream->capturing = nullptr;
  if (!*graph)
    return cudaErrorInvalidValue;
  bool joined = true;
  for (auto &[forked, waited] : (*graph)->forked) {
    joined = joined && forked->enqueued <= waited;
    forked->capturing = nullptr;
  }
  (*graph)->forked.clear();
  return joined ? cudaSuccess : cudaErrorStreamCaptureUnjoined;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                        unsigned long long) {
  *exec = new tcc::rt::cuda::emulation::Graph(*graph);
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  for (const std::function<void()> &work : exec->work)
    tcc::rt::cuda::emulation::enqueue(stream, work);
  return cudaSuccess;
}

inline cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void **pointer, size_t bytes) {
  *pointer = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *pointer) {
  std::free(pointer);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void *pointer, int value, size_t bytes) {
  std::memset(pointer, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *to, const void *from, size_t bytes, cudaMemcpyKind) {
  std::memcpy(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, cudaMemcpyKind,
                                   cudaStream_t stream) {
  tcc::rt::cuda::emulation::enqueue(stream, [=] { std::memcpy(to, from, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void *pointer, int value, size_t bytes,
                                   cudaStream_t stream) {
  tcc::rt::cuda::emulation::enqueue(stream, [=] { std::memset(pointer, value, bytes); });
  return cudaSuccess;
}
/// An event is the host's time when the stream reached it; recorded in a
/// capture, it is a point of the graph other streams can wait for.
struct CUevent_emulated {
  std::chrono::steady_clock::time_point at;
  tcc::rt::cuda::emulation::Graph *capture = nullptr; ///< recorded into
  tcc::rt::cuda::emulation::Stream *stream = nullptr; ///< on, in a capture
  uint64_t after = 0; ///< the stream's work items before it, and itself
};
using cudaEvent_t = CUevent_emulated *;
constexpr unsigned cudaEventDisableTiming = 2;
inline cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = new CUevent_emulated();
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) {
  return cudaEventCreate(event);
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  tcc::rt::cuda::emulation::enqueue(stream,
                                    [=] { event->at = std::chrono::steady_clock::now(); });
  event->capture = stream ? stream->capturing : nullptr;
  event->stream = stream;
  event->after = stream ? stream->enqueued : 0;
  return cudaSuccess;
}
/// Outside a capture the event's work has run. Inside, `stream` joins the
/// capture (a fork) if it is not in it, and another stream's work up to the
/// event counts as joined.
inline cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned) {
  tcc::rt::cuda::emulation::Graph *graph = event->capture;
  if (!graph)
    return cudaSuccess;
  if (!stream->capturing) {
    stream->capturing = graph;
    graph->forked.push_back({stream, stream->enqueued});
  } else if (stream->capturing != graph) {
    return cudaErrorInvalidValue;
  }
  for (auto &[forked, waited] : graph->forked)
    if (forked == event->stream && forked != stream && waited < event->after)
      waited = event->after;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return cudaSuccess;
}
template <class T> cudaError_t cudaGetSymbolAddress(void **address, T &symbol) {
  *address = static_cast<void *>(&symbol);
  return cudaSuccess;
}

#endif // TCC_RUNTIME_CUDA_DEVICE_HOSTEMULATION_H
