//===- Emitter.h - Printing one op as a runtime kernel call -----*- C++ -*-===//
//
// Private to codegen/, shared by the targets: the walk (StepWalker.cpp)
// names every value (StepEmitter); each target's op printers (cpu/ops/,
// cuda/ops/, by op family) turn one op into calls to its kernels; the
// element bodies of fused groups (ElementBody.cpp, NormGroups.cpp), the
// optimizer's update chains (UpdateChains.cpp) and the C++ spellings
// (CppText.cpp) are the targets' common ground.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_COMMON_EMITTER_H
#define TCC_CODEGEN_COMMON_EMITTER_H

#include "ir/TccRecipe.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tcc {

struct StepEmitter {
  llvm::raw_ostream &os;
  /// The C++ expression of each value's pointer.
  llvm::DenseMap<Value, std::string> names;

  const std::string &name(Value v) const { return names.find(v)->second; }
  /// `name` or `nullptr` typed for the kernel templates.
  std::string nameOrNull(Value v) const {
    return v ? name(v) : std::string("static_cast<float *>(nullptr)");
  }
};

/// The C++ element type of a tensor: float, int64_t, uint16_t (bf16, f16),
/// uint8_t.
std::string cppElementType(Type type);

/// The product of `dims`.
inline int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// A ScheduleDesc (runtime/common/Schedule.h) as an immediately invoked
/// lambda; the attribute form is a tcc.lr_schedule's `schedule`.
std::string cppScheduleDesc(const ::tcc::rt::ScheduleDesc &schedule);
std::string cppScheduleDesc(ScheduleAttr schedule);

/// `s` as a C++ string literal, quotes included.
std::string cppStringLiteral(StringRef s);

/// A double as a C++ literal that reads back exactly.
std::string cppDouble(double value);
inline std::string cppDouble(const APFloat &value) {
  return cppDouble(value.convertToDouble());
}

/// The runtime's Reduction for a loss op's "mean" / "sum".
inline std::string cppReduction(StringRef reduction) {
  return reduction == "sum" ? "Reduction::Sum" : "Reduction::Mean";
}

/// The value of a splat constant as a C++ literal: `float(...)` (9
/// significant digits read back exactly as a float) or an integer.
std::string cppScalarLiteral(DenseElementsAttr splat);

/// Number of elements and dims of a tensor value.
int64_t numElements(Value v);
ArrayRef<int64_t> dimsOf(Value v);

class FusionGroupOp;

/// The arrays `tensors` and `sizes` of `inputs`, opening a block the caller
/// closes after its call: "  { const float *tensors[] = {..}; const int64_t
/// sizes[] = {..};\n".
std::string tensorArrays(const StepEmitter &emitter, ValueRange inputs);

/// The arrays of a sharded state's collective (tcc.all_gather: chunks in,
/// whole tensors out; tcc.reduce_scatter: the other way), opening a block
/// the caller closes after its call: "  { const T *inputs[] = {..};
/// T *results[] = {..}; const int64_t sizes[] = {chunk sizes},
/// wholes[] = {whole sizes};\n", T the `element` type.
std::string chunkCollectiveArrays(const StepEmitter &emitter, ValueRange inputs,
                                  ValueRange results, bool gather,
                                  StringRef element = "float");

/// "f32", "bf16" or "f16" ("?" otherwise): how a value's elements are
/// stored, as the float <-> 16-bit conversions name them.
std::string storageName(Value v);

/// The element functor of an activation, forward or backward, as a C++
/// expression (`Celu<float>(0.075)`; runtime/kernels/Activation.h), or
/// empty for other ops (common/Activations.cpp). Backward functors take (the forward's value, the
/// gradient).
std::string elementFunctorOf(Operation *op);

/// The loop body of an elementwise tcc.fusion_group at element `i`: the
/// element functors to declare before the loop, and the statements (its
/// values from outside the group are read at `i`, its yielded ones stored
/// there). The targets wrap it in their loop (cpu/CpuGroups.cpp,
/// cuda/CudaGroups.cpp).
LogicalResult printElementwiseBody(FusionGroupOp group, StepEmitter &emitter,
                                   std::string &functors, std::string &body);

/// The same body for a chunk of elements (the cuda target's
/// runtime/cuda/device/Chunk.cuh): the operands are loaded into chunks
/// c<j> before it and the results stored from chunks s<j> after it.
struct ChunkedElementwise {
  std::vector<std::string> loads;  ///< the pointers read: chunk c<j> is loads[j]'s
  std::vector<std::string> stores; ///< the pointers written: chunk s<j> is stores[j]'s
  std::string functors;            ///< declared before the loop
  std::string body;                ///< element k of the chunk: reads c<j>[k], writes s<j>[k]
};
LogicalResult printChunkedElementwiseBody(FusionGroupOp group, StepEmitter &emitter,
                                          ChunkedElementwise &chunked);

/// The statements of a chunk (runtime/cuda/device/Chunk.cuh, in a lambda
/// of `i0` and `count`): the chunks c<j> of `loads` loaded, `prelude` and
/// `body` for each element k of the chunk (unrolled), the chunks s<j> of
/// `stores` stored; each line indented by `indent`.
std::string chunkLoopText(ArrayRef<std::string> loads, ArrayRef<std::string> stores,
                          StringRef prelude, StringRef body, StringRef indent);

/// How a target calls the batch norm kernels with a lambda (`_with`): the
/// cpu target's host kernels (runtime/kernels/Norm.h), or the cuda
/// target's launches of the same per-channel functions.
struct NormKernelStyle {
  std::string lambda; ///< what opens the store / dy lambda: "[&]"
  std::string call;   ///< before the kernel's name: "", "cuda::"
  std::string stream; ///< the kernel's first arguments: "", "args.stream, "
  /// After `stream`, for the kernels that sum over the batch (the training
  /// forward and the backward): "" on the cpu, the cuda target's workspace
  /// "pointer, bytes, " (runtime/cuda/RowSplit.h).
  std::string workspace;
  /// The cuda target's kernels take a chunk of elements at a time
  /// (runtime/cuda/device/Norm.cuh); the cpu target's, one.
  bool chunked = false;
  static NormKernelStyle cpu() { return {"[&]", "", "", "", false}; }
};

/// A norm_epilogue or norm_backward_prologue group: the batch norm kernel
/// with the group's elementwise ops as the lambda through which it stores
/// (or reads its gradient), printed in `style`.
LogicalResult emitNormGroup(FusionGroupOp group, StepEmitter &emitter,
                            const NormKernelStyle &style);

/// The element type the optimizer kernels (runtime/kernels/Optimizer.h,
/// runtime/cpu/MultiTensor.h) are instantiated with for state stored like
/// `v`: float, or tcc::rt::half::F16 / BF16 for the 16-bit state of pure
/// 16-bit training (runtime/common/Float16.h).
std::string updateElementType(Value v);
/// `v`'s pointer as that type (a 16-bit tensor's uint16_t pointer cast), or
/// a null pointer of the type of `like` when `v` is null.
std::string updatePointer(const StepEmitter &emitter, Value v, Value like);

/// A multi_tensor_update group as runtime/cpu/MultiTensor.h runs it: copies
/// into the updates' buffers before the loops, then chains of stages (each
/// a C++ expression of a cpu::UpdateStage<T>) over one tensor each.
struct MultiTensorChains {
  struct Copy {
    int64_t n;
    std::string type, from, to;
  };
  struct Chain {
    int64_t n;
    std::string type; ///< the stages' T (updateElementType)
    llvm::SmallVector<std::string> stages;
  };
  llvm::SmallVector<Copy> copies;
  llvm::SmallVector<Chain> chains;
};
LogicalResult planMultiTensorUpdate(FusionGroupOp group, StepEmitter &emitter,
                                    MultiTensorChains &out);
/// The same for `updates` in order (sgd, adamw, ema and lookahead updates):
/// the cuda target runs an update outside a group as a chain of one.
LogicalResult planUpdateChains(ArrayRef<Operation *> updates, StepEmitter &emitter,
                               MultiTensorChains &out);

/// A kernel's table of chains of one element type, as C++ initialiser lines:
/// `stages` (one per line) and `chains` ({elements, first stage, stages}).
struct UpdateTable {
  std::string type, stages, chains;
  size_t stageCount = 0, chainCount = 0;
};
/// The chains of `plan` as tables, one per element type (the chains are
/// independent of each other), a new one where a table would pass
/// `maxStages` stages (a chain is never split).
SmallVector<UpdateTable> updateTables(const MultiTensorChains &plan, size_t maxStages);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_COMMON_EMITTER_H
