//===- MultiTensor.cuh - Every parameter's update in one launch --*- CUDA -*-===//
//
// The cuda kernel of a multi-tensor update group (runtime/cpu/MultiTensor.h
// is the cpu one, with the same chains and stages): all chains of one
// element type in one launch. Each chain gets whole blocks of kThreads
// elements, so a block's threads run one chain's stages (no divergence
// between chains); a block finds its chain by a binary search over the
// chains' first blocks. The chains are independent (codegen/CpuFusion.cpp's
// planUpdateChains puts an update that reads another's result in its
// chain), so their order does not matter. One launch instead of one per
// parameter: airbench94 runs 26 chains per step, most of a few hundred
// elements, each a launch that fills a fraction of one SM.
//
// The table travels by value as the kernel's parameter (up to 32764 bytes
// from CUDA 12.1 on Volta and later); the code generator splits a group
// whose table would not fit (kMaxStagesPerLaunch).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_MULTITENSOR_CUH
#define TCC_RUNTIME_CUDA_DEVICE_MULTITENSOR_CUH

#include "runtime/cpu/MultiTensor.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Elementwise.h"

namespace tcc::rt::cuda {

/// Stages one launch takes; codegen/cuda/ops/OptimizerOps.cpp starts a new launch beyond
/// it (keeps UpdateTable under the kernel parameter limit, static_assert).
constexpr int kMaxStagesPerLaunch = 128;

/// Gives each of `Count` tensors whole blocks of kThreads elements: the first
/// block of tensor k in firstBlock[k], the total in firstBlock[Count] and
/// returned. `elementsOf(k)`: tensor k's elements.
template <int Count, class ElementsOf>
int64_t assign_first_blocks(uint32_t (&firstBlock)[Count + 1], ElementsOf elementsOf,
                            const char *what) {
  int64_t blocks = 0;
  for (int k = 0; k < Count; ++k) {
    firstBlock[k] = static_cast<uint32_t>(blocks);
    blocks += blocksFor(elementsOf(k));
  }
  firstBlock[Count] = static_cast<uint32_t>(blocks);
  if (blocks > 0x7fffffff)
    throw std::runtime_error(std::string("a ") + what + " of more than 2^31 blocks");
  return blocks;
}

#ifndef TCC_CUDA_HOST_EMULATION
template <class Table>
__global__ void __launch_bounds__(kThreads) multiTensorKernel(const Table table) {
  thread_at(table, blockIdx.x, threadIdx.x);
}
#endif

/// `blocks` blocks of kThreads threads, each running thread_at(table, block,
/// thread) (the table's overload below), in one launch; the table travels by
/// value as the kernel's parameter.
template <class Table>
void launch_table(cudaStream_t stream, const Table &table, int64_t blocks, const char *what) {
  static_assert(sizeof(Table) <= 32764, "beyond CUDA's kernel parameter limit");
  if (blocks == 0)
    return;
#ifdef TCC_CUDA_HOST_EMULATION
  emulation::enqueue(stream, [=] {
    for (uint32_t b = 0; b < uint32_t(blocks); ++b)
      for (int t = 0; t < kThreads; ++t)
        thread_at(table, b, t);
  });
#else
  multiTensorKernel<<<unsigned(blocks), kThreads, 0, stream>>>(table);
  check(cudaGetLastError(), what);
#endif
}

/// `Chains` chains of `Stages` stages in all, of element type T; firstBlock
/// is filled by multi_tensor_update.
template <class T, int Stages, int Chains> struct UpdateTable {
  cpu::UpdateStage<T> stages[Stages];
  cpu::UpdateChain chains[Chains];
  uint32_t firstBlock[Chains + 1];
};

/// The chain whose blocks include `block`: the last k with
/// firstBlock[k] <= block (firstBlock ascending, firstBlock[0] = 0).
template <int Chains>
TCC_HOST_DEVICE inline int chain_of_block(const uint32_t (&firstBlock)[Chains + 1],
                                          uint32_t block) {
  int low = 0, high = Chains - 1;
  while (low < high) {
    const int middle = (low + high + 1) / 2;
    if (firstBlock[middle] <= block)
      low = middle;
    else
      high = middle - 1;
  }
  return low;
}

/// Thread `thread` of block `block`: its chain's element, every stage.
template <class T, int Stages, int Chains>
TCC_HOST_DEVICE inline void thread_at(const UpdateTable<T, Stages, Chains> &table,
                                      uint32_t block, int thread) {
  const int k = chain_of_block<Chains>(table.firstBlock, block);
  const cpu::UpdateChain &chain = table.chains[k];
  const int64_t i = int64_t(block - table.firstBlock[k]) * kThreads + thread;
  if (i >= chain.n)
    return;
  const cpu::UpdateStage<T> *first = table.stages + chain.first;
  cpu::ChainConstants constants;
  cpu::prepare_chain(first, chain.count, constants);
  cpu::apply_chain_at(i, first, chain.count, constants);
}

/// Every chain of `table` in one launch.
template <class T, int Stages, int Chains>
void multi_tensor_update(cudaStream_t stream, UpdateTable<T, Stages, Chains> table) {
  static_assert(Stages <= kMaxStagesPerLaunch && Chains <= Stages,
                "a multi-tensor launch beyond kMaxStagesPerLaunch");
  const int64_t blocks = assign_first_blocks<Chains>(
      table.firstBlock, [&](int k) { return table.chains[k].n; }, "multi-tensor update");
  launch_table(stream, table, blocks, "launching the multi-tensor update");
}

//--- multi-tensor casts ----------------------------------------------------//

/// One cast of a multi_tensor_cast group: n elements of `from` converted into
/// `to` (f32 to and from bf16 / f16, the cast kernels' conversions).
struct TensorCast {
  enum Kind : int { FloatToBf16, FloatToF16, Bf16ToFloat, F16ToFloat } kind;
  const void *from;
  void *to;
  int64_t n;
};

/// `Casts` casts; firstBlock is filled by multi_tensor_cast.
template <int Casts> struct CastTable {
  TensorCast casts[Casts];
  uint32_t firstBlock[Casts + 1];
};

/// Element i of `c`, converted as its kind says.
TCC_HOST_DEVICE inline void cast_element(const TensorCast &c, int64_t i) {
  switch (c.kind) {
  case TensorCast::FloatToBf16:
    static_cast<uint16_t *>(c.to)[i] = kernels::float_to_bf16(static_cast<const float *>(c.from)[i]);
    return;
  case TensorCast::FloatToF16:
    static_cast<uint16_t *>(c.to)[i] = kernels::float_to_f16(static_cast<const float *>(c.from)[i]);
    return;
  case TensorCast::Bf16ToFloat:
    static_cast<float *>(c.to)[i] = kernels::bf16_to_float(static_cast<const uint16_t *>(c.from)[i]);
    return;
  case TensorCast::F16ToFloat:
    static_cast<float *>(c.to)[i] = kernels::f16_to_float(static_cast<const uint16_t *>(c.from)[i]);
    return;
  }
}

/// Thread `thread` of block `block`: its cast's element.
template <int Casts>
TCC_HOST_DEVICE inline void thread_at(const CastTable<Casts> &table, uint32_t block, int thread) {
  const int k = chain_of_block<Casts>(table.firstBlock, block);
  const int64_t i = int64_t(block - table.firstBlock[k]) * kThreads + thread;
  if (i < table.casts[k].n)
    cast_element(table.casts[k], i);
}

/// Every cast of `table` in one launch: the casts of a bf16-mixed step's
/// parameters to their 16-bit copies, or of its 16-bit gradients to f32,
/// a launch each otherwise (a few microseconds apiece, for tensors that
/// mostly fill a fraction of the GPU).
template <int Casts> void multi_tensor_cast(cudaStream_t stream, CastTable<Casts> table) {
  const int64_t blocks = assign_first_blocks<Casts>(
      table.firstBlock, [&](int k) { return table.casts[k].n; }, "multi-tensor cast");
  launch_table(stream, table, blocks, "launching the multi-tensor cast");
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_MULTITENSOR_CUH
