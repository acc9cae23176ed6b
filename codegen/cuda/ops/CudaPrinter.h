//===- CudaPrinter.h - The cuda target's op printers, by family --*- C++ -*-===//
//
// Private to codegen/cuda/. Each op becomes calls of the device runtime
// (runtime/cuda/device/: StepOps.cuh, MultiTensor.cuh, Matmul.cuh, Pool.cuh,
// Norm.cuh, Softmax.cuh) or a device lambda launched over its elements
// (cuda::for_each), on `args.stream`. The element math is the cpu target's
// (runtime/kernels' functors and element functions, marked
// TCC_HOST_DEVICE). An op this version cannot run on a GPU is an error
// naming it: never a silent fallback to the host.
//
// A family's file registers its printers (registerCuda<Family>Ops);
// CudaOps.cpp builds the table from them and dispatches; CudaGroups.cpp
// prints the fusion groups.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CUDA_OPS_CUDAPRINTER_H
#define TCC_CODEGEN_CUDA_OPS_CUDAPRINTER_H

#include "codegen/common/Emitter.h"
#include "codegen/common/OpPrinterTable.h"

#include "ir/TccOps.h"

namespace mlir::tcc {

/// What a cuda printer prints with: the emitter's names, its stream and
/// the problem keys of the baked cuDNN plans (a convolution runs row i).
struct CudaPrinter {
  StepEmitter &e;
  llvm::raw_ostream &os;
  ArrayRef<std::string> convKeys;

  std::string operator()(Value v) const { return e.name(v); }

  /// `body` (reading and writing element i) over n elements.
  void forEach(int64_t n, const std::string &body);
  /// `body` over n elements in chunks (runtime/cuda/device/Chunk.cuh):
  /// element k of the chunks c<j> of `loads` loaded before it, of the
  /// chunks s<j> of `stores` stored after it; with `indexed`, `i` is the
  /// element's index.
  void forEachChunk(int64_t n, ArrayRef<std::string> loads, ArrayRef<std::string> stores,
                    StringRef body, bool indexed = false);
  /// cuda::KERNEL(stream, count, tensors, sizes, result) over `inputs`,
  /// whose arrays the call reads on the host when the step is recorded.
  void overTensors(StringRef kernel, ValueRange inputs, Value result);
  /// Copies `from` into `to` unless they are the same memory.
  void copyInto(Value from, Value to);
};

using CudaOpPrinters = OpPrinterTable<CudaPrinter>;

/// Why the cuda target cannot run `op` on its element types ("on bf16
/// tensors"), or empty.
std::string unsupportedTypes(Operation *op);
/// The error for an op on element types the target does not run it on.
LogicalResult refuseTypes(Operation *op, const std::string &why);
/// The error for an op the target cannot run at all.
LogicalResult cudaCannotRun(Operation *op);

/// The workspace the memory plan gave `op` (the offset of its
/// tcc.workspace), as the arguments "pointer, bytes".
std::string workspaceOf(Operation *op);

/// A linear layer's forward through cuBLASLt, storing into `result` (a
/// matmul_epilogue group's activation, epilogueActivationOf: its output,
/// and with gelu_aux the linear's own result into `aux`), with the
/// workspace the memory plan placed for `planned` (the op, or its group).
void printLinearForward(LinearOp o, CudaPrinter &p, Value result, Value aux, Operation *planned);

/// A convolution: its row of the baked cuDNN plans (runtime/cuda/ConvRunner.h),
/// storing into `result` (the op's, or its conv_epilogue group's), with the
/// workspace placed for `planned`.
LogicalResult printConv(Operation *op, CudaPrinter &p, Value result, Operation *planned);

/// A conv_statistics group: the convolution with its statistics in one
/// cuDNN graph, or where the table has no such engine, its three ops.
LogicalResult printConvStatistics(FusionGroupOp group, CudaPrinter &p);

/// A tcc.batch_norm_sums (runtime/cuda/device/SyncNorm.cuh) with the
/// workspace placed for `planned` (the op, or its conv_statistics group);
/// a 16-bit input is widened as it is loaded.
void printBatchNormSums(BatchNormSumsOp o, CudaPrinter &p, Operation *planned);

/// The optimizer (and EMA, Lookahead) updates of `plan`: the chains of each
/// element type in one launch (runtime/cuda/device/MultiTensor.cuh).
void printUpdateChains(const MultiTensorChains &plan, CudaPrinter &p);

/// A tcc.fusion_group as the cuda target runs it (CudaGroups.cpp).
LogicalResult emitCudaFusionGroup(FusionGroupOp group, CudaPrinter &p);

/// The joins of the side-stream buckets (tcc.side_stream) whose first
/// reader is `op`, printed before it (CollectiveOps.cpp).
std::string sideStreamJoins(Operation *op);

/// The families (cuda/ops/<Family>Ops.cpp): registerCuda<Family>Ops.
#define OP_FAMILY(Family) void registerCuda##Family##Ops(CudaOpPrinters &table);
#include "codegen/common/OpFamilies.def"

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDA_OPS_CUDAPRINTER_H
