//===- CpuGroups.cpp - A tcc.fusion_group as one loop nest on the cpu -----===//
//
// An elementwise group is one OpenMP loop over its element body
// (common/ElementBody.cpp); a norm's group its kernel's `_with` form
// (common/NormGroups.cpp); a multi_tensor_update group the chains of
// runtime/cpu/MultiTensor.h.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::tcc;

namespace {

LogicalResult printElementwise(FusionGroupOp group, StepEmitter &e) {
  std::string functors, body;
  if (failed(printElementwiseBody(group, e, functors, body)))
    return failure();
  int64_t n = numElements(group.getResult(0));
  e.os << "  {\n" << functors << "#pragma omp parallel for schedule(static)\n"
       << "    for (int64_t i = 0; i < " << n << "; ++i) {\n" << body << "    }\n  }\n";
  return success();
}

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

LogicalResult mlir::tcc::emitCpuFusionGroup(FusionGroupOp group, StepEmitter &e) {
  StringRef kind = group.getKind();
  if (kind == FusionGroupOp::kElementwise)
    return printElementwise(group, e);
  if (kind == FusionGroupOp::kNormEpilogue || kind == FusionGroupOp::kNormBackwardPrologue)
    return emitNormGroup(group, e, NormKernelStyle::cpu());
  if (kind == FusionGroupOp::kMultiTensorUpdate)
    return printMultiTensorUpdate(group, e);
  return group.emitError("the cpu target cannot run a fusion group of kind ") << kind;
}
