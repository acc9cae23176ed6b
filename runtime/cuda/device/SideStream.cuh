//===- SideStream.cuh - The step's second stream, for its buckets -*- C++ -*-===//
//
// The gradient buckets of a distributed step run on a stream of their own
// (tcc.side_stream, codegen/cuda/OverlapBuckets.cpp), forked from the
// step's stream after their last gradient and joined before their first
// reader, each by an event: recorded into the step's CUDA graph, the events
// become its edges, so the step stays one graph and a bucket's NCCL call
// runs beside the rest of the backward. Under host emulation the streams
// run in program order (HostEmulation.h checks every fork is joined). A
// profiled step (launched directly, not captured) also tells a BucketClock
// where each bucket starts and ends on the side stream and where the step's
// stream reaches its join (EventOpClock.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_SIDESTREAM_CUH
#define TCC_RUNTIME_CUDA_DEVICE_SIDESTREAM_CUH

#include "runtime/cuda/device/Launch.cuh"

#include <vector>

namespace tcc::rt::cuda {

/// Where a profiled step's buckets are: each call records a timing event
/// on the stream it is given.
class BucketClock {
public:
  virtual ~BucketClock() = default;
  /// Bucket k's collective starts next on `side`.
  virtual void started(cudaStream_t side, int k) = 0;
  /// Bucket k's collective is all enqueued on `side`.
  virtual void ended(cudaStream_t side, int k) = 0;
  /// `step` is at bucket k's join, before it waits.
  virtual void reached(cudaStream_t step, int k) = 0;
};

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
    if (clock)
      clock->started(side, k);
  }
  /// Bucket k's work is all on stream().
  void end(int k) {
    if (clock)
      clock->ended(side, k);
  }
  /// What `step` enqueues next waits for bucket k's work.
  void join(cudaStream_t step, int k) {
    if (clock)
      clock->reached(step, k);
    check(cudaEventRecord(event(joins, k), side), "joining a bucket's stream");
    check(cudaStreamWaitEvent(step, joins[size_t(k)], 0), "joining a bucket's stream");
  }
  /// A profiled step's clock (null: not profiled). Never set while a step
  /// is captured: its timing events would be in the graph.
  void setClock(BucketClock *c) { clock = c; }

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
  BucketClock *clock = nullptr;
};

/// The generated step's fork, end and join of bucket k (StepArgs::buckets).
inline void fork(cudaStream_t step, SideStream *buckets, int k) { buckets->fork(step, k); }
inline void bucket_end(SideStream *buckets, int k) { buckets->end(k); }
inline void join(cudaStream_t step, SideStream *buckets, int k) { buckets->join(step, k); }

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_SIDESTREAM_CUH
