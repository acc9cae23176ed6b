//===- EventOpClock.cuh - The clock of a profiled cuda step ------*- CUDA -*-===//
//
// ./train --profile on the cuda target (runtime/StepProfile.h): an event on
// the model's stream at every site's mark, and for each gradient bucket on
// the side stream (SideStream.cuh) three more: its start and end there, and
// where the step's stream reached its join. All are read once the step is
// done, against the step's first event (docs/training.md, "Profiling a
// step").
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_EVENTOPCLOCK_CUH
#define TCC_RUNTIME_CUDA_DEVICE_EVENTOPCLOCK_CUH

#include "runtime/StepProfile.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/cuda/device/SideStream.cuh"

#include <vector>

namespace tcc::rt::cuda {

class EventOpClock final : public OpClock, public BucketClock {
public:
  EventOpClock(const std::vector<OpSite> &sites, cudaStream_t stream)
      : sums(sites), stream(stream) {}
  ~EventOpClock() override {
    for (cudaEvent_t event : events)
      cudaEventDestroy(event);
    for (Bucket &b : buckets)
      for (cudaEvent_t event : {b.start, b.end, b.reached})
        cudaEventDestroy(event);
  }
  EventOpClock(const EventOpClock &) = delete;
  EventOpClock &operator=(const EventOpClock &) = delete;

  void at(int site) override {
    if (used == events.size())
      events.push_back(create());
    check(cudaEventRecord(events[used], stream), "recording a profiling event");
    marks.resize(used + 1);
    marks[used++] = site;
  }
  void started(cudaStream_t side, int k) override { record(bucket(k).start, side, k, 1); }
  void ended(cudaStream_t side, int k) override { record(bucket(k).end, side, k, 2); }
  void reached(cudaStream_t step, int k) override { record(bucket(k).reached, step, k, 4); }

  /// Waits for the step and adds its ops' and buckets' times to the totals.
  void endStep() {
    at(-1);
    check(cudaEventSynchronize(events[used - 1]), "running a profiled step");
    for (size_t i = 0; i < used; ++i)
      sums.mark(marks[i], since(events[i]));
    // Every bucket is joined before the step's end: its events are done.
    for (size_t k = 0; k < buckets.size(); ++k) {
      Bucket &b = buckets[k];
      if (b.recorded == 7)
        sums.bucket(int(k), since(b.start), since(b.end), since(b.reached));
      b.recorded = 0;
    }
    used = 0;
  }
  const std::vector<OpTime> &totals() const { return sums.totals(); }

private:
  struct Bucket {
    cudaEvent_t start = nullptr, end = nullptr, reached = nullptr;
    int recorded = 0; ///< which of the three this step recorded (bits 1, 2, 4)
  };

  static cudaEvent_t create() {
    cudaEvent_t event;
    check(cudaEventCreate(&event), "creating a profiling event");
    return event;
  }
  Bucket &bucket(int k) {
    while (buckets.size() <= size_t(k))
      buckets.push_back({create(), create(), create()});
    return buckets[size_t(k)];
  }
  void record(cudaEvent_t event, cudaStream_t on, int k, int bit) {
    check(cudaEventRecord(event, on), "recording a bucket's profiling event");
    buckets[size_t(k)].recorded |= bit;
  }
  /// Seconds from the step's first mark to `event`.
  double since(cudaEvent_t event) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events[0], event), "reading a profiling event");
    return ms / 1000.0;
  }

  SiteTotals sums;
  cudaStream_t stream;
  std::vector<cudaEvent_t> events;
  std::vector<int> marks; ///< the site of each recorded event
  size_t used = 0;
  std::vector<Bucket> buckets;
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_EVENTOPCLOCK_CUH
