//===- StepOps.cpp - The step's counter, seeds, schedule, loss scale on the cpu ===//
//
// Ops on the step's own values (runtime/cpu/StepOps.h): they read and
// write scalars of the state, so that nothing comes from the host per step.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::registerCpuStepOps(CpuOpPrinters &t) {
  t.add<IncrementOp>([](IncrementOp o, CpuPrinter &p) {
    p.os << "  cpu::increment(" << p(o.getInput()) << ", " << p.e.nameOrNull(o.getSkip()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<MixSeedOp>([](MixSeedOp o, CpuPrinter &p) {
    p.os << "  cpu::mix_seed(" << p(o.getSeed()) << ", " << p(o.getStep()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<FrozenAfterOp>([](FrozenAfterOp o, CpuPrinter &p) {
    p.os << "  cpu::frozen_after(" << p(o.getStep()) << ", " << p(o.getStepsPerEpoch()) << ", "
         << o.getEpochs() << ", " << p.e.nameOrNull(o.getSkip()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<LrScheduleOp>([](LrScheduleOp o, CpuPrinter &p) {
    p.os << "  { static const ScheduleDesc schedule = " << cppScheduleDesc(o.getSchedule())
         << ";\n    cpu::lr_schedule(schedule, " << cppDouble(o.getBaseLr()) << ", "
         << p(o.getStep()) << ", " << p(o.getStepsPerEpoch()) << ", " << p(o.getTotalSteps())
         << ", " << p(o.getResult()) << "); }\n";
    return success();
  });
  // fp16 loss scaling (docs/passes.md).
  t.add<ReciprocalOp>([](ReciprocalOp o, CpuPrinter &p) {
    p.os << "  cpu::reciprocal(" << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<FoundNonFiniteOp>([](FoundNonFiniteOp o, CpuPrinter &p) {
    p.os << tensorArrays(p.e, o.getInputs()) << "    cpu::found_non_finite<float>("
         << o.getInputs().size() << ", tensors, sizes, " << p(o.getResult()) << "); }\n";
    return success();
  });
  t.add<UpdateLossScaleOp>([](UpdateLossScaleOp o, CpuPrinter &p) {
    p.os << "  cpu::update_loss_scale(" << cppDouble(o.getGrowthFactor()) << ", "
         << cppDouble(o.getBackoffFactor()) << ", " << o.getGrowthInterval() << ", "
         << p(o.getScale()) << ", " << p(o.getGrowthTracker()) << ", " << p(o.getFoundInf()) << ", "
         << p(o.getNewScale()) << ", " << p(o.getNewGrowthTracker()) << ");\n";
    return success();
  });
}
