//===- EmulatedStreamsTest.cpp - A side stream forked inside a capture ----===//
//
// The host emulation of the step's second stream (runtime/cuda/device/
// SideStream.cuh, HostEmulation.h): work forked onto the side stream while
// the step is recorded is in the graph and runs at every replay, in program
// order; a capture that ends with the side stream's work not joined fails,
// as cudaStreamEndCapture does on a GPU; outside a capture the work runs at
// once. A profiled step's clock (EventOpClock.cuh) hears each bucket's start
// and end on the side stream and the step stream's arrival at its join.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/cuda/device/EventOpClock.cuh"
#include "runtime/cuda/device/SideStream.cuh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace cuda = tcc::rt::cuda;
using cuda::emulation::enqueue;

TEST(SideStreamEmulation, ForkedWorkIsReplayedInProgramOrder) {
  cudaStream_t step;
  ASSERT_EQ(cudaStreamCreateWithFlags(&step, cudaStreamNonBlocking), cudaSuccess);
  cuda::SideStream buckets;
  std::vector<int> order;
  ASSERT_EQ(cudaStreamBeginCapture(step, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  enqueue(step, [&] { order.push_back(1); });
  cuda::fork(step, &buckets, 0);
  enqueue(buckets.stream(), [&] { order.push_back(2); });
  enqueue(step, [&] { order.push_back(3); });
  cuda::join(step, &buckets, 0);
  enqueue(step, [&] { order.push_back(4); });
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(step, &graph), cudaSuccess);
  EXPECT_TRUE(order.empty()); // recorded, not run
  EXPECT_EQ(buckets.stream()->capturing, nullptr);
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  cudaGraphDestroy(graph);
  for (int replay = 0; replay < 2; ++replay)
    ASSERT_EQ(cudaGraphLaunch(exec, step), cudaSuccess);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 1, 2, 3, 4}));
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(step);
}

TEST(SideStreamEmulation, AnUnjoinedForkFailsTheCapture) {
  cudaStream_t step;
  ASSERT_EQ(cudaStreamCreateWithFlags(&step, cudaStreamNonBlocking), cudaSuccess);
  cuda::SideStream buckets;
  ASSERT_EQ(cudaStreamBeginCapture(step, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  cuda::fork(step, &buckets, 0);
  enqueue(buckets.stream(), [] {});
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(step, &graph), cudaErrorStreamCaptureUnjoined);
  delete graph;
  // Work enqueued after the join is unjoined too.
  ASSERT_EQ(cudaStreamBeginCapture(step, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  cuda::fork(step, &buckets, 0);
  enqueue(buckets.stream(), [] {});
  cuda::join(step, &buckets, 0);
  enqueue(buckets.stream(), [] {});
  EXPECT_EQ(cudaStreamEndCapture(step, &graph), cudaErrorStreamCaptureUnjoined);
  delete graph;
  cudaStreamDestroy(step);
}

TEST(SideStreamEmulation, OutsideACaptureTheWorkRunsAtOnce) {
  cudaStream_t step;
  ASSERT_EQ(cudaStreamCreateWithFlags(&step, cudaStreamNonBlocking), cudaSuccess);
  cuda::SideStream buckets;
  int runs = 0;
  cuda::fork(step, &buckets, 3);
  enqueue(buckets.stream(), [&] { ++runs; });
  cuda::join(step, &buckets, 3);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(buckets.stream()->capturing, nullptr);
  cudaStreamDestroy(step);
}

/// Says which stream each call of a profiled step's bucket clock is on.
struct RecordingClock final : cuda::BucketClock {
  cudaStream_t step = nullptr, side = nullptr;
  std::vector<std::string> calls;
  std::string on(cudaStream_t s) const { return s == step ? "step" : s == side ? "side" : "?"; }
  void started(cudaStream_t s, int k) override {
    calls.push_back("started " + std::to_string(k) + " " + on(s));
  }
  void ended(cudaStream_t s, int k) override {
    calls.push_back("ended " + std::to_string(k) + " " + on(s));
  }
  void reached(cudaStream_t s, int k) override {
    calls.push_back("reached " + std::to_string(k) + " " + on(s));
  }
};

TEST(SideStreamEmulation, AProfiledBucketIsTimedOnItsStream) {
  cudaStream_t step;
  ASSERT_EQ(cudaStreamCreateWithFlags(&step, cudaStreamNonBlocking), cudaSuccess);
  cuda::SideStream buckets;
  buckets.create();
  RecordingClock clock;
  clock.step = step;
  clock.side = buckets.stream();
  buckets.setClock(&clock);
  cuda::fork(step, &buckets, 1);
  cuda::bucket_end(&buckets, 1);
  cuda::join(step, &buckets, 1);
  EXPECT_EQ(clock.calls,
            (std::vector<std::string>{"started 1 side", "ended 1 side", "reached 1 step"}));
  // Not profiled: no call.
  buckets.setClock(nullptr);
  cuda::fork(step, &buckets, 1);
  cuda::bucket_end(&buckets, 1);
  cuda::join(step, &buckets, 1);
  EXPECT_EQ(clock.calls.size(), 3u);
  cudaStreamDestroy(step);
}

TEST(SideStreamEmulation, EventOpClockTimesEachBucketOncePerStep) {
  cudaStream_t step;
  ASSERT_EQ(cudaStreamCreateWithFlags(&step, cudaStreamNonBlocking), cudaSuccess);
  cuda::SideStream buckets;
  buckets.create();
  const std::vector<tcc::rt::OpSite> sites = {{"gather_batch", ""},
                                              {"tcc.all_reduce", "", true, 0, 64, true},
                                              {"tcc.matmul", "fc"},
                                              {"step_end", ""}};
  cuda::EventOpClock clock(sites, step);
  buckets.setClock(&clock);
  for (int s = 0; s < 2; ++s) {
    clock.at(0);
    clock.at(1);
    cuda::fork(step, &buckets, 0);
    enqueue(buckets.stream(), [] {});
    cuda::bucket_end(&buckets, 0);
    clock.at(2);
    cuda::join(step, &buckets, 0);
    clock.at(3);
    clock.endStep();
  }
  const tcc::rt::OpTime &bucket = clock.totals()[1];
  EXPECT_EQ(bucket.calls, 2);
  EXPECT_EQ(bucket.sideCalls, 2);
  EXPECT_GE(bucket.sideSeconds, 0.0);
  // In program order the bucket is done before the step's stream reaches
  // its join: all of it hidden.
  EXPECT_DOUBLE_EQ(bucket.hiddenSeconds, bucket.sideSeconds);
  EXPECT_EQ(clock.totals()[2].sideCalls, 0);
  cudaStreamDestroy(step);
}

} // namespace
