//===- CudaMatmulAlgos.cpp - The cuBLASLt algorithms a tuning file bakes --===//

#include "codegen/cuda/CudaMatmulAlgos.h"

#include "ir/TccAttrNames.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tcc;
namespace cuda = ::tcc::cuda;

bool mlir::tcc::bakeMatmulAlgos(ModuleOp module, const cuda::GpuDescription &gpu,
                                const cuda::TuningFile *tuning,
                                std::vector<BakedStepMatmul> &baked, std::string &error) {
  std::vector<StepMatmul> matmuls;
  collectMatmulProblems(module, matmuls);
  const int64_t usable = cuda::matmulUsableWorkspaceBytes(gpu.smVersion);
  for (const StepMatmul &matmul : matmuls) {
    BakedStepMatmul row{matmul, std::nullopt};
    auto tuned = tuning ? tuning->matmuls.find(matmul.problem.key())
                        : cuda::TunedMatmuls::const_iterator{};
    if (tuning && tuned != tuning->matmuls.end()) {
      std::string what = "the tuning file's algorithm " + tuned->second.name +
                         " for the matmul of " + quotedNodes(matmul.nodes);
      cuda::MatmulAlgo algo;
      if (!cuda::MatmulAlgo::fromName(tuned->second.name, algo)) {
        error = what + " is not a cuBLASLt algorithm name (algo<id>_tile<n>_stages<n>_splitk<n>_"
                       "reduction<n>_swizzle<n>_custom<n>_inner<n>_cluster<n>)";
        return false;
      }
      if (tuned->second.workspaceBytes > usable) {
        error = what + " needs a workspace of " + std::to_string(tuned->second.workspaceBytes) +
                " bytes, over the " + std::to_string(usable) + " a matmul has on the " +
                gpu.name + "; run 'tcc tune' again";
        return false;
      }
      row.tuned = tuned->second;
    }
    baked.push_back(row);
  }
  return true;
}

void mlir::tcc::attachMatmuls(ModuleOp module, const std::vector<BakedStepMatmul> &baked,
                              const cuda::GpuDescription &gpu, int64_t cublasLtVersion) {
  Builder b(module.getContext());
  SmallVector<Attribute> rows;
  for (const BakedStepMatmul &matmul : baked) {
    SmallVector<Attribute> nodes;
    for (const std::string &node : matmul.matmul.nodes)
      nodes.push_back(b.getStringAttr(node));
    NamedAttrList row;
    row.append("problem", b.getStringAttr(matmul.matmul.problem.key()));
    row.append("nodes", b.getArrayAttr(nodes));
    row.append("chosen_by",
               b.getStringAttr(matmul.tuned ? "tuning" : "heuristic at the first step"));
    if (matmul.tuned) {
      row.append("algo", b.getStringAttr(matmul.tuned->name));
      row.append("workspace_bytes", b.getI64IntegerAttr(matmul.tuned->workspaceBytes));
      row.append("tuned_microseconds", b.getF64FloatAttr(matmul.tuned->microseconds));
    }
    rows.push_back(row.getDictionary(b.getContext()));
  }
  NamedAttrList target(module->getAttrOfType<DictionaryAttr>(kCudaTargetAttr));
  target.set("cublaslt_version", b.getI64IntegerAttr(cublasLtVersion));
  target.set("matmul_workspace_limit_bytes",
             b.getI64IntegerAttr(cuda::matmulUsableWorkspaceBytes(gpu.smVersion)));
  target.set("matmuls", b.getArrayAttr(rows));
  module->setAttr(kCudaTargetAttr, target.getDictionary(module.getContext()));
}
