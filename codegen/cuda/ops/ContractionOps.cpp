//===- ContractionOps.cpp - Convolutions, linear layers, attention on the GPU ===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "codegen/cuda/StepProblems.h"
#include "ir/TccPlan.h"

#include <optional>

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// linear_backward_data (`other` the weight) or linear_backward_weight
/// (`other` the input), `w` the weight's dims.
void printLinearBackward(Operation *op, CudaPrinter &p, StringRef which, ArrayRef<int64_t> w,
                         Value grad, Value other) {
  p.os << "  args.matmul->linear_backward_" << which
       << "(args.stream, cuda::Matmul::Type::" << storageName(op->getResult(0)) << ", "
       << numElements(grad) / w[0] << ", " << w[1] << ", " << w[0] << ", " << p(grad) << ", "
       << p(other) << ", " << p(op->getResult(0)) << ", " << workspaceOf(op) << ");\n";
}

/// The workspace, shape and dropout arguments of the attention kernels
/// (runtime/cuda/device/Attention.cuh), as the cpu target's: p, the seed
/// (null without dropout), the stream (in a micro-batch loop, each
/// iteration's own, as tcc.dropout's) and the control block (the rank).
template <class AttentionOp> std::string attentionArgs(AttentionOp o, CudaPrinter &p) {
  std::string stream = std::to_string(o.getStream());
  if (auto loop = o->template getParentOfType<MicroBatchesOp>())
    stream += " + uint64_t(args.micro) * " + std::to_string(loop.getDropoutStreams());
  std::string seed =
      o.getSeed() ? p(o.getSeed()) : std::string("static_cast<const int64_t *>(nullptr)");
  return "*args.matmul, args.stream, " + workspaceOf(o) + ", " +
         kernel_args::cpp(kernel_args::attention(o)) +
         ", " + cppDouble(o.getDropout()) + ", " + seed + ", " + stream + ", args.control";
}

} // namespace

void mlir::tcc::printLinearForward(LinearOp o, CudaPrinter &p, Value result, Value aux,
                                   Operation *planned) {
  ArrayRef<int64_t> in = dimsOf(o.getInput());
  const ::tcc::cuda::MatmulActivation activation = epilogueActivationOf(o);
  p.os << "  args.matmul->linear_forward(args.stream, cuda::Matmul::Type::"
       << storageName(o.getResult()) << ", " << product(in.drop_back()) << ", " << in.back() << ", "
       << dimsOf(o.getWeight())[0] << ", " << p(o.getInput()) << ", " << p(o.getWeight()) << ", "
       << (o.getBias() ? p(o.getBias()) : "nullptr") << ", " << p(result) << ", "
       << workspaceOf(planned);
  if (activation != ::tcc::cuda::MatmulActivation::none)
    p.os << ", ::tcc::cuda::MatmulActivation::" << ::tcc::cuda::matmulActivationName(activation)
         << ", " << (activation == ::tcc::cuda::MatmulActivation::gelu_aux ? p(aux) : "nullptr");
  p.os << ");\n";
}

// A forward conv's bias, and the ReLU of its conv_epilogue group, run in
// cuDNN's epilogue; where cuDNN had no engine for that, kernels after the
// conv apply them to `result` in place.
LogicalResult mlir::tcc::printConv(Operation *op, CudaPrinter &p, Value result,
                                   Operation *planned) {
  namespace cuda = ::tcc::cuda;
  ArrayRef<std::string> convKeys = p.convKeys;
  FailureOr<cuda::ConvProblem> problem = convProblemOf(op);
  if (failed(problem))
    return op->emitError("the cuda target runs a convolution in one element type");
  std::optional<cuda::ConvProblem> row = bakedConvProblem(*problem, convKeys);
  if (!row)
    return op->emitError("the convolution [")
           << problem->key() << "] has no baked cuDNN engine; tcc compile --target=cuda "
           << "chooses them (the module's tcc.cuda_target attribute)";
  const int64_t index = llvm::find(convKeys, row->key()) - convKeys.begin();
  auto run = [&](Value x, Value weight, Value y, Value bias) {
    static const char *const epilogues[] = {"", " + bias", " + bias, ReLU"};
    p.os << "  args.convs->run(" << index << ", " << p(x) << ", " << p(weight) << ", " << p(y)
         << ", " << workspaceOf(planned) << (bias ? ", " + p(bias) : "") << "); // "
         << cuda::directionName(row->direction) << epilogues[int(row->epilogue)] << "\n";
  };
  auto conv = dyn_cast<Conv2dOp>(op);
  if (!conv) {
    if (auto data = dyn_cast<Conv2dBackwardDataOp>(op))
      run(data.getResult(), data.getWeight(), data.getGrad(), Value());
    else if (auto filter = cast<Conv2dBackwardFilterOp>(op))
      run(filter.getInput(), filter.getResult(), filter.getGrad(), Value());
    return success();
  }
  const bool fused = row->epilogue != cuda::ConvEpilogue::None;
  run(conv.getInput(), conv.getWeight(), result, fused ? conv.getBias() : Value());
  if (fused || !conv.getBias())
    return success();
  // Channel k of element i: i / plane % K, NHWC's i % K (planes of 1).
  const bool last = problem->layout == cuda::ConvLayout::NHWC;
  const int64_t plane = last ? 1 : problem->p * problem->q,
                images = last ? problem->n * problem->p * problem->q : problem->n,
                count = images * problem->k * plane;
  const bool relu = problem->epilogue == cuda::ConvEpilogue::BiasRelu;
  std::string type = storageName(result), y = p(result), bias = p(conv.getBias());
  if (type == "f32") {
    p.os << "  cuda::add_channel_bias(args.stream, " << images << ", " << problem->k << ", "
         << plane << ", " << bias << ", " << y << ");\n";
    if (relu)
      p.forEachChunk(count, {y}, {y}, "s0[k] = Relu<float>{}(c0[k]);");
    return success();
  }
  // The stored 16-bit sum (rounded twice, where cuDNN's epilogue rounds
  // once: within an ulp of 16 bits), and its ReLU, which commutes with the
  // rounding.
  std::string channel =
      bias + "[i / " + std::to_string(plane) + " % " + std::to_string(problem->k) + "]";
  std::string sum = type + "_to_float(c0[k]) + " + type + "_to_float(" + channel + ")";
  p.forEachChunk(count, {y}, {y},
                 "s0[k] = float_to_" + type + "(" + (relu ? "Relu<float>{}(" + sum + ")" : sum) +
                     ");",
                 /*indexed=*/true);
  return success();
}

void mlir::tcc::printBatchNormSums(BatchNormSumsOp o, CudaPrinter &p, Operation *planned) {
  p.os << "  cuda::batch_norm_sums(args.stream, " << workspaceOf(planned) << ", "
       << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << o.getRanks() << ", "
       << updatePointer(p.e, o.getInput(), o.getInput()) << ", "
       << (o.getCentered() ? p(o.getCentered()) : std::string("nullptr")) << ", "
       << p(o.getResult()) << ");\n";
}

// A conv_statistics group: where the baked table has the convolution with
// its statistics, one cuDNN graph (conv_fprop, genstats) on the weight
// transposed to KRSC, then the f32 sums turned into the norm's (double)
// statistics; else the convolution, then the two sums' own kernels.
LogicalResult mlir::tcc::printConvStatistics(FusionGroupOp group, CudaPrinter &p) {
  namespace cuda = ::tcc::cuda;
  SmallVector<Operation *> ops;
  for (Operation &op : group.getFusedOps())
    ops.push_back(&op);
  auto conv = cast<Conv2dOp>(ops[0]);
  auto sum = cast<BatchNormSumsOp>(ops[1]), squared = cast<BatchNormSumsOp>(ops[2]);
  // What the group yields in place of each op's result.
  auto yielded = [&](Value v) -> Value {
    auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
    for (auto [value, result] : llvm::zip(yield.getValues(), group.getResults()))
      if (value == v)
        return result;
    return v;
  };
  FailureOr<cuda::ConvProblem> problem = convProblemOf(conv);
  std::optional<cuda::ConvProblem> row =
      succeeded(problem) ? bakedConvProblem(*problem, p.convKeys) : std::nullopt;
  if (!row || row->epilogue != cuda::ConvEpilogue::Statistics) {
    if (failed(printConv(conv, p, yielded(conv.getResult()), group)))
      return failure();
    // The sums read the stored result, each its own kernel (SyncNorm.cuh).
    for (Value v : {conv.getResult(), sum.getResult(), squared.getResult()})
      p.e.names[v] = p(yielded(v));
    printBatchNormSums(sum, p, group);
    printBatchNormSums(squared, p, group);
    return success();
  }
  const int64_t index = llvm::find(p.convKeys, row->key()) - p.convKeys.begin();
  WorkspaceAttr workspace = getWorkspace(group);
  const cuda::StatisticsWorkspace parts(*row);
  if (!workspace || !workspace.getOffset() || workspace.getBytes() < parts.bytes(0))
    return group.emitError("the conv_statistics group has no workspace for its KRSC weight "
                           "and sums; tcc-cuda-select-algorithms sets it");
  const std::string base = "args.scratch + " + std::to_string(*workspace.getOffset());
  const std::string krsc = "reinterpret_cast<uint16_t *>(" + base + ")";
  const std::string sums = "reinterpret_cast<float *>(" + base + " + " +
                           std::to_string(parts.sumsOffset) + ")";
  const int64_t engineBytes = workspace.getBytes() - parts.engineOffset;
  p.os << "  cuda::weight_to_krsc(args.stream, " << row->k << ", " << row->c / row->groups
       << ", " << row->r * row->s << ", " << p(conv.getWeight()) << ", " << krsc << ");\n";
  p.os << "  args.convs->runWithStatistics(" << index << ", " << p(conv.getInput()) << ", "
       << krsc << ", " << p(yielded(conv.getResult())) << ", " << sums << ", " << sums << " + "
       << row->k << ", " << base << " + " << parts.engineOffset << ", " << engineBytes
       << "); // forward + statistics\n";
  p.os << "  cuda::statistics_from_sums(args.stream, "
       << kernel_args::cpp(kernel_args::batchNorm(sum)) << ", " << sums << ", " << sums
       << " + " << row->k << ", " << p(yielded(sum.getResult())) << ", "
       << p(yielded(squared.getResult())) << ");\n";
  return success();
}

void mlir::tcc::registerCudaContractionOps(CudaOpPrinters &t) {
  // Linear layers through cuBLASLt (runtime/cuda/device/Matmul.cuh), in the
  // type of their result, with the workspace the memory plan placed.
  t.add<LinearOp>([](LinearOp o, CudaPrinter &p) {
    printLinearForward(o, p, o.getResult(), Value(), o);
    return success();
  });
  t.add<LinearBackwardDataOp>([](LinearBackwardDataOp o, CudaPrinter &p) {
    printLinearBackward(o, p, "data", dimsOf(o.getWeight()), o.getGrad(), o.getWeight());
    return success();
  });
  t.add<LinearBackwardWeightOp>([](LinearBackwardWeightOp o, CudaPrinter &p) {
    printLinearBackward(o, p, "weight", dimsOf(o.getResult()), o.getGrad(), o.getInput());
    return success();
  });
  // Products of two activations, f32: one cuBLASLt strided batched matmul
  // (Matmul.cuh), posed as matmulProblemOf poses it to the tuner.
  t.add<MatmulOp>([](MatmulOp o, CudaPrinter &p) {
    if (!cast<ShapedType>(o.getType()).getElementType().isF32())
      return cudaCannotRun(o);
    ArrayRef<int64_t> c = dimsOf(o.getResult());
    const int64_t m = c[c.size() - 2], n = c.back(), batch = numElements(o.getResult()) / (m * n);
    const int64_t k = numElements(o.getLhs()) / batch / m;
    p.os << "  args.matmul->batched_matmul(args.stream, cuda::Matmul::Type::f32, " << batch
         << ", " << m << ", " << n << ", " << k << ", "
         << (o.getTransposeA() ? "true" : "false") << ", "
         << (o.getTransposeB() ? "true" : "false") << ", " << p(o.getLhs()) << ", "
         << p(o.getRhs()) << ", " << p(o.getResult()) << ", " << workspaceOf(o) << ");\n";
    return success();
  });
  // Attention: cuBLASLt head products and row kernels, the scores and
  // cuBLASLt's workspace in the op's (Attention.cuh).
  t.add<ScaledDotProductAttentionOp>([](ScaledDotProductAttentionOp o, CudaPrinter &p) {
    p.os << "  cuda::attention_forward<float>(" << attentionArgs(o, p) << ", " << p(o.getQuery())
         << ", " << p(o.getKey()) << ", " << p(o.getValue()) << ", " << p(o.getResult()) << ", "
         << p(o.getLogsumexp()) << ");\n";
    return success();
  });
  t.add<ScaledDotProductAttentionBackwardOp>(
      [](ScaledDotProductAttentionBackwardOp o, CudaPrinter &p) {
        p.os << "  cuda::attention_backward<float>(" << attentionArgs(o, p) << ", "
             << p(o.getGrad()) << ", " << p(o.getQuery()) << ", " << p(o.getKey()) << ", "
             << p(o.getValue()) << ", " << p(o.getResultValue()) << ", " << p(o.getLogsumexp())
             << ", " << p(o.getGradQuery()) << ", " << p(o.getGradKey()) << ", "
             << p(o.getGradValue()) << ");\n";
        return success();
      });
  // Types first: a convolution on mixed types has no cuDNN problem to name.
  t.add<Conv2dOp, Conv2dBackwardDataOp, Conv2dBackwardFilterOp>([](auto o, CudaPrinter &p) {
    if (std::string why = unsupportedTypes(o); !why.empty())
      return refuseTypes(o, why);
    return printConv(o, p, o.getResult(), o);
  });
}
