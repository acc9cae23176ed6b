//===- OptimizerOps.cpp - Optimizer updates and clipping on the GPU -------===//

#include "codegen/cuda/ops/CudaPrinter.h"

using namespace mlir;
using namespace mlir::tcc;

// A new launch when a table would exceed kMaxStagesPerLaunch stages.
void mlir::tcc::printUpdateChains(const MultiTensorChains &plan, CudaPrinter &p) {
  constexpr size_t kMaxStagesPerLaunch = 128; // MultiTensor.cuh's
  for (const MultiTensorChains::Copy &copy : plan.copies)
    p.os << "  cuda::copy<" << copy.type << ">(args.stream, " << copy.n << ", " << copy.from << ", "
         << copy.to << ");\n";
  for (const UpdateTable &table : updateTables(plan, kMaxStagesPerLaunch))
    p.os << "  { cuda::UpdateTable<" << table.type << ", " << table.stageCount << ", "
         << table.chainCount << "> table{{\n"
         << table.stages << "      }, {\n"
         << table.chains << "      }, {}};\n    cuda::multi_tensor_update(args.stream, table); }\n";
}

void mlir::tcc::registerCudaOptimizerOps(CudaOpPrinters &t) {
  // An update outside a multi-tensor group (tcc-fusion left out): a chain
  // of one, as the group would run it.
  t.add<SgdUpdateOp, AdamwUpdateOp, EmaUpdateOp, LookaheadUpdateOp>([](auto o, CudaPrinter &p) {
    MultiTensorChains plan;
    if (failed(planUpdateChains({o.getOperation()}, p.e, plan)))
      return failure();
    printUpdateChains(plan, p);
    return success();
  });
  t.add<LambUpdateOp>([](LambUpdateOp o, CudaPrinter &p) {
    p.copyInto(o.getParam(), o.getNewParam());
    p.copyInto(o.getExpAvg(), o.getNewExpAvg());
    p.copyInto(o.getExpAvgSq(), o.getNewExpAvgSq());
    p.os << "  cuda::lamb_update(args.stream, " << numElements(o.getParam()) << ", "
         << p(o.getNewParam()) << ", " << p(o.getGrad()) << ", " << p(o.getNewExpAvg()) << ", "
         << p(o.getNewExpAvgSq()) << ", " << p(o.getLr()) << ", " << cppDouble(o.getLrScale())
         << ", " << cppDouble(o.getBeta1()) << ", " << cppDouble(o.getBeta2()) << ", "
         << cppDouble(o.getEps()) << ", " << cppDouble(o.getWeightDecay()) << ", " << p(o.getStep())
         << ", " << (o.getSkip() ? p(o.getSkip()) : "nullptr") << ");\n";
    return success();
  });
  // Gradient clipping by the global norm.
  t.add<GlobalNormOp>([](GlobalNormOp o, CudaPrinter &p) {
    p.overTensors("global_norm", o.getInputs(), o.getResult());
    return success();
  });
  t.add<ClipCoefficientOp>([](ClipCoefficientOp o, CudaPrinter &p) {
    p.os << "  cuda::clip_coefficient(args.stream, " << cppDouble(o.getMaxNorm()) << ", "
         << p(o.getNorm()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
