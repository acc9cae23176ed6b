//===- EmulatedStreamsTest.cpp - A side stream forked inside a capture ----===//
//
// The host emulation of the step's second stream (runtime/cuda/device/
// SideStream.cuh, HostEmulation.h): work forked onto the side stream while
// the step is recorded is in the graph and runs at every replay, in program
// order; a capture that ends with the side stream's work not joined fails,
// as cudaStreamEndCapture does on a GPU; outside a capture the work runs at
// once.
//
//===----------------------------------------------------------------------===//
#define TCC_CUDA_HOST_EMULATION 1

#include "runtime/cuda/device/SideStream.cuh"

#include <gtest/gtest.h>

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

} // namespace
