//===- CudaModel.cuh - The step contract on a GPU ----------------*- CUDA -*-===//
//
// The base of every generated cuda model (codegen/CudaTarget.cpp). The
// bound buffers are device memory (the trainer allocates them through
// tccDeviceMemory(), runtime/cuda/CudaMemory.cpp). The first trainStep()
// records the generated training step on the model's stream as a CUDA graph;
// bind() has rebuilt the convolutions' baked cuDNN plans first (ConvRunner),
// so recording enqueues work and builds nothing;
// every trainStep() replays it: no host work and no synchronisation per
// step (docs/step-contract.md); trainStepFrozen() (@train_step_frozen) is
// a second graph, recorded at its first call. Evaluation steps are
// launched directly.
// readTotals() is the only synchronisation. A profiled trainer (./train
// --profile) launches every training step directly instead, with a CUDA
// event before each op and around each side-stream bucket, and waits for
// each step (EventOpClock.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_CUDAMODEL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_CUDAMODEL_CUH

#include "runtime/CompiledModel.h"
#include "runtime/comm/Communicator.h"
#include "runtime/cuda/ConvRunner.h"
#include "runtime/cuda/device/EventOpClock.cuh"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/cuda/device/Matmul.cuh"
#include "runtime/cuda/device/SideStream.cuh"

#include <cstddef>
#include <memory>
#include <vector>

/// Defined beside tccDeviceMemory() (runtime/cuda/CudaMemory.cpp): calling
/// it links that file from the runtime's archive, which a reference to the
/// weak tccDeviceMemory alone would not.
extern "C" void tccLinkCudaMemory();

namespace tcc::rt::cuda {

class CudaModel : public CompiledModel {
public:
  CudaModel() { tccLinkCudaMemory(); }
  ~CudaModel() override {
    for (cudaGraphExec_t g : {graph, frozenGraph})
      if (g)
        cudaGraphExecDestroy(g);
    if (stream)
      cudaStreamDestroy(stream);
  }

  void bind(const StepBuffers &buffers) override {
    bound = buffers;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a stream");
    if (buffers.comm && buffers.comm->size() > 1)
      buckets.create(); // a one-rank trainer has no bucket
    convs.prepare(target(), stream);
    matmul.init(target());
  }
  /// Read by the evaluation steps only, which are launched directly: the
  /// recorded training graphs stay valid.
  void bindWholeState(void *wholeState) override { bound.wholeState = wholeState; }

  /// From the arena straight into the device buffer, no copy through the
  /// host: the arena's bytes copied on the stream, the chunks gathered by
  /// the communicator (NCCL) once the steps that wrote them have run.
  bool gatherWholeState(void *wholeState, size_t arenaBytes,
                        const std::vector<GatheredTensor> &tensors) override {
    const auto *state = static_cast<const char *>(bound.state);
    auto *whole = static_cast<char *>(wholeState);
    check(cudaMemcpyAsync(whole, state, arenaBytes, cudaMemcpyDeviceToDevice, stream),
          "copying the state for the evaluation");
    awaitSteps();
    std::vector<StepMemoryGather> gathers;
    for (const GatheredTensor &t : tensors)
      gathers.push_back({state + t.chunkOffset, whole + t.wholeOffset, int64_t(t.chunkBytes)});
    bound.comm->allGatherInStepMemory(gathers);
    return true;
  }

  /// The GPU, cuDNN and convolution engines the trainer was built for
  /// (the generated table).
  virtual const tcc::cuda::BakedTarget &target() const = 0;

  void trainStep() override {
    if (clock) {
      runTrainStep();
      clock->endStep();
      return;
    }
    replay(graph, [this] { runTrainStep(); });
  }

  /// Its own graph, recorded at its first call: both read and write the
  /// same arenas, and only one runs at a time on the stream. Not timed by
  /// --profile (launched directly then).
  void trainStepFrozen() override {
    if (clock)
      return runTrainStepFrozen();
    replay(frozenGraph, [this] { runTrainStepFrozen(); });
  }

  void evalStep() override { runEvalStep(); }

  StepTotals readTotals() override {
    StepTotals totals;
    check(cudaMemcpyAsync(&totals, &bound.control->totals, sizeof totals,
                          cudaMemcpyDeviceToHost, stream),
          "reading the totals");
    awaitSteps();
    check(cudaStreamSynchronize(stream), "running the steps");
    return totals;
  }

  void awaitSteps() override {
    // The steps' collectives wait for the other ranks: a distributed
    // trainer waits against its timeout (Communicator::awaitDevice).
    if (bound.comm && bound.comm->size() > 1)
      bound.comm->awaitDevice([this] { return cudaStreamQuery(stream) != cudaErrorNotReady; });
  }

  bool startProfiling() override {
    clock = std::make_unique<EventOpClock>(trainSites(), stream);
    buckets.setClock(clock.get());
    return true;
  }
  std::vector<OpTime> profile() const override {
    return clock ? clock->totals() : std::vector<OpTime>();
  }

  void resetTotals() override {
    // totals and evalBatch are adjacent in StepControl.
    static_assert(offsetof(StepControl, evalBatch) ==
                  offsetof(StepControl, totals) + sizeof(StepTotals));
    check(cudaMemsetAsync(&bound.control->totals, 0, sizeof(StepTotals) + sizeof(int64_t),
                          stream),
          "resetting the totals");
  }

protected:
  /// The generated steps: launches on `stream`, nothing else.
  virtual void runTrainStep() = 0;
  virtual void runEvalStep() = 0;
  /// The generated @train_step_frozen, where the model has one.
  virtual void runTrainStepFrozen() { runTrainStep(); }
  /// The generated training step's sites (runtime/StepProfile.h).
  virtual std::vector<OpSite> trainSites() const = 0;
  /// The clock a profiled step marks, else null.
  OpClock *opClock() const { return clock.get(); }

  const StepBuffers &buffers() const { return bound; }

  cudaStream_t stream = nullptr;
  /// The gradient buckets' stream, forked and joined inside the step.
  SideStream buckets;
  Matmul matmul;
  tcc::cuda::ConvRunner convs;

private:
  /// Records `run` as `exec` the first time, then replays it.
  template <typename Run> void replay(cudaGraphExec_t &exec, Run run) {
    if (!exec) {
      cudaGraph_t recorded;
      check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            "starting to record the training step");
      run();
      check(cudaStreamEndCapture(stream, &recorded), "recording the training step");
      check(cudaGraphInstantiate(&exec, recorded, 0), "instantiating the training step");
      cudaGraphDestroy(recorded);
    }
    check(cudaGraphLaunch(exec, stream), "launching the training step");
  }

  StepBuffers bound;
  cudaGraphExec_t graph = nullptr, frozenGraph = nullptr;
  std::unique_ptr<EventOpClock> clock;
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_CUDAMODEL_CUH
