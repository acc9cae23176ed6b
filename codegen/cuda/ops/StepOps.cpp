//===- StepOps.cpp - The step's counter, seeds, schedule, loss scale on the GPU ===//
//
// Ops on the step's own values (runtime/cuda/device/StepOps.cuh): one
// thread each, on the device, so that the recorded step reads nothing from
// the host.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::registerCudaStepOps(CudaOpPrinters &t) {
  t.add<IncrementOp>([](IncrementOp o, CudaPrinter &p) {
    p.os << "  cuda::increment(args.stream, " << p(o.getInput()) << ", "
         << (o.getSkip() ? p(o.getSkip()) : "nullptr") << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<MixSeedOp>([](MixSeedOp o, CudaPrinter &p) {
    p.os << "  cuda::mix_seed(args.stream, " << p(o.getSeed()) << ", " << p(o.getStep()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<FrozenAfterOp>([](FrozenAfterOp o, CudaPrinter &p) {
    p.os << "  cuda::frozen_after(args.stream, " << p(o.getStep()) << ", "
         << p(o.getStepsPerEpoch()) << ", " << o.getEpochs() << ", "
         << (o.getSkip() ? p(o.getSkip()) : "nullptr") << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<LrScheduleOp>([](LrScheduleOp o, CudaPrinter &p) {
    p.os << "  { static const ScheduleDesc schedule = " << cppScheduleDesc(o.getSchedule())
         << ";\n    cuda::lr_schedule(args.stream, schedule, " << cppDouble(o.getBaseLr()) << ", "
         << p(o.getStep()) << ", " << p(o.getStepsPerEpoch()) << ", " << p(o.getTotalSteps())
         << ", " << p(o.getResult()) << "); }\n";
    return success();
  });
  // fp16 loss scaling (docs/passes.md).
  t.add<ReciprocalOp>([](ReciprocalOp o, CudaPrinter &p) {
    p.os << "  cuda::reciprocal(args.stream, " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<FoundNonFiniteOp>([](FoundNonFiniteOp o, CudaPrinter &p) {
    p.overTensors("found_non_finite", o.getInputs(), o.getResult());
    return success();
  });
  t.add<UpdateLossScaleOp>([](UpdateLossScaleOp o, CudaPrinter &p) {
    p.os << "  cuda::update_loss_scale(args.stream, " << cppDouble(o.getGrowthFactor()) << ", "
         << cppDouble(o.getBackoffFactor()) << ", " << o.getGrowthInterval() << ", "
         << p(o.getScale()) << ", " << p(o.getGrowthTracker()) << ", " << p(o.getFoundInf()) << ", "
         << p(o.getNewScale()) << ", " << p(o.getNewGrowthTracker()) << ");\n";
    return success();
  });
}
