//===- CudaTarget.cpp - The cuda target: CUDA C++ on the device runtime ---===//
//
// The whole source (a .cu file) of a cuda model (the skeleton of
// common/SourceSkeleton.h): a cuda::CudaModel
// (runtime/cuda/device/CudaModel.cuh) whose steps gather their batch on the
// device and run the walked rows, each op a launch on the model's stream
// (CudaOps.cpp and its families, ops/). The first training step is recorded
// as a CUDA graph and replayed (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "codegen/common/SourceSkeleton.h"
#include "codegen/cuda/CudaEmitter.h"
#include "codegen/cuda/StepProblems.h"
#include "ir/TccAttrNames.h"
#include "ir/TccRecipe.h"
#include "runtime/cuda/CutlassKernel.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The module's tcc.cuda_target attribute, as the trainer's table: its
/// problem keys index the convolutions (CudaOps.cpp); `table` is its C++.
struct BakedTable {
  std::vector<std::string> convKeys;
  std::string table;
  bool cutlass = false; ///< a CUTLASS kernel replaces a cuDNN engine
};

/// The CUTLASS kernels of the "convs" rows whose source is CUTLASS, as the
/// binders of BakedTarget::cutlass (one per row, null for cuDNN's), or ""
/// when there is none. Fails with an error on a malformed kernel name.
FailureOr<std::string> cutlassBinders(ModuleOp module, ArrayAttr list) {
  std::string rows;
  bool any = false;
  for (Attribute row : list ? list.getValue() : ArrayRef<Attribute>()) {
    auto entry = dyn_cast<DictionaryAttr>(row);
    auto source = entry ? entry.getAs<StringAttr>("source") : StringAttr();
    if (!source || source.getValue() != "cutlass") {
      rows += "    nullptr,\n";
      continue;
    }
    auto plan = entry.getAs<StringAttr>("plan");
    ::tcc::cuda::CutlassKernel kernel;
    if (!plan || !::tcc::cuda::CutlassKernel::fromName(plan.str(), kernel))
      return module->emitError(kCudaTargetAttr)
             << ": a CUTLASS convolution's plan must name a kernel tcc builds, got " << row;
    static const char *const directions[] = {"Forward", "BackwardData", "BackwardFilter"};
    const ::tcc::cuda::CutlassTile &t = kernel.tile;
    rows += std::string("    &tcc::cuda::cutlass_conv::bindForRunner<\n"
                        "        tcc::cuda::cutlass_conv::Kernel<tcc::cuda::ConvDirection::") +
            directions[int(kernel.direction)] + ", tcc::cuda::ConvDataType::" +
            (kernel.dtype == ::tcc::cuda::ConvDataType::BFloat16 ? "BFloat16" : "Float16") +
            ", " + std::to_string(t.m) + ", " + std::to_string(t.n) + ", " +
            std::to_string(t.k) + ", " + std::to_string(t.clusterM) + ">>, // " +
            plan.str() + "\n";
    any = true;
  }
  if (!any)
    return std::string();
  return "// The CUTLASS kernels a tuning file measured faster than cuDNN's engines\n"
         "// (docs/tuning.md, \"CUTLASS\"); the emulated runner computes them all.\n"
         "#ifdef TCC_CUDA_HOST_EMULATION\n"
         "const tcc::cuda::CutlassBind *const kCutlass = nullptr;\n"
         "#else\n"
         "const tcc::cuda::CutlassBind kCutlass[] = {\n" +
         rows + "};\n#endif\n";
}

/// The rows of one list of tcc.cuda_target ("convs" with their "plan",
/// "matmuls" with their "algo") as a C++ array `name` of `type`
/// (runtime/cuda/BakedTarget.h); its problem keys into `keys`. Empty when
/// the list is; fails with an error on a malformed row.
FailureOr<std::string> bakedRows(ModuleOp module, ArrayAttr list, StringRef what,
                                 StringRef choice, StringRef type, StringRef name,
                                 std::vector<std::string> &keys) {
  std::string rows;
  for (Attribute row : list ? list.getValue() : ArrayRef<Attribute>()) {
    auto entry = dyn_cast<DictionaryAttr>(row);
    // A matmul without a measured algorithm is chosen at the first step.
    if (entry && !entry.get(choice) && what == "matmul")
      continue;
    auto key = entry ? entry.getAs<StringAttr>("problem") : StringAttr();
    auto chosen = entry ? entry.getAs<StringAttr>(choice) : StringAttr();
    auto workspace = entry ? entry.getAs<IntegerAttr>("workspace_bytes") : IntegerAttr();
    auto nodes = entry ? entry.getAs<ArrayAttr>("nodes") : ArrayAttr();
    std::vector<std::string> names;
    for (Attribute node : nodes ? nodes.getValue() : ArrayRef<Attribute>())
      if (auto name = dyn_cast<StringAttr>(node))
        names.push_back(name.str());
    if (!key || !chosen || !workspace || !nodes || names.size() != nodes.size())
      return module->emitError(kCudaTargetAttr)
             << ": each " << what << " needs problem, " << choice
             << ", workspace_bytes and nodes (a list of names), got " << row;
    keys.push_back(key.str());
    rows += "    {" + cppStringLiteral(key) + ", " + cppStringLiteral(chosen) + ", " +
            std::to_string(workspace.getInt()) + ", " + cppStringLiteral(quotedNodes(names)) +
            "},\n";
  }
  return rows.empty() ? rows : ("const " + type + " " + name + "[] = {\n").str() + rows + "};\n";
}

/// Without the attribute (tcc-translate on hand-written IR) the step is
/// built for the default GPU and may have no convolution. Fails with an
/// error on a malformed attribute.
FailureOr<BakedTable> bakedTable(ModuleOp module) {
  BakedTable baked;
  auto target = module->getAttrOfType<DictionaryAttr>(kCudaTargetAttr);
  auto get = [&](StringRef name) { return target ? target.get(name) : Attribute(); };
  auto gpu = dyn_cast_or_null<StringAttr>(get("gpu"));
  auto sm = dyn_cast_or_null<IntegerAttr>(get("sm"));
  auto version = dyn_cast_or_null<IntegerAttr>(get("cudnn_version"));
  auto fallback = dyn_cast_or_null<BoolAttr>(get("allow_fallback"));
  auto cublasLt = dyn_cast_or_null<IntegerAttr>(get("cublaslt_version"));
  std::vector<std::string> matmulKeys; // the matmuls a tuning file measured
  FailureOr<std::string> convs =
      bakedRows(module, dyn_cast_or_null<ArrayAttr>(get("convs")), "conv", "plan",
                "tcc::cuda::BakedConv", "kConvs", baked.convKeys);
  FailureOr<std::string> matmuls =
      bakedRows(module, dyn_cast_or_null<ArrayAttr>(get("matmuls")), "matmul", "algo",
                "tcc::cuda::BakedMatmul", "kMatmuls", matmulKeys);
  FailureOr<std::string> cutlass =
      cutlassBinders(module, dyn_cast_or_null<ArrayAttr>(get("convs")));
  if (failed(convs) || failed(matmuls) || failed(cutlass))
    return failure();
  baked.cutlass = !cutlass->empty();
  baked.table = *convs + *matmuls + *cutlass +
                "// The GPU, the cuDNN, the convolution engines and the measured matmul\n"
                "// algorithms this trainer was built for.\n"
                "const tcc::cuda::BakedTarget kTarget = {" +
                cppStringLiteral(gpu ? gpu.getValue() : "h100") + ", " +
                std::to_string(sm ? sm.getInt() : 90) + ", " +
                std::to_string(version ? version.getInt() : 0) + ", " +
                (fallback && fallback.getValue() ? "true" : "false") + ", " +
                (convs->empty() ? "nullptr" : "kConvs") + ", " +
                std::to_string(baked.convKeys.size()) + ", " +
                std::to_string(cublasLt ? cublasLt.getInt() : 0) + ", " +
                (matmulKeys.empty() ? "nullptr" : "kMatmuls") + ", " +
                std::to_string(matmulKeys.size()) + (baked.cutlass ? ", kCutlass" : "") +
                "};\n\n";
  return baked;
}

class CudaTarget final : public TargetEmitter {
public:
  explicit CudaTarget(ArrayRef<std::string> convKeys)
      : TargetEmitter({/*kernels=*/"cuda::", /*stream=*/"args.stream, ", /*stepOps=*/"cuda::"}),
        convKeys(convKeys) {}

  LogicalResult emitOp(Operation *op, StepEmitter &names) override {
    return emitCudaOp(op, names, convKeys);
  }
  /// Kernels read constants from device memory: each is a __device__
  /// array of the file (`constants`), its address taken in the step.
  /// One per distinct value, so that the ops reading it share a function.
  std::string scalarConstant(StringRef type, StringRef name, StringRef value) override {
    auto [it, inserted] = symbols.try_emplace((type + " " + value).str());
    if (inserted) {
      it->second = "tccConstant" + std::to_string(symbols.size() - 1);
      constants += ("__device__ " + type + " " + it->second + "[1] = {" + value + "};\n").str();
    }
    return (type + " *" + name + " = cuda::symbol_address(" + it->second + ");").str();
  }
  std::string fileScope() const override { return constants + "\n"; }

  std::string constants; ///< the __device__ definitions of the constants
  llvm::StringMap<std::string> symbols; ///< by type and value
  ArrayRef<std::string> convKeys;
};

/// A CudaModel records the steps it runs (StepRunner::Runtime) on its
/// stream, with its matmul and convolution runners, for the baked target.
SourceHooks cudaSource(const BakedTable &baked) {
  SourceHooks hooks;
  hooks.target = "cuda";
  hooks.memory = ::tcc::rt::MemoryKind::Device;
  hooks.headers = {"runtime/cuda/device/Attention.cuh",
                   "runtime/cuda/device/Chunk.cuh",
                   "runtime/cuda/device/Collectives.cuh",
                   "runtime/cuda/device/ConvStatistics.cuh",
                   "runtime/cuda/device/CudaModel.cuh",
                   "runtime/cuda/device/Embedding.cuh",
                   "runtime/cuda/device/MultiTensor.cuh",
                   "runtime/cuda/device/Norm.cuh",
                   "runtime/cuda/device/Pool.cuh",
                   "runtime/cuda/device/Softmax.cuh",
                   "runtime/cuda/device/StepOps.cuh",
                   "runtime/cuda/device/SyncNorm.cuh",
                   "runtime/cuda/device/TokenLoss.cuh",
                   "runtime/kernels/Activation.h"};
  // Only a step that runs CUTLASS kernels parses CUTLASS (tens of seconds
  // of nvcc).
  if (baked.cutlass)
    hooks.headers.push_back("runtime/cuda/device/CutlassSteps.cuh");
  hooks.aliases = "namespace cuda = tcc::rt::cuda;\n";
  hooks.declarations = baked.table;
  hooks.modelBase = "cuda::CudaModel";
  hooks.runner = StepRunner::Runtime;
  hooks.publicMembers =
      "  const tcc::cuda::BakedTarget &target() const override { return kTarget; }\n";
  hooks.stepArgsFields =
      "  cudaStream_t stream;\n  cuda::Matmul *matmul;\n  tcc::cuda::ConvRunner *convs;\n"
      "  cuda::SideStream *buckets;\n";
  hooks.stepArgsValues = "stream, &matmul, &convs, &buckets, ";
  hooks.gatherArgs = "stream, ";
  return hooks;
}

} // namespace

LogicalResult mlir::tcc::emitCudaSource(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<BakedTable> baked = bakedTable(module);
  if (failed(baked))
    return failure();
  CudaTarget target(baked->convKeys);
  return emitStepSource(module, cudaSource(*baked), target, os);
}

LogicalResult mlir::tcc::emitCudaOps(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<BakedTable> baked = bakedTable(module);
  if (failed(baked))
    return failure();
  CudaTarget target(baked->convKeys);
  std::string ops;
  llvm::raw_string_ostream opsOs(ops);
  if (failed(emitOpsOneByOne(module, target, opsOs)))
    return failure();
  os << baked->table << target.constants << ops;
  return success();
}
