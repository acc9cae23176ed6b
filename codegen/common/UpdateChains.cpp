//===- UpdateChains.cpp - Optimizer updates as chains of stages -----------===//
//
// The optimizer, EMA and Lookahead updates of a multi_tensor_update group
// (or one update alone) as both targets run them: chains of stages over
// one tensor each (runtime/cpu/MultiTensor.h,
// runtime/cuda/device/MultiTensor.cuh), in tables by element type.
//
//===----------------------------------------------------------------------===//

#include "codegen/common/Emitter.h"

#include "ir/TccOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::tcc;

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
