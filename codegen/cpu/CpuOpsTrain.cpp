//===- CpuOpsTrain.cpp - Elementwise, shape, loss and optimizer ops -------===//

#include "codegen/common/Emitter.h"

#include "ir/TccOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;

LogicalResult mlir::tcc::emitCpuTrainOp(Operation *op, StepEmitter &e) {
  llvm::raw_ostream &os = e.os;
  auto n = [&](Value v) { return numElements(v); };
  auto copyInto = [&](Value from, Value to) {
    if (e.name(from) != e.name(to))
      os << "  copy<" << cppElementType(from.getType()) << ">(" << n(from) << ", "
         << e.name(from) << ", " << e.name(to) << ");\n";
  };
  auto N = [&](Value v) { return e.name(v); };
  auto P = [&](Value v) { return updatePointer(e, v, v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Elementwise and shape.
      .Case<AddOp, MulOp>([&](auto o) {
        os << "  " << (isa<AddOp>(op) ? "add" : "mul") << "<float>(" << n(o.getResult())
           << ", " << N(o.getLhs()) << ", " << N(o.getRhs()) << ", " << N(o.getResult())
           << ");\n";
        return success();
      })
      .Case([&](ScaleOp o) {
        os << "  scale<float>(" << n(o.getResult()) << ", float(" << cppDouble(o.getFactor())
           << "), " << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](ScaleByOp o) {
        os << "  cpu::scale_by<float>(" << n(o.getResult()) << ", " << N(o.getFactor())
           << ", " << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case<FlattenOp, ReshapeOp>([&](auto o) {
        copyInto(o.getInput(), o.getResult());
        return success();
      })
      .Case([&](CastOp o) {
        if (o.getInput().getType() == o.getType()) {
          copyInto(o.getInput(), o.getResult());
          return success();
        }
        // Between f32 and a 16-bit float (tcc-precision, tcc-widen-16bit):
        // rounded to nearest even, as the GPU converts.
        auto name = [](Type t) -> std::string {
          Type e = cast<ShapedType>(t).getElementType();
          return e.isF32() ? "f32" : e.isBF16() ? "bf16" : e.isF16() ? "f16" : "";
        };
        std::string from = name(o.getInput().getType()), to = name(o.getType());
        if (from.empty() || to.empty() || (from != "f32" && to != "f32"))
          return failure();
        os << "  cast_" << from << "_to_" << to << "(" << n(o.getResult()) << ", "
           << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](TransposeOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  { const int64_t shape[] = {";
        llvm::interleaveComma(in, os);
        os << "}; const int64_t perm[] = {";
        llvm::interleaveComma(o.getPerm(), os);
        os << "}; transpose<" << cppElementType(o.getType()) << ">(" << in.size()
           << ", shape, perm, " << N(o.getInput()) << ", " << N(o.getResult()) << "); }\n";
        return success();
      })
      .Case([&](ConcatOp o) {
        ArrayRef<int64_t> out = dimsOf(o.getResult());
        int64_t axis = o.getAxis();
        std::string type = cppElementType(o.getType());
        os << "  { const " << type << " *inputs[] = {";
        llvm::interleaveComma(o.getInputs(), os, [&](Value v) { os << N(v); });
        os << "}; const int64_t sizes[] = {";
        llvm::interleaveComma(o.getInputs(), os,
                              [&](Value v) { os << dimsOf(v)[axis]; });
        os << "}; concat<" << type << ">(" << product(out.take_front(axis)) << ", "
           << product(out.drop_front(axis + 1)) << ", " << o.getInputs().size()
           << ", inputs, sizes, " << N(o.getResult()) << "); }\n";
        return success();
      })
      .Case([&](PadChannelsOp o) {
        // The adjoint of a slice of the first C channels.
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  slice_backward<" << cppElementType(o.getType()) << ">(" << in[0] << ", "
           << o.getChannels() << ", " << product(in.drop_front(2)) << ", 0, " << in[1] << ", "
           << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](SliceOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        int64_t axis = o.getAxis();
        os << "  slice<" << cppElementType(o.getType()) << ">("
           << product(in.take_front(axis)) << ", " << in[axis] << ", "
           << product(in.drop_front(axis + 1)) << ", " << o.getOffset() << ", "
           << o.getSize() << ", " << N(o.getInput()) << ", " << N(o.getResult())
           << ");\n";
        return success();
      })
      .Case([&](DropoutOp o) {
        // In a micro-batch loop each iteration draws streams of its own.
        std::string stream = std::to_string(o.getStream());
        if (auto loop = o->getParentOfType<MicroBatchesOp>())
          stream += " + uint64_t(args.micro) * " + std::to_string(loop.getDropoutStreams());
        os << "  cpu::dropout_forward<float>(" << n(o.getResult()) << ", "
           << cppDouble(o.getP()) << ", " << N(o.getSeed()) << ", " << stream << ", "
           << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        int64_t axis = o.getAxis();
        os << "  " << (isa<SoftmaxOp>(op) ? "softmax" : "log_softmax")
           << "_forward<float>(" << product(in.take_front(axis)) << ", " << in[axis]
           << ", " << product(in.drop_front(axis + 1)) << ", " << N(o.getInput())
           << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case<SoftmaxBackwardOp, LogSoftmaxBackwardOp>([&](auto o) {
        ArrayRef<int64_t> in = dimsOf(o.getGrad());
        int64_t axis = o.getAxis();
        os << "  " << (isa<SoftmaxBackwardOp>(op) ? "softmax" : "log_softmax")
           << "_backward<float>(" << product(in.take_front(axis)) << ", " << in[axis]
           << ", " << product(in.drop_front(axis + 1)) << ", " << N(o.getResultValue())
           << ", " << N(o.getGrad()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      // Losses and metrics.
      .Case([&](CrossEntropyOp o) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        os << "  cross_entropy_forward<float>(" << l[0] << ", " << l[1] << ", "
           << N(o.getLogits()) << ", " << N(o.getLabels()) << ", "
           << cppDouble(o.getLabelSmoothing()) << ", " << cppReduction(o.getReduction()) << ", "
           << N(o.getResult()) << ", static_cast<float *>(nullptr)"
           << (o.getValid() ? ", " + N(o.getValid()) : std::string()) << ");\n";
        return success();
      })
      .Case([&](CrossEntropyBackwardOp o) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        os << "  cpu::cross_entropy_backward<float>(" << l[0] << ", " << l[1] << ", "
           << N(o.getLogits()) << ", " << N(o.getLabels()) << ", "
           << cppDouble(o.getLabelSmoothing()) << ", " << cppReduction(o.getReduction()) << ", "
           << N(o.getGrad()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](MseLossOp o) {
        os << "  mse_loss_forward<float>(" << n(o.getInput()) << ", " << N(o.getInput())
           << ", " << N(o.getTarget()) << ", " << cppReduction(o.getReduction()) << ", "
           << N(o.getResult());
        if (o.getValid())
          os << ", " << N(o.getValid()) << ", "
             << product(dimsOf(o.getInput()).drop_front());
        os << ");\n";
        return success();
      })
      .Case([&](MseLossBackwardOp o) {
        os << "  cpu::mse_loss_backward<float>(" << n(o.getInput()) << ", "
           << N(o.getInput()) << ", " << N(o.getTarget()) << ", "
           << cppReduction(o.getReduction()) << ", " << N(o.getGrad()) << ", "
           << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](OneHotOp o) {
        os << "  one_hot<float>(" << dimsOf(o.getLabels())[0] << ", " << o.getClasses()
           << ", " << N(o.getLabels()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](CountCorrectOp o) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        os << "  cpu::count_correct<float>(" << l[0] << ", " << l[1] << ", "
           << N(o.getLogits()) << ", " << N(o.getLabels()) << ", " << N(o.getValid())
           << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      // Step counter, seeds, schedule, clipping.
      .Case([&](IncrementOp o) {
        os << "  cpu::increment(" << N(o.getInput()) << ", " << e.nameOrNull(o.getSkip()) << ", "
           << N(o.getResult()) << ");\n";
        return success();
      })
      // fp16 loss scaling.
      .Case([&](ReciprocalOp o) {
        os << "  cpu::reciprocal(" << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](FoundNonFiniteOp o) {
        os << "  { const float *tensors[] = {";
        llvm::interleaveComma(o.getInputs(), os, [&](Value v) { os << N(v); });
        os << "}; const int64_t sizes[] = {";
        llvm::interleaveComma(o.getInputs(), os, [&](Value v) { os << n(v); });
        os << "};\n    cpu::found_non_finite<float>(" << o.getInputs().size()
           << ", tensors, sizes, " << N(o.getResult()) << "); }\n";
        return success();
      })
      .Case([&](FrozenAfterOp o) {
        os << "  cpu::frozen_after(" << N(o.getStep()) << ", " << N(o.getStepsPerEpoch())
           << ", " << o.getEpochs() << ", " << e.nameOrNull(o.getSkip()) << ", "
           << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](UpdateLossScaleOp o) {
        os << "  cpu::update_loss_scale(" << cppDouble(o.getGrowthFactor()) << ", "
           << cppDouble(o.getBackoffFactor()) << ", " << o.getGrowthInterval() << ", "
           << N(o.getScale()) << ", " << N(o.getGrowthTracker()) << ", "
           << N(o.getFoundInf()) << ", " << N(o.getNewScale()) << ", "
           << N(o.getNewGrowthTracker()) << ");\n";
        return success();
      })
      .Case([&](MixSeedOp o) {
        os << "  cpu::mix_seed(" << N(o.getSeed()) << ", " << N(o.getStep()) << ", "
           << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](LrScheduleOp o) {
        os << "  { static const ScheduleDesc schedule = "
           << cppScheduleDesc(o.getSchedule()) << ";\n    cpu::lr_schedule(schedule, "
           << cppDouble(o.getBaseLr()) << ", " << N(o.getStep()) << ", "
           << N(o.getStepsPerEpoch()) << ", " << N(o.getTotalSteps()) << ", "
           << N(o.getResult()) << "); }\n";
        return success();
      })
      .Case([&](GlobalNormOp o) {
        os << "  { const float *tensors[] = {";
        llvm::interleaveComma(o.getInputs(), os, [&](Value v) { os << N(v); });
        os << "}; const int64_t sizes[] = {";
        llvm::interleaveComma(o.getInputs(), os, [&](Value v) { os << n(v); });
        os << "};\n    cpu::global_norm<float>(" << o.getInputs().size()
           << ", tensors, sizes, " << N(o.getResult()) << "); }\n";
        return success();
      })
      .Case([&](ClipCoefficientOp o) {
        os << "  cpu::clip_coefficient<float>(" << cppDouble(o.getMaxNorm()) << ", "
           << N(o.getNorm()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      // Optimizers: copy the state into the result unless in place, update it
      // (16-bit state: computed in double, rounded where stored; updatePointer).
      .Case([&](SgdUpdateOp o) {
        copyInto(o.getParam(), o.getNewParam());
        if (o.getMomentumBuffer())
          copyInto(o.getMomentumBuffer(), o.getNewMomentumBuffer());
        os << "  cpu::sgd_update<" << updateElementType(o.getParam()) << ">("
           << n(o.getParam()) << ", " << P(o.getNewParam()) << ", " << P(o.getGrad()) << ", "
           << updatePointer(e, o.getNewMomentumBuffer(), o.getNewParam()) << ", "
           << N(o.getLr()) << ", " << cppDouble(o.getLrScale()) << ", "
           << cppDouble(o.getMomentum()) << ", " << cppDouble(o.getDampening()) << ", "
           << cppDouble(o.getWeightDecay()) << ", " << (o.getNesterov() ? "true" : "false")
           << ", " << N(o.getStep()) << ", " << e.nameOrNull(o.getSkip())
           << (o.getLrScaledBuffer() ? ", true" : "") << ");\n";
        return success();
      })
      .Case<AdamwUpdateOp, LambUpdateOp>([&](auto o) {
        copyInto(o.getParam(), o.getNewParam());
        copyInto(o.getExpAvg(), o.getNewExpAvg());
        copyInto(o.getExpAvgSq(), o.getNewExpAvgSq());
        os << "  cpu::" << (isa<AdamwUpdateOp>(op) ? "adamw" : "lamb") << "_update<"
           << updateElementType(o.getParam()) << ">(" << n(o.getParam()) << ", "
           << P(o.getNewParam()) << ", " << P(o.getGrad()) << ", " << P(o.getNewExpAvg())
           << ", " << P(o.getNewExpAvgSq()) << ", "
           << N(o.getLr()) << ", " << cppDouble(o.getLrScale()) << ", "
           << cppDouble(o.getBeta1()) << ", " << cppDouble(o.getBeta2()) << ", "
           << cppDouble(o.getEps()) << ", " << cppDouble(o.getWeightDecay()) << ", "
           << N(o.getStep()) << ", " << e.nameOrNull(o.getSkip()) << ");\n";
        return success();
      })
      .Case([&](EmaUpdateOp o) {
        copyInto(o.getEma(), o.getResult());
        int64_t every = o.getEvery();
        os << "  cpu::ema_update<" << updateElementType(o.getEma()) << ">(" << n(o.getEma())
           << ", " << cppDouble(std::pow(o.getDecay().convertToDouble(), double(every)))
           << ", " << every << ", " << N(o.getStep()) << ", " << P(o.getValue()) << ", "
           << P(o.getResult())
           << (o.getPerEpoch() ? ", " + N(o.getPerEpoch()) : std::string()) << ");\n";
        return success();
      })
      .Case([&](LookaheadUpdateOp o) {
        copyInto(o.getFast(), o.getNewFast());
        copyInto(o.getSlow(), o.getNewSlow());
        os << "  cpu::lookahead_update<" << updateElementType(o.getFast()) << ">("
           << n(o.getFast()) << ", " << cppDouble(o.getAlpha()) << ", "
           << (o.getAlphaSchedule() == "cubic" ? "true" : "false") << ", "
           << o.getEvery() << ", " << N(o.getStep()) << ", " << N(o.getTotalSteps())
           << ", " << P(o.getNewFast()) << ", " << P(o.getNewSlow())
           << (o.getCopyBack() ? ", true" : "") << ");\n";
        return success();
      })
      // Evaluation views.
      .Case([&](FlipOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  flip<float>(" << in[0] * in[1] * in[2] << ", " << in[3] << ", 1, "
           << N(o.getInput()) << ", " << N(o.getResult()) << ");\n";
        return success();
      })
      .Case([&](ShiftOp o) {
        ArrayRef<int64_t> in = dimsOf(o.getInput());
        os << "  shift_reflect<float>(" << in[0] * in[1] << ", " << in[2] << ", "
           << in[3] << ", " << static_cast<int64_t>(o.getDy()) << ", "
           << static_cast<int64_t>(o.getDx()) << ", " << N(o.getInput()) << ", "
           << N(o.getResult()) << ");\n";
        return success();
      })
      .Default([](Operation *) { return failure(); });
}
