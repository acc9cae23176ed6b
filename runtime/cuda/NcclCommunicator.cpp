//===- NcclCommunicator.cpp - The ranks of a cuda trainer, over NCCL ------===//
//
// Linked by `tcc compile` into a cuda trainer of several ranks, one GPU
// each (docs/distributed.md). No MPI: the launcher's environment gives
// the world (runtime/comm/Launcher.h: torchrun, mpirun, srun), the node's
// local rank picks the GPU, and rank 0 hands the NCCL id to the others
// over TCP (runtime/comm/TcpBootstrap.h). The step's collectives run on
// its stream inside its CUDA graph (nccl_all_reduce), its gradient buckets
// on a side stream through a communicator split off for them; the trainer's own
// (epoch totals, the stop signal) go through a small device buffer on a
// stream of their own. Every wait for the GPU polls against --comm-timeout
// (runtime/comm/DeviceWait.h): a rank that died or hangs ends the job.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/DeviceWait.h"
#include "runtime/comm/Launcher.h"
#include "runtime/comm/TcpBootstrap.h"
#include "runtime/cuda/NcclCollectives.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <vector>

namespace tcc::rt {

namespace {

/// How long rank 0 and the others wait for each other to exchange the id.
constexpr int kBootstrapSeconds = 120;

ncclDataType_t ncclType(cuda::CollectiveType type) {
  switch (type) {
  case cuda::CollectiveType::F32:
    return ncclFloat32;
  case cuda::CollectiveType::F64:
    return ncclFloat64;
  case cuda::CollectiveType::F16:
    return ncclFloat16;
  case cuda::CollectiveType::BF16:
    return ncclBfloat16;
  }
  return ncclFloat32;
}

class Nccl final : public Communicator {
public:
  explicit Nccl(const LaunchedWorld &world) : world(world) {}
  ~Nccl() override {
    if (staging)
      cudaFree(staging);
    if (side)
      cudaStreamDestroy(side);
    if (buckets)
      ncclCommDestroy(buckets);
    if (comm)
      ncclCommDestroy(comm);
  }

  /// Picks this rank's GPU and joins the NCCL job; false with `error`.
  /// Without any GPU it joins nothing: the trainer says there is none
  /// before it needs a collective.
  bool start(std::string &error) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      cudaGetLastError();
      return true;
    }
    if (world.localRank >= devices) {
      error = "rank " + std::to_string(world.rank) + " is local rank " +
              std::to_string(world.localRank) + " of its node, which has " +
              std::to_string(devices) + " GPUs: start at most one rank per GPU";
      return false;
    }
    if (cudaSetDevice(world.localRank) != cudaSuccess) {
      error = "rank " + std::to_string(world.rank) + " cannot use GPU " +
              std::to_string(world.localRank);
      return false;
    }
    ncclUniqueId id{};
    if (world.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
      error = "NCCL could not create the job's id";
      return false;
    }
    BootstrapAddress address;
    if (!bootstrapAddress(address, error) ||
        !tcpBroadcast(world.rank, world.size, address, &id, sizeof id, kBootstrapSeconds, error))
      return false;
    if (ncclResult_t r = ncclCommInitRank(&comm, world.size, id, world.rank); r != ncclSuccess) {
      error = std::string("NCCL could not join the job: ") + ncclGetErrorString(r);
      return false;
    }
    // The gradient buckets' own: they run on the step's side stream beside
    // its other collectives, which would otherwise queue behind them.
    if (ncclResult_t r = ncclCommSplit(comm, 0, world.rank, &buckets, nullptr);
        r != ncclSuccess) {
      error = std::string("NCCL could not create the buckets' communicator: ") +
              ncclGetErrorString(r);
      return false;
    }
    return cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess;
  }

  int rank() const override { return world.rank; }
  int size() const override { return world.size; }
  void allReduceSum(float *data, int64_t n) override { hostSum(data, n, ncclFloat32); }
  void allReduceSum(double *data, int64_t n) override { hostSum(data, n, ncclFloat64); }
  void allReduceSum(int64_t *data, int64_t n) override { hostSum(data, n, ncclInt64); }
  // The cuda step gathers and scatters on the device; these serve the
  // trainer (a sharded checkpoint is consolidated with allReduceSum).
  void allGather(const float *mine, float *all, int64_t n) override {
    hostCollective(mine, n, all, n * world.size, [&](void *in, void *out) {
      return ncclAllGather(in, out, size_t(n), ncclFloat32, joined(), side);
    });
  }
  void reduceScatterSum(const float *all, float *mine, int64_t n) override {
    hostCollective(all, n * world.size, mine, n, [&](void *in, void *out) {
      return ncclReduceScatter(in, out, size_t(n), ncclFloat32, ncclSum, joined(), side);
    });
  }
  void setFaultSettings(const FaultSettings &s) override { settings = s; }

  /// Bytes, in device memory: not through the staging. Not grouped, so that
  /// each gather lands after the one before (in place, a gather's padding
  /// may fall where the next one writes).
  void allGatherInStepMemory(const std::vector<StepMemoryGather> &gathers) override {
    for (const StepMemoryGather &g : gathers)
      check(ncclAllGather(g.mine, g.all, size_t(g.bytes), ncclUint8, joined(), side),
            "ncclAllGather");
    finishSide("the gather of the sharded state");
  }

  /// The stream's work done (cudaStreamQuery), or the job ended: NCCL
  /// broke (a rank's process or network is gone) or the timeout passed.
  void awaitDevice(const std::function<bool()> &done) override {
    const WaitEnd end = awaitWithin(settings.timeoutSeconds, done, [&] {
      auto broken = [](ncclComm_t c) {
        ncclResult_t state = ncclSuccess;
        return c && ncclCommGetAsyncError(c, &state) == ncclSuccess && state != ncclSuccess &&
               state != ncclInProgress;
      };
      return broken(comm) || broken(buckets);
    });
    if (end == WaitEnd::Done)
      return;
    std::ostringstream line;
    line << "error: rank " << world.rank << ": ";
    if (end == WaitEnd::Broken)
      line << "NCCL reports the job's communication broken (a rank died or its network is "
              "gone)";
    else
      line << "the step's collectives did not finish within " << settings.timeoutSeconds
           << " s (--comm-timeout): a rank died or hangs";
    line << "; stopping the job";
    if (!settings.checkpoint.empty())
      line << " (the last checkpoint written to " << settings.checkpoint << " is kept)";
    std::cerr << line.str() << "\n";
    abortJob(1);
  }
  [[noreturn]] void abortJob(int status) override {
    // The launcher (torchrun, mpirun) ends the other ranks when one fails;
    // aborting releases the GPU work that waits for this rank.
    if (buckets)
      ncclCommAbort(buckets);
    if (comm)
      ncclCommAbort(comm);
    comm = buckets = nullptr;
    std::_Exit(status);
  }

  /// The step's all-reduce on `stream`, one group of calls; a bucket's on
  /// the buckets' communicator.
  void deviceAllReduce(cudaStream_t stream, int count, const void *const *inputs,
                       void *const *results, const int64_t *sizes,
                       const ncclDataType_t *types, bool mean, bool bucket) {
    ncclComm_t through = joined();
    if (bucket)
      through = buckets;
    check(ncclGroupStart(), "ncclGroupStart");
    for (int k = 0; k < count; ++k)
      check(ncclAllReduce(inputs[k], results[k], size_t(sizes[k]), types[k],
                          mean ? ncclAvg : ncclSum, through, stream),
            "ncclAllReduce");
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  /// The step's all-gather of chunks into whole tensors on `stream`: each
  /// tensor's chunks gathered into `packed` (whole, then padding), then
  /// its whole part copied out.
  void deviceAllGather(cudaStream_t stream, int count, const void *const *chunks,
                       void *const *results, const int64_t *sizes, const int64_t *wholes,
                       const cuda::CollectiveType *types, char *packed) {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int64_t k = 0, at = 0; k < count; ++k) {
      check(ncclAllGather(chunks[k], packed + at, size_t(sizes[k]), ncclType(types[k]),
                          joined(), stream),
            "ncclAllGather");
      at += sizes[k] * world.size * cuda::collectiveBytes(types[k]);
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    for (int64_t k = 0, at = 0; k < count; ++k) {
      const int64_t bytes = cuda::collectiveBytes(types[k]);
      checkCuda(cudaMemcpyAsync(results[k], packed + at, size_t(wholes[k] * bytes),
                                cudaMemcpyDeviceToDevice, stream));
      at += sizes[k] * world.size * bytes;
    }
  }

  /// The step's reduce-scatter on `stream`: each whole tensor copied into
  /// `packed` and padded with zeros to ranks chunks, then summed (16 bits
  /// with f32 arithmetic per hop) and scattered, this rank's chunk into
  /// results[k]; a bucket (`bucket`) through the buckets' communicator.
  void deviceReduceScatter(cudaStream_t stream, int count, const void *const *inputs,
                           void *const *results, const int64_t *sizes, const int64_t *wholes,
                           const cuda::CollectiveType *types, char *packed, bool bucket) {
    ncclComm_t through = bucket ? buckets : joined();
    for (int64_t k = 0, at = 0; k < count; ++k) {
      const int64_t bytes = cuda::collectiveBytes(types[k]);
      checkCuda(cudaMemcpyAsync(packed + at, inputs[k], size_t(wholes[k] * bytes),
                                cudaMemcpyDeviceToDevice, stream));
      checkCuda(cudaMemsetAsync(packed + at + wholes[k] * bytes, 0,
                                size_t((sizes[k] * world.size - wholes[k]) * bytes), stream));
      at += sizes[k] * world.size * bytes;
    }
    check(ncclGroupStart(), "ncclGroupStart");
    for (int64_t k = 0, at = 0; k < count; ++k) {
      check(ncclReduceScatter(packed + at, results[k], size_t(sizes[k]), ncclType(types[k]),
                              ncclSum, through, stream),
            "ncclReduceScatter");
      at += sizes[k] * world.size * cuda::collectiveBytes(types[k]);
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

private:
  void checkCuda(cudaError_t r) {
    if (r == cudaSuccess)
      return;
    std::cerr << "error: rank " << world.rank << ": a copy of the sharded state failed: "
              << cudaGetErrorString(r) << "\n";
    abortJob(1);
  }

  ncclComm_t joined() {
    if (!comm) {
      std::cerr << "error: rank " << world.rank << " has no GPU for its collectives\n";
      std::_Exit(1);
    }
    return comm;
  }

  void check(ncclResult_t r, const char *what) {
    if (r == ncclSuccess)
      return;
    std::cerr << "error: rank " << world.rank << ": " << what << " failed: "
              << ncclGetErrorString(r) << "\n";
    abortJob(1);
  }

  /// A host buffer summed over the ranks through the device.
  template <class T> void hostSum(T *data, int64_t n, ncclDataType_t type) {
    if (world.size == 1 || n == 0)
      return;
    hostCollective(data, n, data, n, [&](void *in, void *out) {
      return ncclAllReduce(in, out, size_t(n), type, ncclSum, joined(), side);
    });
  }

  /// Returns once the side stream's work is done, against the timeout.
  void finishSide(const char *what) {
    awaitDevice([&] { return cudaStreamQuery(side) != cudaErrorNotReady; });
    if (cudaStreamSynchronize(side) != cudaSuccess) {
      std::cerr << "error: rank " << world.rank << ": " << what << " failed\n";
      abortJob(1);
    }
  }

  /// `call(in, out)` on device copies of `in` (n values) and `out` (m).
  template <class T, class Call>
  void hostCollective(const T *in, int64_t n, T *out, int64_t m, Call call) {
    if (n == 0 && m == 0)
      return;
    const size_t inBytes = size_t(n) * sizeof(T), bytes = inBytes + size_t(m) * sizeof(T);
    if (bytes > stagingBytes) {
      if (staging)
        cudaFree(staging);
      if (cudaMalloc(&staging, bytes) != cudaSuccess) {
        std::cerr << "error: rank " << world.rank << ": no device memory for " << bytes
                  << " bytes of the trainer's collectives\n";
        abortJob(1);
      }
      stagingBytes = bytes;
    }
    char *deviceIn = static_cast<char *>(staging), *deviceOut = deviceIn + inBytes;
    cudaMemcpyAsync(deviceIn, in, inBytes, cudaMemcpyHostToDevice, side);
    check(call(deviceIn, deviceOut), "a collective");
    cudaMemcpyAsync(out, deviceOut, size_t(m) * sizeof(T), cudaMemcpyDeviceToHost, side);
    finishSide("the trainer's collective");
    // The per-step sums are a few values; a sharded checkpoint's gather is
    // the whole parameters, which sharding keeps off the device.
    if (stagingBytes > kKeptStagingBytes) {
      cudaFree(staging);
      staging = nullptr;
      stagingBytes = 0;
    }
  }

  static constexpr size_t kKeptStagingBytes = size_t(1) << 20;

  LaunchedWorld world;
  FaultSettings settings;
  ncclComm_t comm = nullptr;
  ncclComm_t buckets = nullptr; ///< the gradient buckets', split from comm
  cudaStream_t side = nullptr;
  void *staging = nullptr;
  size_t stagingBytes = 0;
};

} // namespace

std::unique_ptr<Communicator> createCommunicator(int64_t ranks, std::string &error) {
  LaunchedWorld world;
  if (!launchedWorld(world, error))
    return nullptr;
  if (world.size != ranks) {
    // Said once, by the first process; the others fail quietly.
    if (world.rank == 0)
      error = wrongWorldError(static_cast<int>(ranks), world);
    return nullptr;
  }
  auto comm = std::make_unique<Nccl>(world);
  if (!comm->start(error)) {
    error = "rank " + std::to_string(world.rank) + ": " + error;
    return nullptr;
  }
  return comm;
}

namespace {
/// The trainer's communicator, which a step of several ranks needs to be
/// NCCL's.
Nccl *ncclOf(Communicator *comm) {
  auto *nccl = dynamic_cast<Nccl *>(comm);
  if (!nccl) {
    std::cerr << "error: this trainer's step reduces over ranks, but its communicator is "
                 "not NCCL's; compile it again with tcc\n";
    std::_Exit(1);
  }
  return nccl;
}
} // namespace

void cuda::nccl_all_reduce(Communicator *comm, cudaStream_t stream, int count,
                           const void *const *inputs, void *const *results,
                           const int64_t *sizes, const CollectiveType *types, bool mean,
                           bool bucket) {
  Nccl *nccl = ncclOf(comm);
  std::vector<ncclDataType_t> ncclTypes(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k)
    ncclTypes[static_cast<size_t>(k)] = ncclType(types[k]);
  nccl->deviceAllReduce(stream, count, inputs, results, sizes, ncclTypes.data(), mean, bucket);
}

void cuda::nccl_all_gather(Communicator *comm, cudaStream_t stream, int count,
                           const void *const *chunks, void *const *results,
                           const int64_t *sizes, const int64_t *wholes,
                           const CollectiveType *types, char *packed) {
  ncclOf(comm)->deviceAllGather(stream, count, chunks, results, sizes, wholes, types, packed);
}

void cuda::nccl_reduce_scatter(Communicator *comm, cudaStream_t stream, int count,
                               const void *const *inputs, void *const *results,
                               const int64_t *sizes, const int64_t *wholes,
                               const CollectiveType *types, char *packed, bool bucket) {
  ncclOf(comm)->deviceReduceScatter(stream, count, inputs, results, sizes, wholes, types,
                                    packed, bucket);
}

} // namespace tcc::rt
