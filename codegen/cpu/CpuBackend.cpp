//===- CpuBackend.cpp - The cpu target: C++ with OpenMP -------------------===//
//
// The reference and CI target: every op runs on f32 (16-bit numbers are
// emulated, each rounded as a GPU rounds it), no library epilogues, no
// passes of its own; the trainer is built by the C++ compiler tcc was built
// with, for --march.
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "codegen/ToolchainPaths.h"
#include "target/TargetBackend.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

class CpuBackend final : public TargetBackend {
public:
  StringRef name() const override { return "cpu"; }
  StringRef summary() const override {
    return "x86-64 CPUs: C++ with OpenMP, the reference and CI target";
  }
  Takes takes() const override {
    Takes takes;
    takes.march = true;
    return takes;
  }
  /// The optimizer, EMA and Lookahead updates of 16-bit state (pure 16-bit
  /// training) compute in double from the stored values and round where
  /// they store (runtime/common/Float16.h, half::F16): the same bits as on
  /// f32 copies, without the copies.
  std::vector<std::string> sixteenBitKinds() const override { return {"update"}; }
  /// The cpu kernels take no epilogue, and a cpu loop costs by its size, not
  /// per launch.
  FusionCapabilities fusion() const override { return {}; }

  LogicalResult emitSource(ModuleOp module, llvm::raw_ostream &os) const override {
    return emitCpuSource(module, os);
  }
  LogicalResult emitOps(ModuleOp module, llvm::raw_ostream &os) const override {
    return emitCpuOps(module, os);
  }
  bool emulatesSixteenBit() const override { return true; }

  Availability availability() const override {
    return {true, "builds one for this machine's CPU"};
  }
  bool trainerBuild(const TrainerBuildOptions &options, TrainerBuild &build,
                    std::string &error) const override {
    build.compiler = TCC_CXX;
    build.suffix = "cpp";
    build.flags = {"-std=c++17", "-O3", "-march=" + options.march, "-fopenmp",
                   "-I" TCC_RUNTIME_INCLUDE_DIR};
    // The kernels every step calls, compiled for this -march once
    // (runtime/cpu/KernelInstances.h).
    build.sharedSources = {TCC_RUNTIME_INCLUDE_DIR "/runtime/cpu/KernelInstances.cpp",
                           TCC_RUNTIME_INCLUDE_DIR "/runtime/cpu/Batch.cpp"};
    for (StringRef lib : llvm::split(StringRef(TCC_RUNTIME_LIBS), ';'))
      build.libraries.push_back(lib.str());
    // The communicator: MPI for several ranks (docs/distributed.md).
    if (options.ranks > 1) {
#ifdef TCC_COMM_MPI_LIBS
      for (StringRef lib : llvm::split(StringRef(TCC_COMM_MPI_LIBS), ';'))
        build.libraries.push_back(lib.str());
#else
      error = "a trainer of " + std::to_string(options.ranks) +
              " ranks needs MPI, and this tcc was built without it: install Open MPI "
              "(apt-get install libopenmpi-dev openmpi-bin, or scripts/setup.sh) and rebuild "
              "tcc, or compile for one rank";
      return false;
#endif
    } else {
      build.libraries.push_back(TCC_COMM_ONE_PROCESS_LIB);
    }
    build.libraries.push_back("-lz");
    build.summary = std::string(TCC_CXX) + " -O3 -march=" + options.march;
    return true;
  }
  SourceTreeParts sourceTree(const TrainerBuildOptions &options) const override {
    return {"cpp", {{"MARCH", options.march}}, {}, {}};
  }
};

} // namespace

void mlir::tcc::registerCpuTarget() { registerTargetBackend(std::make_unique<CpuBackend>()); }
