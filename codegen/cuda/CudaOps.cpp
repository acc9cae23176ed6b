//===- CudaOps.cpp - One tcc op as launches on the model's stream ---------===//
//
// The cuda target's printers: each op becomes calls of the device runtime
// (runtime/cuda/device/: StepOps.cuh, MultiTensor.cuh, Matmul.cuh, Pool.cuh,
// Norm.cuh, Softmax.cuh) or a device lambda launched over its elements
// (cuda::for_each), on `args.stream`. The element math is the cpu target's
// (runtime/kernels' functors and element functions, marked
// TCC_HOST_DEVICE). An op this
// version cannot run on a GPU is an error naming it: never a silent
// fallback to the host.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaEmitter.h"

#include "codegen/cuda/StepProblems.h"
#include "codegen/common/KernelArgs.h"
#include "ir/ModelNode.h"
#include "ir/PhysicalLayout.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"

#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// Why the cuda target cannot run `op` on its element types ("on bf16
/// tensors"), or empty. 16-bit tensors are read and written by
/// convolutions, linear layers, max pools, channel padding and slices (in
/// one type per op), views,
/// casts from or to f32, and the optimizer, EMA and Lookahead updates (the 16-bit state
/// of pure 16-bit training; planUpdateChains checks one type per update);
/// tcc-widen-16bit puts every other op on f32 copies (the cuda target's
/// `keep` list, passes/InitAll.cpp). A kernel on their stored bits would
/// compute garbage, silently.
std::string unsupportedTypes(Operation *op) {
  if (auto cast = dyn_cast<CastOp>(op)) {
    std::string from = storageName(cast.getInput()), to = storageName(cast.getResult());
    return from == to || from == "f32" || to == "f32" ? "" : "from " + from + " to " + to;
  }
  if (isa<FlattenOp, ReshapeOp, SgdUpdateOp, AdamwUpdateOp, EmaUpdateOp, LookaheadUpdateOp>(op))
    return "";
  if (isa<ReduceSumOp>(op))
    return storageName(op->getOperand(0)) == storageName(op->getResult(0))
               ? ""
               : "from " + storageName(op->getOperand(0)) + " to " +
                     storageName(op->getResult(0));
  if (isa<LinearOp, LinearBackwardDataOp, LinearBackwardWeightOp, Conv2dOp,
          Conv2dBackwardDataOp, Conv2dBackwardFilterOp, MaxPool2dOp, MaxPool2dBackwardOp,
          PadChannelsOp, SliceOp>(op)) {
    std::string type = storageName(op->getResult(0));
    for (Value v : op->getOperands())
      if (storageName(v) != type)
        return "on " + storageName(v) + " and " + type + " tensors at once";
    return "";
  }
  for (ValueRange values : {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value v : values)
      if (Type element = getElementTypeOrSelf(v.getType());
          isa<FloatType>(element) && !element.isF32())
        return "on " + storageName(v) + " tensors";
  return "";
}

struct CudaPrinter {
  StepEmitter &e;
  llvm::raw_ostream &os;

  std::string operator()(Value v) const { return e.name(v); }

  /// `body` (reading and writing element i) over n elements.
  void forEach(int64_t n, const std::string &body) {
    os << "  cuda::for_each(args.stream, " << n
       << ", [=] __device__(int64_t i) { " << body << " });\n";
  }
  /// `body` over n elements in chunks (runtime/cuda/device/Chunk.cuh):
  /// element k of the chunks c<j> of `loads` loaded before it, of the
  /// chunks s<j> of `stores` stored after it; with `indexed`, `i` is the
  /// element's index.
  void forEachChunk(int64_t n, ArrayRef<std::string> loads, ArrayRef<std::string> stores,
                    StringRef body, bool indexed = false) {
    os << "    cuda::for_each_chunk(args.stream, " << n
       << ", [=] __device__(int64_t i0, int count) {\n"
       << chunkLoopText(loads, stores, indexed ? "const int64_t i = i0 + k;" : "", body, "      ")
       << "    });\n";
  }
  /// cuda::KERNEL(stream, count, tensors, sizes, result) over `inputs`,
  /// whose arrays the call reads on the host when the step is recorded.
  void overTensors(StringRef kernel, ValueRange inputs, Value result) {
    os << "  { const float *tensors[] = {";
    llvm::interleaveComma(inputs, os, [&](Value v) { os << e.name(v); });
    os << "}; const int64_t sizes[] = {";
    llvm::interleaveComma(inputs, os, [&](Value v) { os << numElements(v); });
    os << "};\n    cuda::" << kernel << "(args.stream, " << inputs.size()
       << ", tensors, sizes, " << e.name(result) << "); }\n";
  }
  void copyInto(Value from, Value to) {
    if (e.name(from) != e.name(to))
      os << "  cuda::copy<" << cppElementType(from.getType()) << ">(args.stream, "
         << numElements(from) << ", " << e.name(from) << ", " << e.name(to) << ");\n";
  }
};

/// The workspace the memory plan gave `op` (tcc.workspace_offset, set for
/// the bytes the cuda target asked for), as the arguments "pointer, bytes".
std::string workspaceOf(Operation *op) {
  auto bytes = op->getAttrOfType<IntegerAttr>(kWorkspaceBytesAttr);
  auto offset = op->getAttrOfType<IntegerAttr>(kWorkspaceOffsetAttr);
  if (!bytes || !offset || bytes.getInt() <= 0)
    return "nullptr, 0";
  return "args.scratch + " + std::to_string(offset.getInt()) + ", " +
         std::to_string(bytes.getInt());
}

/// The index into x [in] of element i of x.permute(perm), as C++ with the
/// sizes as constants (a division by a constant is a multiplication; by a
/// variable, a subroutine call on the GPU).
std::string transposeSource(ArrayRef<int64_t> in, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inStride(in.size(), 1);
  for (int d = int(in.size()) - 2; d >= 0; --d)
    inStride[d] = inStride[d + 1] * in[d + 1];
  // Output dims from the last: digit d of i is (i / place) % in[perm[d]].
  std::string index;
  int64_t place = 1;
  for (int d = int(perm.size()) - 1; d >= 0; --d) {
    const int64_t size = in[perm[d]];
    std::string digit = place == 1 ? "i" : "i / " + std::to_string(place);
    if (d > 0)
      digit = "(" + digit + ") % " + std::to_string(size);
    index += (index.empty() ? "" : " + ") + std::string("(") + digit + ") * " +
             std::to_string(inStride[perm[d]]);
    place *= size;
  }
  return index.empty() ? "0" : index;
}

/// A linear layer's forward through cuBLASLt, storing into `result` (a
/// matmul_epilogue group's activation, epilogueActivationOf: its output,
/// and with gelu_aux the linear's own result into `aux`), with the
/// workspace the memory plan placed for `planned` (the op, or its group).
void printLinearForward(LinearOp o, CudaPrinter &p, Value result, Value aux,
                        Operation *planned) {
  ArrayRef<int64_t> in = dimsOf(o.getInput());
  const ::tcc::cuda::MatmulActivation activation = epilogueActivationOf(o);
  p.os << "  args.matmul->linear_forward(args.stream, cuda::Matmul::Type::"
       << storageName(o.getResult()) << ", " << product(in.drop_back()) << ", " << in.back()
       << ", " << dimsOf(o.getWeight())[0] << ", " << p(o.getInput()) << ", "
       << p(o.getWeight()) << ", " << (o.getBias() ? p(o.getBias()) : "nullptr") << ", "
       << p(result) << ", " << workspaceOf(planned);
  if (activation != ::tcc::cuda::MatmulActivation::none)
    p.os << ", ::tcc::cuda::MatmulActivation::" << ::tcc::cuda::matmulActivationName(activation)
         << ", " << (activation == ::tcc::cuda::MatmulActivation::gelu_aux ? p(aux)
                                                                          : "nullptr");
  p.os << ");\n";
}

/// Linear layers through cuBLASLt (runtime/cuda/device/Matmul.cuh), in the
/// type of their result, with the workspace the memory plan placed.
LogicalResult emitLinear(Operation *op, CudaPrinter &p) {
  std::string call = "(args.stream, cuda::Matmul::Type::" + storageName(op->getResult(0)) + ", ";
  std::string end = ", " + workspaceOf(op) + ");\n";
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LinearOp o) {
        printLinearForward(o, p, o.getResult(), Value(), op);
        return success();
      })
      .Case([&](LinearBackwardDataOp o) {
        ArrayRef<int64_t> w = dimsOf(o.getWeight());
        p.os << "  args.matmul->linear_backward_data" << call
             << numElements(o.getGrad()) / w[0] << ", " << w[1] << ", " << w[0] << ", "
             << p(o.getGrad()) << ", " << p(o.getWeight()) << ", " << p(o.getResult())
             << end;
        return success();
      })
      .Case([&](LinearBackwardWeightOp o) {
        ArrayRef<int64_t> w = dimsOf(o.getResult());
        p.os << "  args.matmul->linear_backward_weight" << call
             << numElements(o.getGrad()) / w[0] << ", " << w[1] << ", " << w[0] << ", "
             << p(o.getGrad()) << ", " << p(o.getInput()) << ", " << p(o.getResult())
             << end;
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// Convolutions: row `index` of the baked cuDNN plans
/// (runtime/cuda/ConvRunner.h), found by the op's problem key. A forward
/// conv's bias, and the ReLU of its conv_epilogue group, run in cuDNN's
/// epilogue; where cuDNN had no engine for that, kernels after the conv
/// apply them to `result` in place. `result` is where the conv (or its
/// group) stores; `planned` holds the workspace the memory plan placed.
LogicalResult emitConv(Operation *op, CudaPrinter &p, ArrayRef<std::string> convKeys,
                       Value result, Operation *planned) {
  namespace cuda = ::tcc::cuda;
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
    p.os << "  args.convs->run(" << index << ", " << p(x) << ", " << p(weight) << ", "
         << p(y) << ", " << workspaceOf(planned) << (bias ? ", " + p(bias) : "") << "); // "
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
  std::string channel = bias + "[i / " + std::to_string(plane) + " % " +
                        std::to_string(problem->k) + "]";
  std::string sum = type + "_to_float(c0[k]) + " + type + "_to_float(" + channel + ")";
  p.forEachChunk(count, {y}, {y},
                 "s0[k] = float_to_" + type + "(" +
                     (relu ? "Relu<float>{}(" + sum + ")" : sum) + ");",
                 /*indexed=*/true);
  return success();
}

/// Pooling (runtime/cuda/device/Pool.cuh): the cpu kernels' per-plane
/// functions, one thread per plane.
LogicalResult emitPool(Operation *op, CudaPrinter &p) {
  // Max pools run in the tensors' stored type (a 16-bit one as
  // half::F16 / BF16: they select an element, and sum the backward's in
  // f32); the other pools in f32.
  auto call = [&](StringRef kernel, StringRef shape, ArrayRef<Value> args,
                  std::optional<bool> countIncludePad = std::nullopt) {
    bool stored = isa<MaxPool2dOp, MaxPool2dBackwardOp>(op);
    // The pool's input and output share a layout (tcc-channels-last); one
    // of them may be the same bytes in both ([n, c, 1, 1]).
    p.os << "  cuda::" << kernel << "<"
         << (stored ? updateElementType(op->getResult(0)) : std::string("float"))
         << ">(args.stream, " << shape << ", "
         << (touchesChannelsLast(op) ? "true" : "false");
    if (countIncludePad)
      p.os << ", " << (*countIncludePad ? "true" : "false");
    for (Value v : args)
      p.os << ", " << (stored ? updatePointer(p.e, v, v) : p(v));
    p.os << ");\n";
    return success();
  };
  auto planes = [](ArrayRef<int64_t> in) {
    return std::to_string(in[0]) + ", " + std::to_string(in[1]) + ", " +
           std::to_string(in[2] * in[3]);
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MaxPool2dOp o) {
        return call("max_pool2d_forward", kernel_args::cpp(kernel_args::pool2d(o)),
                    {o.getInput(), o.getResult()});
      })
      .Case([&](MaxPool2dBackwardOp o) {
        return call("max_pool2d_backward", kernel_args::cpp(kernel_args::pool2d(o)),
                    {o.getInput(), o.getGrad(), o.getResult()});
      })
      .Case([&](AvgPool2dOp o) {
        return call("avg_pool2d_forward", kernel_args::cpp(kernel_args::pool2d(o)),
                    {o.getInput(), o.getResult()}, o.getCountIncludePad());
      })
      .Case([&](AvgPool2dBackwardOp o) {
        return call("avg_pool2d_backward", kernel_args::cpp(kernel_args::pool2d(o)),
                    {o.getGrad(), o.getResult()}, o.getCountIncludePad());
      })
      .Case([&](GlobalAvgPoolOp o) {
        return call("global_avg_pool_forward", planes(dimsOf(o.getInput())),
                    {o.getInput(), o.getResult()});
      })
      .Case([&](GlobalMaxPoolOp o) {
        return call("global_max_pool_forward", planes(dimsOf(o.getInput())),
                    {o.getInput(), o.getResult()});
      })
      .Case([&](GlobalAvgPoolBackwardOp o) {
        return call("global_avg_pool_backward", planes(o.getInputShape()),
                    {o.getGrad(), o.getResult()});
      })
      .Case([&](GlobalMaxPoolBackwardOp o) {
        return call("global_max_pool_backward", planes(dimsOf(o.getInput())),
                    {o.getInput(), o.getGrad(), o.getResult()});
      })
      .Default([](Operation *) { return failure(); });
}

/// Batch norm (runtime/cuda/device/Norm.cuh): the cpu kernels' per-channel
/// and per-row functions, storing through a device lambda.
LogicalResult emitBatchNorm(Operation *op, CudaPrinter &p) {
  auto opt = [&](Value v) { return v ? p(v) : std::string("static_cast<float *>(nullptr)"); };
  // The kernels hand over (and ask for) a chunk of elements at a time.
  auto store = [&](Value y) {
    return "[=] __device__(int64_t i0, int count, const float (&y)[cuda::kChunk]) { "
           "cuda::store_chunk(" + p(y) + ", i0, count, y); }";
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](BatchNormOp o) {
        // The kernel updates the running statistics in place.
        p.copyInto(o.getRunningMean(), o.getNewRunningMean());
        p.copyInto(o.getRunningVar(), o.getNewRunningVar());
        p.os << "  cuda::batch_norm_forward_train_with<float>(args.stream, " << workspaceOf(o)
             << ", " << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << p(o.getInput())
             << ", " << opt(o.getWeight()) << ", " << opt(o.getBias()) << ", " << cppDouble(o.getEps())
             << ", " << cppDouble(o.getMomentum()) << ", " << store(o.getResult()) << ", "
             << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
             << p(o.getNewRunningMean()) << ", " << p(o.getNewRunningVar()) << ");\n";
        return success();
      })
      .Case([&](BatchNormInferenceOp o) {
        p.os << "  cuda::batch_norm_forward_inference_with<float>(args.stream, "
             << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << p(o.getInput()) << ", "
             << opt(o.getWeight()) << ", " << opt(o.getBias()) << ", " << p(o.getRunningMean())
             << ", " << p(o.getRunningVar()) << ", " << cppDouble(o.getEps()) << ", "
             << store(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](BatchNormApplyOp o) {
        p.os << "  cuda::batch_norm_apply_with<float>(args.stream, "
             << kernel_args::cpp(kernel_args::batchNorm(o)) << ", " << p(o.getInput()) << ", "
             << opt(o.getWeight()) << ", " << opt(o.getBias()) << ", " << p(o.getSavedMean())
             << ", " << p(o.getSavedInvstd()) << ", " << store(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](BatchNormBackwardOp o) {
        p.os << "  cuda::batch_norm_backward_with<float>(args.stream, " << workspaceOf(o) << ", "
             << kernel_args::cpp(kernel_args::batchNorm(o))
             << ", [=] __device__(int64_t i0, int count, int64_t, int, "
                "float (&dy)[cuda::kChunk]) { cuda::load_chunk("
             << p(o.getGrad()) << ", i0, count, dy); }, " << p(o.getInput()) << ", " << opt(o.getWeight()) << ", "
             << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
             << opt(o.getGradInput()) << ", " << opt(o.getGradWeight()) << ", "
             << opt(o.getGradBias()) << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// Layer norm (Norm.cuh) and softmax (Softmax.cuh): the cpu kernels' per-row
/// and per-position functions.
LogicalResult emitRowOp(Operation *op, CudaPrinter &p) {
  auto opt = [&](Value v) { return v ? p(v) : std::string("static_cast<float *>(nullptr)"); };
  auto rows = [](ArrayRef<int64_t> in, int64_t normalized) {
    const int64_t inner = product(in.take_back(normalized));
    return std::to_string(product(in) / inner) + ", " + std::to_string(inner);
  };
  auto around = [](ArrayRef<int64_t> in, int64_t axis) {
    return std::to_string(product(in.take_front(axis))) + ", " + std::to_string(in[axis]) +
           ", " + std::to_string(product(in.drop_front(axis + 1)));
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LayerNormOp o) {
        p.os << "  cuda::layer_norm_forward<float>(args.stream, "
             << rows(dimsOf(o.getInput()), o.getNormalizedDims()) << ", " << p(o.getInput())
             << ", " << opt(o.getWeight()) << ", " << opt(o.getBias()) << ", "
             << cppDouble(o.getEps()) << ", " << p(o.getResult()) << ", " << p(o.getSavedMean())
             << ", " << p(o.getSavedInvstd()) << ");\n";
        return success();
      })
      .Case([&](LayerNormBackwardOp o) {
        p.os << "  cuda::layer_norm_backward<float>(args.stream, "
             << rows(dimsOf(o.getInput()), o.getNormalizedDims()) << ", " << p(o.getGrad())
             << ", " << p(o.getInput()) << ", " << opt(o.getWeight()) << ", "
             << p(o.getSavedMean()) << ", " << p(o.getSavedInvstd()) << ", "
             << p(o.getGradInput()) << ", " << p(o.getGradWeight()) << ", "
             << p(o.getGradBias()) << ");\n";
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto o) {
        p.os << "  cuda::softmax_forward<" << (isa<LogSoftmaxOp>(op) ? "true" : "false")
             << ">(args.stream, " << around(dimsOf(o.getInput()), o.getAxis()) << ", "
             << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case<SoftmaxBackwardOp, LogSoftmaxBackwardOp>([&](auto o) {
        p.os << "  cuda::softmax_backward<" << (isa<LogSoftmaxBackwardOp>(op) ? "true" : "false")
             << ">(args.stream, " << around(dimsOf(o.getGrad()), o.getAxis()) << ", "
             << p(o.getResultValue()) << ", " << p(o.getGrad()) << ", " << p(o.getResult())
             << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

LogicalResult emitElementwise(Operation *op, CudaPrinter &p) {
  if (std::string functor = elementFunctorOf(op); !functor.empty()) {
    int64_t n = numElements(op->getResult(0));
    if (op->getNumOperands() == 1)
      p.os << "  cuda::map_forward(args.stream, " << n << ", " << functor << ", "
           << p(op->getOperand(0)) << ", " << p(op->getResult(0)) << ");\n";
    else // backward ops take (grad, value); their functors (value, grad)
      p.os << "  cuda::map_backward(args.stream, " << n << ", " << functor << ", "
           << p(op->getOperand(1)) << ", " << p(op->getOperand(0)) << ", "
           << p(op->getResult(0)) << ");\n";
    return success();
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, MulOp>([&](auto o) {
        const bool same = p(o.getLhs()) == p(o.getRhs());
        p.forEachChunk(numElements(o.getResult()),
                       same ? std::vector<std::string>{p(o.getLhs())}
                            : std::vector<std::string>{p(o.getLhs()), p(o.getRhs())},
                       {p(o.getResult())},
                       std::string("s0[k] = c0[k]") + (isa<AddOp>(op) ? " + " : " * ") +
                           (same ? "c0[k];" : "c1[k];"));
        return success();
      })
      .Case([&](ScaleOp o) {
        p.os << "  cuda::scale<float>(args.stream, " << numElements(o.getResult())
             << ", float(" << cppDouble(o.getFactor()) << "), " << p(o.getInput()) << ", "
             << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](ScaleByOp o) {
        p.forEachChunk(numElements(o.getResult()), {p(o.getInput())}, {p(o.getResult())},
                       "s0[k] = *" + p(o.getFactor()) + " * c0[k];");
        return success();
      })
      .Case<FlattenOp, ReshapeOp>([&](auto o) {
        p.copyInto(o.getInput(), o.getResult());
        return success();
      })
      .Case([&](CastOp o) {
        std::string from = storageName(o.getInput()), to = storageName(o.getResult());
        if (from == to) {
          p.copyInto(o.getInput(), o.getResult());
          return success();
        }
        // The cast kernels' conversions (runtime/common/Float16.h).
        std::string convert = from == "f32" ? "float_to_" + to : from + "_to_float";
        if (isChannelsLast(o.getInput()) != isChannelsLast(o.getResult())) {
          // Converting between NCHW and NHWC as well (tcc-channels-last): a
          // gather, each element read where the other layout keeps it.
          ArrayRef<int64_t> in = dimsOf(o.getInput());
          const bool toLast = isChannelsLast(o.getResult());
          SmallVector<int64_t> stored =
              toLast ? SmallVector<int64_t>(in) : SmallVector<int64_t>{in[0], in[2], in[3], in[1]};
          SmallVector<int64_t> perm = toLast ? SmallVector<int64_t>{0, 2, 3, 1}
                                             : SmallVector<int64_t>{0, 3, 1, 2};
          p.forEach(numElements(o.getResult()), p(o.getResult()) + "[i] = " + convert + "(" +
                                                    p(o.getInput()) + "[" +
                                                    transposeSource(stored, perm) + "]);");
          return success();
        }
        p.forEachChunk(numElements(o.getResult()), {p(o.getInput())}, {p(o.getResult())},
                       "s0[k] = " + convert + "(c0[k]);");
        return success();
      })
      .Case([&](FlipOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        p.os << "  cuda::flip<float>(args.stream, " << in[0] * in[1] * in[2] << ", " << in[3]
             << ", 1, " << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](ShiftOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        p.os << "  cuda::shift_reflect<float>(args.stream, " << in[0] * in[1] << ", " << in[2]
             << ", " << in[3] << ", " << static_cast<int64_t>(o.getDy()) << ", "
             << static_cast<int64_t>(o.getDx()) << ", " << p(o.getInput()) << ", "
             << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](TransposeOp o) {
        p.forEach(numElements(o.getResult()),
                  p(o.getResult()) + "[i] = " + p(o.getInput()) + "[" +
                      transposeSource(dimsOf(o.getInput()), o.getPerm()) + "];");
        return success();
      })
      .Case([&](ConcatOp o) {
        // One launch per input, into its block of the axis.
        ArrayRef<int64_t> out = dimsOf(o.getResult());
        const int64_t axis = o.getAxis(), inner = product(out.drop_front(axis + 1));
        int64_t offset = 0;
        for (Value input : o.getInputs()) {
          const int64_t block = dimsOf(input)[axis] * inner;
          p.forEach(numElements(input),
                    p(o.getResult()) + "[i / " + std::to_string(block) + " * " +
                        std::to_string(out[axis] * inner) + " + " +
                        std::to_string(offset * inner) + " + i % " + std::to_string(block) +
                        "] = " + p(input) + "[i];");
          offset += dimsOf(input)[axis];
        }
        return success();
      })
      .Case([&](PadChannelsOp o) {
        // Each row of C channels (a sample's planes; an NHWC pixel's
        // channels) followed by zeros up to `channels`.
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        const int64_t inner = isChannelsLast(o.getResult()) ? 1 : product(in.drop_front(2));
        const std::string rowIn = std::to_string(in[1] * inner),
                          rowOut = std::to_string(o.getChannels() * inner);
        p.forEach(numElements(o.getResult()),
                  "const int64_t r = i % " + rowOut + "; " + p(o.getResult()) + "[i] = r < " +
                      rowIn + " ? " + p(o.getInput()) + "[i / " + rowOut + " * " + rowIn +
                      " + r] : 0;");
        return success();
      })
      .Case([&](SliceOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        const int64_t axis = o.getAxis(), inner = product(in.drop_front(axis + 1));
        const int64_t block = o.getSize() * inner;
        p.forEach(numElements(o.getResult()),
                  p(o.getResult()) + "[i] = " + p(o.getInput()) + "[i / " +
                      std::to_string(block) + " * " + std::to_string(in[axis] * inner) +
                      " + " + std::to_string(o.getOffset() * inner) + " + i % " +
                      std::to_string(block) + "];");
        return success();
      })
      .Case([&](OneHotOp o) {
        p.forEach(numElements(o.getResult()),
                  p(o.getResult()) + "[i] = one_hot_at<float>(" +
                      std::to_string(o.getClasses()) + ", " + p(o.getLabels()) + ", i);");
        return success();
      })
      .Case([&](ReduceSumOp o) {
        std::optional<kernel_args::Around> a = kernel_args::keptAxis(o);
        if (!a)
          return failure();
        // A 16-bit bias gradient sums the stored 16-bit gradient (half::F16 /
        // BF16 widen as they load and round through f32 as they store: the
        // bits of the sum of f32 copies, cast), so no f32 copy is written.
        Value in = o.getInput(), out = o.getResult();
        p.os << "  cuda::reduce_sum_keep<" << updateElementType(out) << ">(args.stream, "
             << workspaceOf(o) << ", " << a->outer << ", " << a->axis << ", " << a->inner
             << ", " << updatePointer(p.e, in, in) << ", " << updatePointer(p.e, out, out)
             << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

LogicalResult emitStepOp(Operation *op, CudaPrinter &p) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](CrossEntropyOp o) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        p.os << "  cuda::cross_entropy_forward(args.stream, " << l[0] << ", " << l[1] << ", "
             << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
             << cppDouble(o.getLabelSmoothing()) << ", " << cppReduction(o.getReduction())
             << ", " << p(o.getResult()) << ", "
             << (o.getValid() ? p(o.getValid()) : "nullptr") << ");\n";
        return success();
      })
      .Case([&](CrossEntropyBackwardOp o) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        p.os << "  cuda::cross_entropy_backward(args.stream, " << l[0] << ", " << l[1]
             << ", " << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
             << cppDouble(o.getLabelSmoothing()) << ", " << cppReduction(o.getReduction())
             << ", " << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](MseLossOp o) {
        p.os << "  cuda::mse_loss_forward(args.stream, " << numElements(o.getInput()) << ", "
             << p(o.getInput()) << ", " << p(o.getTarget()) << ", "
             << cppReduction(o.getReduction()) << ", " << p(o.getResult()) << ", "
             << (o.getValid() ? p(o.getValid()) : "nullptr") << ", "
             << product(dimsOf(o.getInput()).drop_front()) << ");\n";
        return success();
      })
      .Case([&](MseLossBackwardOp o) {
        p.os << "  cuda::mse_loss_backward(args.stream, " << numElements(o.getInput()) << ", "
             << p(o.getInput()) << ", " << p(o.getTarget()) << ", "
             << cppReduction(o.getReduction()) << ", " << p(o.getGrad()) << ", "
             << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](GlobalNormOp o) {
        p.overTensors("global_norm", o.getInputs(), o.getResult());
        return success();
      })
      .Case([&](ClipCoefficientOp o) {
        p.os << "  cuda::clip_coefficient(args.stream, " << cppDouble(o.getMaxNorm()) << ", "
             << p(o.getNorm()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](LambUpdateOp o) {
        p.copyInto(o.getParam(), o.getNewParam());
        p.copyInto(o.getExpAvg(), o.getNewExpAvg());
        p.copyInto(o.getExpAvgSq(), o.getNewExpAvgSq());
        p.os << "  cuda::lamb_update(args.stream, " << numElements(o.getParam()) << ", "
             << p(o.getNewParam()) << ", " << p(o.getGrad()) << ", " << p(o.getNewExpAvg())
             << ", " << p(o.getNewExpAvgSq()) << ", " << p(o.getLr()) << ", "
             << cppDouble(o.getLrScale()) << ", " << cppDouble(o.getBeta1()) << ", "
             << cppDouble(o.getBeta2()) << ", " << cppDouble(o.getEps()) << ", "
             << cppDouble(o.getWeightDecay()) << ", " << p(o.getStep()) << ", "
             << (o.getSkip() ? p(o.getSkip()) : "nullptr") << ");\n";
        return success();
      })
      .Case([&](CountCorrectOp o) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        p.os << "  cuda::count_correct(args.stream, " << l[0] << ", " << l[1] << ", "
             << p(o.getLogits()) << ", " << p(o.getLabels()) << ", " << p(o.getValid())
             << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](MixSeedOp o) {
        p.os << "  cuda::mix_seed(args.stream, " << p(o.getSeed()) << ", " << p(o.getStep())
             << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](DropoutOp o) {
        // In a micro-batch loop each iteration draws streams of its own.
        std::string stream = std::to_string(o.getStream());
        if (auto loop = o->getParentOfType<MicroBatchesOp>())
          stream += " + uint64_t(args.micro) * " + std::to_string(loop.getDropoutStreams());
        p.os << "  cuda::apply_dropout<float>(args.stream, " << numElements(o.getResult()) << ", "
             << cppDouble(o.getP()) << ", " << p(o.getSeed()) << ", " << stream << ", "
             << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](IncrementOp o) {
        p.os << "  cuda::increment(args.stream, " << p(o.getInput()) << ", "
             << (o.getSkip() ? p(o.getSkip()) : "nullptr") << ", " << p(o.getResult())
             << ");\n";
        return success();
      })
      // fp16 loss scaling (docs/passes.md).
      .Case([&](ReciprocalOp o) {
        p.os << "  cuda::reciprocal(args.stream, " << p(o.getInput()) << ", " << p(o.getResult())
             << ");\n";
        return success();
      })
      .Case([&](FoundNonFiniteOp o) {
        p.overTensors("found_non_finite", o.getInputs(), o.getResult());
        return success();
      })
      // Channel gates: the cpu kernels' element and plane functions.
      .Case([&](ChannelMulOp o) {
        int64_t planes = numElements(o.getGate()), hw = numElements(o.getInput()) / planes;
        p.os << "  { const float *x = " << p(o.getInput()) << ", *gate = " << p(o.getGate())
             << "; float *y = " << p(o.getResult()) << ";\n    cuda::for_each(args.stream, "
             << planes * hw << ", [=] __device__(int64_t k) { y[k] = channel_mul_at(" << hw
             << ", x, gate, k); }); }\n";
        return success();
      })
      .Case([&](ChannelMulBackwardGateOp o) {
        int64_t planes = numElements(o.getResult()), hw = numElements(o.getInput()) / planes;
        p.os << "  { const float *dy = " << p(o.getGrad()) << ", *x = " << p(o.getInput())
             << "; float *dgate = " << p(o.getResult()) << ";\n    cuda::for_each(args.stream, "
             << planes << ", [=] __device__(int64_t q) { dgate[q] = channel_mul_gate_grad_at("
             << hw << ", dy, x, q); }); }\n";
        return success();
      })
      .Case([&](FrozenAfterOp o) {
        p.os << "  cuda::frozen_after(args.stream, " << p(o.getStep()) << ", "
             << p(o.getStepsPerEpoch()) << ", " << o.getEpochs() << ", "
             << (o.getSkip() ? p(o.getSkip()) : "nullptr") << ", " << p(o.getResult())
             << ");\n";
        return success();
      })
      .Case([&](UpdateLossScaleOp o) {
        p.os << "  cuda::update_loss_scale(args.stream, " << cppDouble(o.getGrowthFactor())
             << ", " << cppDouble(o.getBackoffFactor()) << ", " << o.getGrowthInterval() << ", "
             << p(o.getScale()) << ", " << p(o.getGrowthTracker()) << ", " << p(o.getFoundInf())
             << ", " << p(o.getNewScale()) << ", " << p(o.getNewGrowthTracker()) << ");\n";
        return success();
      })
      .Case([&](LrScheduleOp o) {
        p.os << "  { static const ScheduleDesc schedule = " << cppScheduleDesc(o.getSchedule())
             << ";\n    cuda::lr_schedule(args.stream, schedule, " << cppDouble(o.getBaseLr())
             << ", " << p(o.getStep()) << ", " << p(o.getStepsPerEpoch()) << ", "
             << p(o.getTotalSteps()) << ", " << p(o.getResult()) << "); }\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

/// An elementwise group: its loop body (the cpu target's) in one launch.
LogicalResult emitElementwiseGroup(FusionGroupOp group, CudaPrinter &p) {
  ChunkedElementwise chunked;
  if (failed(printChunkedElementwiseBody(group, p.e, chunked)))
    return failure();
  p.os << "  {\n" << chunked.functors;
  p.forEachChunk(numElements(group.getResult(0)), chunked.loads, chunked.stores, chunked.body);
  p.os << "  }\n";
  return success();
}

/// The optimizer (and EMA, Lookahead) updates: the chains of each element
/// type in one launch (runtime/cuda/device/MultiTensor.cuh), a new launch
/// when a table would exceed kMaxStagesPerLaunch stages.
void printUpdateChains(const MultiTensorChains &plan, CudaPrinter &p) {
  constexpr size_t kMaxStagesPerLaunch = 128; // MultiTensor.cuh's
  for (const MultiTensorChains::Copy &copy : plan.copies)
    p.os << "  cuda::copy<" << copy.type << ">(args.stream, " << copy.n << ", " << copy.from
         << ", " << copy.to << ");\n";
  for (const UpdateTable &table : updateTables(plan, kMaxStagesPerLaunch))
    p.os << "  { cuda::UpdateTable<" << table.type << ", " << table.stageCount << ", "
         << table.chainCount << "> table{{\n" << table.stages << "      }, {\n" << table.chains
         << "      }, {}};\n    cuda::multi_tensor_update(args.stream, table); }\n";
}

/// A multi_tensor_cast group: its casts in one launch
/// (runtime/cuda/device/MultiTensor.cuh), each into the group's result
/// that yields it.
void printMultiTensorCast(FusionGroupOp group, CudaPrinter &p) {
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  std::string rows;
  int count = 0;
  for (Operation &op : group.getFusedOps()) {
    auto c = cast<CastOp>(op);
    auto yielded = llvm::find(yield.getValues(), c.getResult());
    if (yielded == yield.getValues().end())
      continue; // read by nobody
    const std::string from = storageName(c.getInput()), to = storageName(c.getResult());
    const char *kind = from == "f32"    ? (to == "bf16" ? "FloatToBf16" : "FloatToF16")
                       : from == "bf16" ? "Bf16ToFloat"
                                        : "F16ToFloat";
    rows += "      {cuda::TensorCast::" + std::string(kind) + ", " + p(c.getInput()) + ", " +
            p(group.getResult(yielded - yield.getValues().begin())) + ", " +
            std::to_string(numElements(c.getResult())) + "},\n";
    ++count;
  }
  if (count)
    p.os << "  { cuda::CastTable<" << count << "> table{{\n" << rows
         << "      }, {}};\n    cuda::multi_tensor_cast(args.stream, table); }\n";
}

} // namespace

LogicalResult mlir::tcc::emitCudaOp(Operation *op, StepEmitter &e,
                                    ArrayRef<std::string> convKeys) {
  CudaPrinter p{e, e.os};
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    if (group.getKind() == FusionGroupOp::kElementwise)
      return emitElementwiseGroup(group, p);
    if (group.getKind() == FusionGroupOp::kMatmulEpilogue) {
      // The group yields the activation's output, last (and before it the
      // linear's result, where the backward reads it).
      auto linear = cast<LinearOp>(&*group.getFusedOps().begin());
      if (std::string why = unsupportedTypes(linear); !why.empty())
        return linear->emitError("the cuda target cannot run tcc.linear ") << why;
      printLinearForward(linear, p, group.getResults().back(),
                         group.getNumResults() == 2 ? group.getResult(0) : Value(), group);
      return success();
    }
    if (group.getKind() == FusionGroupOp::kConvEpilogue) {
      // The group yields the ReLU's output (of its narrowing cast under
      // 16-bit storage), the conv's type: the conv's epilogue stores it.
      Operation *conv = &*group.getFusedOps().begin();
      if (std::string why = unsupportedTypes(conv); !why.empty())
        return conv->emitError("the cuda target cannot run tcc.conv2d ") << why;
      return emitConv(conv, p, convKeys, group.getResult(0), group);
    }
    if (group.getKind() == FusionGroupOp::kMultiTensorCast) {
      for (Operation &c : group.getFusedOps())
        if (std::string why = unsupportedTypes(&c); !why.empty())
          return c.emitError("the cuda target cannot run tcc.cast ") << why;
      printMultiTensorCast(group, p);
      return success();
    }
    if (group.getKind() == FusionGroupOp::kMultiTensorUpdate) {
      MultiTensorChains plan;
      if (failed(planMultiTensorUpdate(group, p.e, plan)))
        return failure();
      printUpdateChains(plan, p);
      return success();
    }
    if (group.getKind() == FusionGroupOp::kNormEpilogue ||
        group.getKind() == FusionGroupOp::kNormBackwardPrologue)
      return emitNormGroup(
          group, e,
          {"[=] __device__", "cuda::", "args.stream, ", workspaceOf(group) + ", ", true});
    return group.emitError("the cuda target cannot run a fusion group of kind '")
           << group.getKind() << "' yet (docs/cuda.md lists what it runs); compile with "
           << "--target=cpu";
  }
  auto refuseTypes = [&](const std::string &why) {
    return op->emitError("the cuda target cannot run ")
           << op->getName() << " " << why
           << " (16-bit tensors reach only its convolutions, linear layers, max pools, views, "
              "channel paddings, slices, bias gradients' sums, casts and optimizer updates: "
              "tcc-widen-16bit puts the other ops on f32 copies)";
  };
  if (isa<Conv2dOp, Conv2dBackwardDataOp, Conv2dBackwardFilterOp>(op)) {
    if (std::string why = unsupportedTypes(op); !why.empty())
      return refuseTypes(why);
    return emitConv(op, p, convKeys, op->getResult(0), op);
  }
  // An update outside a multi-tensor group (tcc-fusion left out): a chain
  // of one, as the group would run it.
  if (isa<SgdUpdateOp, AdamwUpdateOp, EmaUpdateOp, LookaheadUpdateOp>(op)) {
    if (std::string why = unsupportedTypes(op); !why.empty())
      return refuseTypes(why);
    MultiTensorChains plan;
    if (failed(planUpdateChains({op}, e, plan)))
      return failure();
    printUpdateChains(plan, p);
    return success();
  }
  // Printed aside first: an op the target cannot run is named as such
  // before its types are looked at.
  std::string text;
  llvm::raw_string_ostream buffer(text);
  CudaPrinter aside{e, buffer};
  LogicalResult printed =
      isa<LinearOp, LinearBackwardDataOp, LinearBackwardWeightOp>(op) ? emitLinear(op, aside)
      : isa<BatchNormOp, BatchNormInferenceOp, BatchNormApplyOp, BatchNormBackwardOp>(op)
          ? emitBatchNorm(op, aside)
      : isa<MaxPool2dOp, MaxPool2dBackwardOp, AvgPool2dOp, AvgPool2dBackwardOp, GlobalAvgPoolOp,
            GlobalMaxPoolOp, GlobalAvgPoolBackwardOp, GlobalMaxPoolBackwardOp>(op)
          ? emitPool(op, aside)
      : isa<LayerNormOp, LayerNormBackwardOp, SoftmaxOp, LogSoftmaxOp, SoftmaxBackwardOp,
            LogSoftmaxBackwardOp>(op)
          ? emitRowOp(op, aside)
          : success(succeeded(emitElementwise(op, aside)) || succeeded(emitStepOp(op, aside)));
  if (succeeded(printed)) {
    if (std::string why = unsupportedTypes(op); !why.empty())
      return refuseTypes(why);
    e.os << text;
    return success();
  }
  std::string node = modelNodeOf(op->getLoc());
  return op->emitError("the cuda target cannot run ")
         << op->getName() << (node.empty() ? "" : " (model node '" + node + "')")
         << " yet (docs/cuda.md lists what it runs); compile with --target=cpu";
}
