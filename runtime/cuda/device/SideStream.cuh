//===- SideStream.cuh - The step's second stream, for its buckets -*- C++ -*-===//
//
// The gradient buckets of a distributed step run on a stream of their own
// (tcc.side_stream, codegen/cuda/OverlapBuckets.cpp), forked from the
// step's stream after their last gradient and joined before their first
// reader, each by an event: recorded into the step's CUDA graph, the events
// become its edges, so the step stays one graph and a bucket's NCCL call
// runs beside the rest of the backward. Under host emulation the streams
// run in program order (HostEmulation.h checks every fork is joined).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_SIDESTREAM_CUH
#define TCC_RUNTIME_CUDA_DEVICE_SIDESTREAM_CUH

#include "runtime/cuda/device/Launch.cuh"

#include <vector>

namespace tcc::rt::cuda {

class SideStream {
public:
  SideStream() = default;
  SideStream(const SideStream &) = delete;
  SideStream &operator=(const SideStream &) = delete;
  ~SideStream() {
    for (std::vector<cudaEvent_t> *events : {&forks, &joins})
      for (cudaEvent_t event : *events)
        cudaEventDestroy(event);
    if (side)
      cudaStreamDestroy(side);
  }

  /// The stream the buckets run on: CudaModel::bind() creates it for a step
  /// of several ranks, before the step is recorded (not every CUDA call is
  /// legal while a stream is captured); else the first fork does.
  cudaStream_t stream() const { return side; }
  void create() {
    if (!side)
      check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "creating a side stream");
  }

  /// Bucket k's work on stream() starts after what `step` has enqueued.
  void fork(cudaStream_t step, int k) {
    create();
    check(cudaEventRecord(event(forks, k), step), "forking a bucket's stream");
    check(cudaStreamWaitEvent(side, forks[size_t(k)], 0), "forking a bucket's stream");
  }
  /// What `step` enqueues next waits for bucket k's work.
  void join(cudaStream_t step, int k) {
    check(cudaEventRecord(event(joins, k), side), "joining a bucket's stream");
    check(cudaStreamWaitEvent(step, joins[size_t(k)], 0), "joining a bucket's stream");
  }

private:
  /// Event k of `events`, created at its first use (before or while the
  /// step is recorded: creating an event enqueues nothing, and PyTorch's
  /// wait_stream does the same inside captures).
  static cudaEvent_t event(std::vector<cudaEvent_t> &events, int k) {
    while (events.size() <= size_t(k)) {
      cudaEvent_t e;
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating a bucket's event");
      events.push_back(e);
    }
    return events[size_t(k)];
  }

  cudaStream_t side = nullptr;
  std::vector<cudaEvent_t> forks, joins;
};

/// The generated step's fork and join of bucket k (StepArgs::buckets).
inline void fork(cudaStream_t step, SideStream *buckets, int k) { buckets->fork(step, k); }
inline void join(cudaStream_t step, SideStream *buckets, int k) { buckets->join(step, k); }

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_SIDESTREAM_CUH
