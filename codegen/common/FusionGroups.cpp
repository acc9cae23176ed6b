//===- FusionGroups.cpp - A tcc.fusion_group as one loop nest -------------===//
//
// Every op of a group is an element functor of runtime/kernels (Celu<float>,
// CeluBackward<float>, ...), an operator on floats or a conversion between
// float and 16-bit storage (float_to_bf16, ...): the same operations,
// rounded in the same order, as the op's own kernel, and each op's value
// passes through as_stored() (no FMA across two ops), so a fused step is
// bit-identical to the unfused one on every -march.
// The group's loop is the norm kernel's own (its `_with` form takes the
// epilogue or prologue as a lambda) or a plain loop over the elements.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Emitter.h"
#include "codegen/common/KernelArgs.h"

#include "ir/TccOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// Prints the element computations of a group's elementwise ops. Values
/// from outside the group are read at element `i`; values of the group are
/// locals `t<k>`; yielded values are stored at `i`. With `chunked`, they
/// are read from and stored to element k of the chunks it lists instead.
class ElementPrinter {
public:
  ElementPrinter(FusionGroupOp group, StepEmitter &e, ChunkedElementwise *chunked = nullptr)
      : group(group), e(e), chunked(chunked) {}

  /// Declares the functors (before the loop) and prints the computation of
  /// `op` (inside it).
  LogicalResult print(Operation *op, llvm::raw_ostream &functors,
                      llvm::raw_ostream &body);

  /// The element `i` of `v`.
  std::string element(Value v) {
    auto it = locals.find(v);
    if (it != locals.end())
      return it->second;
    if (chunked)
      return "c" + std::to_string(indexIn(chunked->loads, e.name(v))) + "[k]";
    return e.name(v) + "[i]";
  }

  /// Names `v` as the local `name` (already computed).
  void setLocal(Value v, std::string name) { locals[v] = std::move(name); }

  /// Stores those of `values` that the group yields at element i.
  void printStores(ValueRange values, llvm::raw_ostream &body) {
    auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
    for (Value v : values)
      if (llvm::is_contained(yield.getValues(), v))
        body << "      "
             << (chunked ? "s" + std::to_string(indexIn(chunked->stores, e.name(v))) + "[k]"
                         : e.name(v) + "[i]")
             << " = " << element(v) << ";\n";
  }

private:
  /// The position of `name` in `names`, added at the end if missing.
  static size_t indexIn(std::vector<std::string> &names, const std::string &name) {
    auto it = llvm::find(names, name);
    if (it != names.end())
      return size_t(it - names.begin());
    names.push_back(name);
    return names.size() - 1;
  }

  FusionGroupOp group;
  StepEmitter &e;
  ChunkedElementwise *chunked;
  DenseMap<Value, std::string> locals;
  int counter = 0;
};

LogicalResult ElementPrinter::print(Operation *op, llvm::raw_ostream &functors,
                                    llvm::raw_ostream &body) {
  std::string expr;
  if (std::string functor = elementFunctorOf(op); !functor.empty()) {
    std::string f = "f" + std::to_string(counter);
    functors << "    const auto " << f << " = " << functor << ";\n";
    // Backward functors take (the forward's value, the gradient); the ops
    // take (grad, value).
    expr = op->getNumOperands() == 1
               ? f + "(" + element(op->getOperand(0)) + ")"
               : f + "(" + element(op->getOperand(1)) + ", " + element(op->getOperand(0)) + ")";
  } else if (auto apply = dyn_cast<BatchNormApplyOp>(op)) {
    // Only in a backward prologue, whose loop names the (ghost batch,
    // channel) row of element i of the statistics `gc`.
    int64_t channels = cast<RankedTensorType>(apply.getInput().getType()).getDimSize(1);
    expr = "batch_norm_apply_at<float>(" + element(apply.getInput()) + ", " +
           e.name(apply.getSavedMean()) + "[gc], " + e.name(apply.getSavedInvstd()) +
           "[gc], " + e.nameOrNull(apply.getWeight()) + ", " + e.nameOrNull(apply.getBias()) +
           ", gc % " + std::to_string(channels) + ")";
  } else if (isa<AddOp, MulOp>(op)) {
    expr = element(op->getOperand(0)) + (isa<AddOp>(op) ? " + " : " * ") +
           element(op->getOperand(1));
  } else if (auto cast = dyn_cast<CastOp>(op)) {
    // Between f32 and 16-bit storage, with the cast kernels' conversions
    // (round to nearest even down, exact up).
    std::string from = storageName(cast.getInput()), to = storageName(cast.getResult());
    if (from == to) {
      expr = element(cast.getInput());
    } else if (from == "f32" && (to == "bf16" || to == "f16")) {
      std::string local = "t" + std::to_string(counter++);
      body << "      const uint16_t " << local << " = float_to_" << to << "("
           << element(cast.getInput()) << ");\n";
      locals[op->getResult(0)] = local;
      return success();
    } else if (to == "f32" && (from == "bf16" || from == "f16")) {
      // Exact, and no product: nothing to keep from contracting, so no
      // as_stored (whose asm would keep a loop of casts from vectorizing).
      std::string local = "t" + std::to_string(counter++);
      body << "      const float " << local << " = " << from << "_to_float("
           << element(cast.getInput()) << ");\n";
      locals[op->getResult(0)] = local;
      return success();
    } else {
      return op->emitError("the cpu target cannot fuse a cast from ") << from << " to " << to;
    }
  } else if (auto scale = dyn_cast<ScaleOp>(op)) {
    // As kernels::scale: the factor rounded to float first.
    expr = "float(" + cppDouble(scale.getFactor()) + ") * " + element(scale.getInput());
  } else {
    return op->emitError("the cpu target cannot fuse this op");
  }
  std::string local = "t" + std::to_string(counter++);
  body << "      const float " << local << " = as_stored(" << expr << ");\n";
  locals[op->getResult(0)] = local;
  return success();
}

/// The cast inside `group` that widens `x` from 16-bit storage (tcc-fusion
/// moves it there for the norm that reads x), or null.
CastOp widenedInGroup(FusionGroupOp group, Value x) {
  auto cast = x.getDefiningOp<CastOp>();
  return cast && cast->getParentOp() == group ? cast : CastOp();
}

/// The pointer a group's norm reads its input `x` through: x's buffer, or
/// the 16-bit tensor itself where the group widens it (as half::F16 or
/// BF16, which the kernels widen as they load each element).
std::string normInput(FusionGroupOp group, Value x, StepEmitter &e) {
  CastOp widening = widenedInGroup(group, x);
  if (!widening)
    return e.name(x);
  return "reinterpret_cast<const " + updateElementType(widening.getInput()) + " *>(" +
         e.name(widening.getInput()) + ")";
}

/// The batch norm a norm_epilogue is built around.
Operation *normOf(FusionGroupOp group) {
  for (Operation &op : group.getFusedOps())
    if (isa<BatchNormOp, BatchNormInferenceOp, BatchNormApplyOp>(op))
      return &op;
  return nullptr;
}

/// The cast inside `group` that narrows a norm backward's `dx` to 16-bit
/// storage (tcc-fusion moves it there: the kernel stores dx narrowed), or
/// null.
CastOp narrowedInGroup(FusionGroupOp group, Value dx) {
  if (!dx.hasOneUse())
    return CastOp();
  auto cast = dyn_cast<CastOp>(*dx.getUsers().begin());
  return cast && cast->getParentOp() == group ? cast : CastOp();
}

/// The elementwise ops of the group other than its norm `anchor`, the
/// cast that widens the norm's input when only the norm reads it (the norm
/// reads the 16-bit tensor itself: normInput) and the cast that narrows a
/// backward's dx (the norm stores it narrowed: normGradInput).
SmallVector<Operation *> elementwiseOps(FusionGroupOp group, Operation *anchor) {
  auto backward = dyn_cast<BatchNormBackwardOp>(anchor);
  Value input = backward ? backward.getInput() : anchor->getOperand(0);
  Operation *widening = widenedInGroup(group, input);
  if (widening && !llvm::all_of(widening->getUsers(),
                                [&](Operation *user) { return user == anchor; }))
    widening = nullptr;
  Operation *narrowing = backward ? narrowedInGroup(group, backward.getGradInput()) : nullptr;
  SmallVector<Operation *> ops;
  for (Operation &op : group.getFusedOps())
    if (&op != anchor && &op != widening && &op != narrowing)
      ops.push_back(&op);
  return ops;
}

/// The pointer a group's norm backward stores dx through: dx's buffer, or
/// the 16-bit tensor its narrowing cast yields.
std::string normGradInput(FusionGroupOp group, Value dx, StepEmitter &e) {
  CastOp narrowing = narrowedInGroup(group, dx);
  return narrowing ? updatePointer(e, narrowing.getResult(), narrowing.getResult()) : e.name(dx);
}

LogicalResult printElementwise(FusionGroupOp group, StepEmitter &e) {
  std::string functors, body;
  if (failed(printElementwiseBody(group, e, functors, body)))
    return failure();
  int64_t n = numElements(group.getResult(0));
  e.os << "  {\n" << functors << "#pragma omp parallel for schedule(static)\n"
       << "    for (int64_t i = 0; i < " << n << "; ++i) {\n" << body << "    }\n  }\n";
  return success();
}

/// The batch norm's kernel with the elementwise ops as its store.
LogicalResult printNormEpilogue(FusionGroupOp group, StepEmitter &e, const NormKernelStyle &k) {
  Operation *norm = normOf(group);
  ChunkedElementwise chunks;
  ElementPrinter printer(group, e, k.chunked ? &chunks : nullptr);
  printer.setLocal(norm->getResult(0), k.chunked ? "y[k]" : "y");
  std::string functors, body;
  llvm::raw_string_ostream fos(functors), bos(body);
  printer.printStores(norm->getResult(0), bos);
  for (Operation *op : elementwiseOps(group, norm)) {
    if (failed(printer.print(op, fos, bos)))
      return failure();
    printer.printStores(op->getResults(), bos);
  }
  // The cuda kernels hand over a chunk of normalised elements y[0, count).
  std::string store =
      k.chunked ? k.lambda + "(int64_t i0, int count, const float (&y)[cuda::kChunk]) {\n" +
                      chunkLoopText(chunks.loads, chunks.stores, "", body, "      ") + "    }"
                : k.lambda + "(int64_t i, float y) {\n" + body + "    }";
  e.os << "  {\n" << functors;
  if (auto bn = dyn_cast<BatchNormOp>(norm)) {
    // The kernel updates the running statistics in place: start them from
    // the old ones.
    for (auto [from, to] : {std::pair(bn.getRunningMean(), bn.getNewRunningMean()),
                            std::pair(bn.getRunningVar(), bn.getNewRunningVar())})
      if (e.name(from) != e.name(to))
        e.os << "    " << k.call << "copy<float>(" << k.stream << numElements(from) << ", "
             << e.name(from) << ", " << e.name(to) << ");\n";
    e.os << "    " << k.call << "batch_norm_forward_train_with<float>(" << k.stream
         << k.workspace << cpp(kernel_args::batchNorm(bn)) << ", "
         << normInput(group, bn.getInput(), e) << ", " << e.nameOrNull(bn.getWeight()) << ", "
         << e.nameOrNull(bn.getBias()) << ", " << cppDouble(bn.getEps()) << ", "
         << cppDouble(bn.getMomentum()) << ", " << store << ", "
         << e.name(bn.getSavedMean()) << ", " << e.name(bn.getSavedInvstd()) << ", "
         << e.name(bn.getNewRunningMean()) << ", " << e.name(bn.getNewRunningVar())
         << ");\n  }\n";
    return success();
  }
  if (auto apply = dyn_cast<BatchNormApplyOp>(norm)) {
    e.os << "    " << k.call << "batch_norm_apply_with<float>(" << k.stream
         << cpp(kernel_args::batchNorm(apply)) << ", " << normInput(group, apply.getInput(), e)
         << ", " << e.nameOrNull(apply.getWeight()) << ", "
         << e.nameOrNull(apply.getBias()) << ", " << e.name(apply.getSavedMean()) << ", "
         << e.name(apply.getSavedInvstd()) << ", " << store << ");\n  }\n";
    return success();
  }
  auto inference = cast<BatchNormInferenceOp>(norm);
  e.os << "    " << k.call << "batch_norm_forward_inference_with<float>(" << k.stream
       << cpp(kernel_args::batchNorm(inference)) << ", "
       << normInput(group, inference.getInput(), e)
       << ", " << e.nameOrNull(inference.getWeight()) << ", "
       << e.nameOrNull(inference.getBias()) << ", " << e.name(inference.getRunningMean())
       << ", " << e.name(inference.getRunningVar()) << ", "
       << cppDouble(inference.getEps()) << ", " << store << ");\n  }\n";
  return success();
}

/// The batch norm backward's kernel, computing its gradient from the
/// elementwise ops (and recomputed normalised values) where it reads it.
LogicalResult printNormBackwardPrologue(FusionGroupOp group, StepEmitter &e,
                                        const NormKernelStyle &k) {
  auto bn = cast<BatchNormBackwardOp>(group.getNormBackward());
  ChunkedElementwise chunks;
  ElementPrinter printer(group, e, k.chunked ? &chunks : nullptr);
  std::string functors, body;
  llvm::raw_string_ostream fos(functors), bos(body);
  for (Operation *op : elementwiseOps(group, bn))
    if (failed(printer.print(op, fos, bos)))
      return failure();
  // The cuda kernels ask for a chunk of gradients dy[0, count) at once,
  // element k's statistics row gc0 + k * gcStep.
  std::string dyAt =
      k.chunked
          ? k.lambda + "(int64_t i0, int count, [[maybe_unused]] int64_t gc0, "
                       "[[maybe_unused]] int gcStep, float (&dy)[cuda::kChunk]) {\n" +
                chunkLoopText(chunks.loads, chunks.stores,
                              "[[maybe_unused]] const int64_t gc = gc0 + k * gcStep;",
                              body + "dy[k] = " + printer.element(bn.getGrad()) + ";",
                              "      ") +
                "    }"
          : k.lambda + "(int64_t i, [[maybe_unused]] int64_t gc) {\n" + body +
                "      return " + printer.element(bn.getGrad()) + ";\n    }";
  e.os << "  {\n" << functors << "    " << k.call << "batch_norm_backward_with<float>("
       << k.stream << k.workspace << cpp(kernel_args::batchNorm(bn)) << ", " << dyAt << ", "
       << normInput(group, bn.getInput(), e)
       << ", " << e.nameOrNull(bn.getWeight()) << ", " << e.name(bn.getSavedMean()) << ", "
       << e.name(bn.getSavedInvstd()) << ", " << normGradInput(group, bn.getGradInput(), e) << ", "
       << e.name(bn.getGradWeight()) << ", " << e.name(bn.getGradBias()) << ");\n  }\n";
  return success();
}

} // namespace

std::string mlir::tcc::updateElementType(Value v) {
  Type element = cast<ShapedType>(v.getType()).getElementType();
  return element.isBF16()  ? "tcc::rt::half::BF16"
         : element.isF16() ? "tcc::rt::half::F16"
                           : "float";
}

std::string mlir::tcc::updatePointer(const StepEmitter &e, Value v, Value like) {
  std::string type = updateElementType(like);
  if (!v)
    return "static_cast<" + type + " *>(nullptr)";
  return type == "float" ? e.name(v) : "reinterpret_cast<" + type + " *>(" + e.name(v) + ")";
}

std::string mlir::tcc::storageName(Value v) {
  Type element = cast<ShapedType>(v.getType()).getElementType();
  return element.isBF16() ? "bf16" : element.isF16() ? "f16" : element.isF32() ? "f32" : "?";
}

std::string mlir::tcc::elementFunctorOf(Operation *op) {
  auto withAttr = [](StringRef name, const APFloat &attr) {
    return (name + "<float>(" + cppDouble(attr) + ")").str();
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([](ReluOp) { return "Relu<float>{}"; })
      .Case([&](LeakyReluOp o) { return withAttr("LeakyRelu", o.getNegativeSlope()); })
      .Case([&](EluOp o) { return withAttr("Elu", o.getAlpha()); })
      .Case([&](CeluOp o) { return withAttr("Celu", o.getAlpha()); })
      .Case([](GeluOp o) {
        return o.getApproximate() == "tanh" ? "GeluTanh<float>{}" : "Gelu<float>{}";
      })
      .Case([](SiluOp) { return "Silu<float>{}"; })
      .Case([](SigmoidOp) { return "Sigmoid<float>{}"; })
      .Case([](TanhOp) { return "Tanh<float>{}"; })
      .Case([](ReluBackwardOp) { return "ReluBackward<float>{}"; })
      .Case([&](LeakyReluBackwardOp o) {
        return withAttr("LeakyReluBackward", o.getNegativeSlope());
      })
      .Case([&](EluBackwardOp o) { return withAttr("EluBackward", o.getAlpha()); })
      .Case([&](CeluBackwardOp o) { return withAttr("CeluBackward", o.getAlpha()); })
      .Case([](GeluBackwardOp o) {
        return o.getApproximate() == "tanh" ? "GeluTanhBackward<float>{}"
                                            : "GeluBackward<float>{}";
      })
      .Case([](SiluBackwardOp) { return "SiluBackward<float>{}"; })
      .Case([](SigmoidBackwardOp) { return "SigmoidBackward<float>{}"; })
      .Case([](TanhBackwardOp) { return "TanhBackward<float>{}"; })
      .Default([](Operation *) { return ""; });
}

// The updates as chains: an update that reads a value another update of the
// group wrote joins that update's chain, so it runs on element i after it;
// any other starts a chain.
LogicalResult mlir::tcc::planMultiTensorUpdate(FusionGroupOp group, StepEmitter &e,
                                               MultiTensorChains &out) {
  SmallVector<Operation *> updates;
  for (Operation &op : group.getFusedOps())
    updates.push_back(&op);
  return planUpdateChains(updates, e, out);
}

LogicalResult mlir::tcc::planUpdateChains(ArrayRef<Operation *> updates, StepEmitter &e,
                                          MultiTensorChains &out) {
  SmallVector<MultiTensorChains::Chain> &chains = out.chains;
  DenseMap<Value, size_t> chainOf;
  auto N = [&](Value v) { return e.name(v); };
  // The state's pointers as the kernels' element type (16-bit state: the
  // update computes in double from the stored values, rounds when it stores).
  auto P = [&](Value v) { return updatePointer(e, v, v); };
  // An update works in place on its result's buffer, which starts as a copy
  // of its input: before the loop for a value from outside the group, at
  // element i (a copy stage) for one an earlier update of the chain wrote.
  SmallVector<std::string> chainCopies;
  auto copyInto = [&](Value from, Value to) {
    if (N(from) == N(to))
      return;
    if (chainOf.count(from))
      chainCopies.push_back("cpu::copy_stage<" + updateElementType(to) + ">(" + P(to) + ", " +
                            P(from) + ")");
    else
      out.copies.push_back({numElements(from), cppElementType(from.getType()), N(from), N(to)});
  };
  for (Operation *update : updates) {
    Operation &op = *update;
    std::optional<size_t> chain;
    for (Value operand : op.getOperands())
      if (auto it = chainOf.find(operand); it != chainOf.end()) {
        if (chain && *chain != it->second)
          return op.emitError("cannot run an update that reads two "
                              "chains of a multi-tensor group");
        chain = it->second;
      }
    const std::string type = updateElementType(op.getResult(0));
    for (ValueRange values : {ValueRange(op.getOperands()), ValueRange(op.getResults())})
      for (Value v : values)
        if (cast<ShapedType>(v.getType()).getRank() > 0 && updateElementType(v) != type)
          return op.emitError("cannot update state stored as ")
                 << storageName(op.getResult(0)) << " with a " << storageName(v)
                 << " tensor (an update reads and writes one element type)";
    if (!chain) {
      chain = chains.size();
      chains.push_back({numElements(op.getResult(0)), type, {}});
    } else if (chains[*chain].type != type) {
      return op.emitError("cannot update one tensor in two element types");
    }
    std::string stage = llvm::TypeSwitch<Operation *, std::string>(&op)
        .Case([&](SgdUpdateOp o) {
          copyInto(o.getParam(), o.getNewParam());
          if (o.getMomentumBuffer())
            copyInto(o.getMomentumBuffer(), o.getNewMomentumBuffer());
          return "cpu::sgd_stage<" + type + ">(" + P(o.getNewParam()) + ", " + P(o.getGrad()) +
                 ", " + updatePointer(e, o.getNewMomentumBuffer(), o.getNewParam()) + ", " +
                 N(o.getLr()) + ", " +
                 N(o.getStep()) + ", " + e.nameOrNull(o.getSkip()) + ", " +
                 cppDouble(o.getLrScale()) + ", " +
                 cppDouble(o.getMomentum()) + ", " + cppDouble(o.getDampening()) + ", " +
                 cppDouble(o.getWeightDecay()) + ", " + (o.getNesterov() ? "true" : "false") +
                 (o.getLrScaledBuffer() ? ", true" : "") + ")";
        })
        .Case([&](AdamwUpdateOp o) {
          copyInto(o.getParam(), o.getNewParam());
          copyInto(o.getExpAvg(), o.getNewExpAvg());
          copyInto(o.getExpAvgSq(), o.getNewExpAvgSq());
          return "cpu::adamw_stage<" + type + ">(" + P(o.getNewParam()) + ", " +
                 P(o.getGrad()) + ", " + P(o.getNewExpAvg()) + ", " + P(o.getNewExpAvgSq()) +
                 ", " +
                 N(o.getLr()) + ", " + N(o.getStep()) + ", " + e.nameOrNull(o.getSkip()) +
                 ", " + cppDouble(o.getLrScale()) +
                 ", " + cppDouble(o.getBeta1()) + ", " + cppDouble(o.getBeta2()) + ", " +
                 cppDouble(o.getEps()) + ", " + cppDouble(o.getWeightDecay()) + ")";
        })
        .Case([&](EmaUpdateOp o) {
          copyInto(o.getEma(), o.getResult());
          int64_t every = o.getEvery();
          return "cpu::ema_stage<" + type + ">(" + P(o.getResult()) + ", " + P(o.getValue()) +
                 ", " + N(o.getStep()) + ", " +
                 cppDouble(std::pow(o.getDecay().convertToDouble(), double(every))) + ", " +
                 std::to_string(every) +
                 (o.getPerEpoch() ? ", " + N(o.getPerEpoch()) : std::string()) + ")";
        })
        .Case([&](LookaheadUpdateOp o) {
          copyInto(o.getFast(), o.getNewFast());
          copyInto(o.getSlow(), o.getNewSlow());
          return "cpu::lookahead_stage<" + type + ">(" + P(o.getNewFast()) + ", " +
                 P(o.getNewSlow()) + ", " + N(o.getStep()) + ", " + N(o.getTotalSteps()) +
                 ", " + cppDouble(o.getAlpha()) + ", " +
                 (o.getAlphaSchedule() == "cubic" ? "true" : "false") + ", " +
                 std::to_string(o.getEvery()) + (o.getCopyBack() ? ", true" : "") + ")";
        })
        .Default([](Operation *) { return std::string(); });
    if (stage.empty())
      return op.emitError("cannot run this op in a multi-tensor group");
    SmallVector<std::string> &stages = chains[*chain].stages;
    stages.append(chainCopies.begin(), chainCopies.end());
    chainCopies.clear();
    stages.push_back(stage);
    if (stages.size() > 8 /* kMaxChainStages */)
      return op.emitError("more than 8 stages on one tensor in a multi-tensor group");
    for (Value result : op.getResults())
      chainOf[result] = *chain;
  }
  return success();
}

SmallVector<UpdateTable> mlir::tcc::updateTables(const MultiTensorChains &plan,
                                                 size_t maxStages) {
  SmallVector<UpdateTable> tables;
  for (StringRef type : {"float", "tcc::rt::half::F16", "tcc::rt::half::BF16"}) {
    UpdateTable table{type.str()};
    for (const MultiTensorChains::Chain &chain : plan.chains) {
      if (chain.type != type)
        continue;
      if (table.chainCount > 0 && table.stageCount + chain.stages.size() > maxStages) {
        tables.push_back(table);
        table = UpdateTable{type.str()};
      }
      table.chains += "        {" + std::to_string(chain.n) + ", " +
                      std::to_string(table.stageCount) + ", " +
                      std::to_string(chain.stages.size()) + "},\n";
      for (const std::string &stage : chain.stages)
        table.stages += "        " + stage + ",\n";
      table.stageCount += chain.stages.size();
      ++table.chainCount;
    }
    if (table.chainCount > 0)
      tables.push_back(table);
  }
  return tables;
}

namespace {

/// The updates' loop nest: runtime/cpu/MultiTensor.h with the chains' tables.
LogicalResult printMultiTensorUpdate(FusionGroupOp group, StepEmitter &e) {
  MultiTensorChains plan;
  if (failed(planMultiTensorUpdate(group, e, plan)))
    return failure();
  for (const MultiTensorChains::Copy &copy : plan.copies)
    e.os << "  copy<" << copy.type << ">(" << copy.n << ", " << copy.from << ", " << copy.to
         << ");\n";
  for (const UpdateTable &table : updateTables(plan, SIZE_MAX))
    e.os << "  {\n    const cpu::UpdateStage<" << table.type << "> stages[] = {\n"
         << table.stages << "    };\n    const cpu::UpdateChain chains[] = {\n" << table.chains
         << "    };\n    cpu::multi_tensor_update<" << table.type << ">(chains, "
         << table.chainCount << ", stages);\n  }\n";
  return success();
}

} // namespace

LogicalResult mlir::tcc::emitNormGroup(FusionGroupOp group, StepEmitter &e,
                                       const NormKernelStyle &style) {
  if (group.getKind() == FusionGroupOp::kNormEpilogue)
    return printNormEpilogue(group, e, style);
  return printNormBackwardPrologue(group, e, style);
}

std::string mlir::tcc::chunkLoopText(ArrayRef<std::string> loads,
                                     ArrayRef<std::string> stores, StringRef prelude,
                                     StringRef body, StringRef indent) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [j, name] : llvm::enumerate(loads))
    os << indent << "alignas(16) cuda::ChunkOf<decltype(" << name << ")> c" << j << ";\n"
       << indent << "cuda::load_chunk(" << name << ", i0, count, c" << j << ");\n";
  for (auto [j, name] : llvm::enumerate(stores))
    os << indent << "alignas(16) cuda::ChunkOf<decltype(" << name << ")> s" << j << ";\n";
  os << "#pragma unroll\n"
     << indent << "for (int k = 0; k < cuda::kChunk; ++k) {\n"
     << indent << "  if (k == count) break;\n";
  if (!prelude.empty())
    os << indent << "  " << prelude << "\n";
  for (StringRef line : llvm::split(body.trim('\n'), '\n'))
    os << indent << "  " << line.ltrim() << "\n";
  os << indent << "}\n";
  for (auto [j, name] : llvm::enumerate(stores))
    os << indent << "cuda::store_chunk(" << name << ", i0, count, s" << j << ");\n";
  return text;
}

/// The body of an elementwise group, one element's or a chunk's.
static LogicalResult printElementBody(FusionGroupOp group, StepEmitter &e,
                                      ChunkedElementwise *chunked, std::string &functors,
                                      std::string &body) {
  ElementPrinter printer(group, e, chunked);
  llvm::raw_string_ostream fos(functors), bos(body);
  for (Operation &op : group.getFusedOps())
    if (failed(printer.print(&op, fos, bos)))
      return failure();
  // Stores after every read of element i: the memory plan may give a
  // result the bytes of an operand the group is the last to read.
  for (Operation &op : group.getFusedOps())
    printer.printStores(op.getResults(), bos);
  return success();
}

LogicalResult mlir::tcc::printElementwiseBody(FusionGroupOp group, StepEmitter &e,
                                              std::string &functors, std::string &body) {
  return printElementBody(group, e, nullptr, functors, body);
}

LogicalResult mlir::tcc::printChunkedElementwiseBody(FusionGroupOp group, StepEmitter &e,
                                                     ChunkedElementwise &chunked) {
  return printElementBody(group, e, &chunked, chunked.functors, chunked.body);
}

LogicalResult mlir::tcc::emitCpuFusionGroup(FusionGroupOp group, StepEmitter &e) {
  StringRef kind = group.getKind();
  if (kind == FusionGroupOp::kElementwise)
    return printElementwise(group, e);
  if (kind == FusionGroupOp::kNormEpilogue)
    return printNormEpilogue(group, e, NormKernelStyle::cpu());
  if (kind == FusionGroupOp::kNormBackwardPrologue)
    return printNormBackwardPrologue(group, e, NormKernelStyle::cpu());
  if (kind == FusionGroupOp::kMultiTensorUpdate)
    return printMultiTensorUpdate(group, e);
  return group.emitError("the cpu target cannot run a fusion group of kind ") << kind;
}
