//===- OptimizerOps.cpp - Optimizer updates and clipping on the cpu -------===//
//
// An update copies the state into its result unless in place, then updates
// it (16-bit state: computed in double, rounded where stored;
// updatePointer).
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;

namespace {

LogicalResult printSgd(SgdUpdateOp o, CpuPrinter &p) {
  p.copyInto(o.getParam(), o.getNewParam());
  if (o.getMomentumBuffer())
    p.copyInto(o.getMomentumBuffer(), o.getNewMomentumBuffer());
  p.os << "  cpu::sgd_update<" << updateElementType(o.getParam()) << ">("
       << numElements(o.getParam()) << ", " << p.update(o.getNewParam()) << ", "
       << p.update(o.getGrad()) << ", "
       << updatePointer(p.e, o.getNewMomentumBuffer(), o.getNewParam()) << ", " << p(o.getLr())
       << ", " << cppDouble(o.getLrScale()) << ", " << cppDouble(o.getMomentum()) << ", "
       << cppDouble(o.getDampening()) << ", " << cppDouble(o.getWeightDecay()) << ", "
       << (o.getNesterov() ? "true" : "false") << ", " << p(o.getStep()) << ", "
       << p.e.nameOrNull(o.getSkip()) << (o.getLrScaledBuffer() ? ", true" : "") << ");\n";
  return success();
}

LogicalResult printEma(EmaUpdateOp o, CpuPrinter &p) {
  p.copyInto(o.getEma(), o.getResult());
  int64_t every = o.getEvery();
  p.os << "  cpu::ema_update<" << updateElementType(o.getEma()) << ">(" << numElements(o.getEma())
       << ", " << cppDouble(std::pow(o.getDecay().convertToDouble(), double(every))) << ", "
       << every << ", " << p(o.getStep()) << ", " << p.update(o.getValue()) << ", "
       << p.update(o.getResult()) << (o.getPerEpoch() ? ", " + p(o.getPerEpoch()) : std::string())
       << ");\n";
  return success();
}

LogicalResult printLookahead(LookaheadUpdateOp o, CpuPrinter &p) {
  p.copyInto(o.getFast(), o.getNewFast());
  p.copyInto(o.getSlow(), o.getNewSlow());
  p.os << "  cpu::lookahead_update<" << updateElementType(o.getFast()) << ">("
       << numElements(o.getFast()) << ", " << cppDouble(o.getAlpha()) << ", "
       << (o.getAlphaSchedule() == "cubic" ? "true" : "false") << ", " << o.getEvery() << ", "
       << p(o.getStep()) << ", " << p(o.getTotalSteps()) << ", " << p.update(o.getNewFast()) << ", "
       << p.update(o.getNewSlow()) << (o.getCopyBack() ? ", true" : "") << ");\n";
  return success();
}

} // namespace

void mlir::tcc::registerCpuOptimizerOps(CpuOpPrinters &t) {
  t.add<SgdUpdateOp>(printSgd);
  t.add<AdamwUpdateOp, LambUpdateOp>([](auto o, CpuPrinter &p) {
    p.copyInto(o.getParam(), o.getNewParam());
    p.copyInto(o.getExpAvg(), o.getNewExpAvg());
    p.copyInto(o.getExpAvgSq(), o.getNewExpAvgSq());
    p.os << "  cpu::" << (isa<AdamwUpdateOp>(o.getOperation()) ? "adamw" : "lamb") << "_update<"
         << updateElementType(o.getParam()) << ">(" << numElements(o.getParam()) << ", "
         << p.update(o.getNewParam()) << ", " << p.update(o.getGrad()) << ", "
         << p.update(o.getNewExpAvg()) << ", " << p.update(o.getNewExpAvgSq()) << ", "
         << p(o.getLr()) << ", " << cppDouble(o.getLrScale()) << ", " << cppDouble(o.getBeta1())
         << ", " << cppDouble(o.getBeta2()) << ", " << cppDouble(o.getEps()) << ", "
         << cppDouble(o.getWeightDecay()) << ", " << p(o.getStep()) << ", "
         << p.e.nameOrNull(o.getSkip()) << ");\n";
    return success();
  });
  t.add<EmaUpdateOp>(printEma);
  t.add<LookaheadUpdateOp>(printLookahead);
  // Gradient clipping by the global norm.
  t.add<GlobalNormOp>([](GlobalNormOp o, CpuPrinter &p) {
    p.os << tensorArrays(p.e, o.getInputs()) << "    cpu::global_norm<float>("
         << o.getInputs().size() << ", tensors, sizes, " << p(o.getResult()) << "); }\n";
    return success();
  });
  t.add<ClipCoefficientOp>([](ClipCoefficientOp o, CpuPrinter &p) {
    p.os << "  cpu::clip_coefficient<float>(" << cppDouble(o.getMaxNorm()) << ", " << p(o.getNorm())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
