//===- TargetBackend.h - What a target adds to the compiler -----*- C++ -*-===//
//
// A target (cpu, cuda) is a backend object, as IREE's TargetBackend: it adds
// its passes at fixed points of the compile pipeline (passes/InitAll.cpp),
// answers the pipeline's per-op questions from what ops declare (which
// 16-bit kinds it runs, which library epilogues it fuses), prints the
// planned step as source, and says how that source becomes a trainer. The
// driver and the pipeline know targets only through this interface and the
// registry below; each target lives in its own folder (codegen/cpu,
// codegen/cuda) and is one row of registerAllTargets (codegen/Targets.h).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TARGET_TARGETBACKEND_H
#define TCC_TARGET_TARGETBACKEND_H

#include "target/FusionPattern.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class OpPassManager;
class Pass;
namespace tcc {

/// The settings a target's passes read: the compile pipeline's options
/// (tcc compile's command line, or tcc-opt -tcc-compile-pipeline='...').
struct TargetOptions {
  std::vector<std::string> disabledPasses; ///< --disable-pass names
  std::string gpu;                         ///< --gpu (empty: the target's default)
  std::string tuningDb;                    ///< --tuning-db (empty: none)
  bool ignoreTuningMismatch = false;
  bool allowFallback = false;
  /// --bucket-size: the bytes of one bucket of gradients a distributed step
  /// reduces together (tcc-bucket-collectives; 0: the pass's default).
  int64_t bucketBytes = 0;
  /// --enable-pass names: optimization passes a target leaves out unless named.
  std::vector<std::string> enabledPasses;

  /// The name --disable-pass gives an optimization pass: its flag (in
  /// Passes.td) without "tcc-".
  static StringRef optimizationName(const Pass &pass);
  /// Adds the optimization pass `pass` to `pm` unless --disable-pass names
  /// it; one not `onByDefault` only where --enable-pass names it.
  void addOptimization(OpPassManager &pm, std::unique_ptr<Pass> pass,
                       bool onByDefault = true) const;
};

/// What the target's libraries fuse into their calls (tcc-fusion's options).
/// The grouping by the kinds ops declare is the same on every target.
struct FusionCapabilities {
  /// The library epilogues its calls apply, in the order tcc-fusion tries
  /// them: a table with static storage (FusionPattern.h).
  ArrayRef<FusionPattern> epiloguePatterns;
  bool multiTensorCasts = false; ///< many small casts in one launch
};

/// How a target's generated source becomes a trainer: the compiler, its
/// flags, and what to link after the source.
struct TrainerBuild {
  std::string compiler;
  std::vector<std::string> flags, libraries;
  /// Model-independent sources every trainer links, compiled with `flags`
  /// once and kept in tcc's object cache (tools/tcc/ObjectCache.h).
  std::vector<std::string> sharedSources;
  std::string suffix;  ///< of the source file: cpp, cu
  std::string summary; ///< for the progress line
};

/// What a trainer is built for: the command line's --march and --gpu.
struct TrainerBuildOptions {
  std::string march;
  std::string gpu;
  int64_t ranks = 1; ///< train.distributed.ranks: the communicator to link
};

/// What --emit=source-tree's CMake project gets from the target: values
/// for its templates (@KEY@) and header trees it copies under
/// third_party/include (tools/tcc/source-tree).
struct SourceTreeParts {
  std::string suffix; ///< of the step's source file
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> headerTrees;
  std::string readmeSection; ///< a template appended to README.md, or none
};

/// Whether a target's trainers run on this machine, and why (for the
/// default target and the line that names it).
struct Availability {
  bool runsHere = false;
  std::string why;
};

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// As --target spells it, and one line for --help.
  virtual StringRef name() const = 0;
  virtual StringRef summary() const = 0;

  /// The command-line options that apply to the target.
  struct Takes {
    bool march = false;         ///< --march (the C++ compiler's)
    bool gpu = false;           ///< --gpu (the GPU the step is planned for)
    bool tuningDb = false;      ///< --tuning-db (measured algorithm choices)
    bool allowFallback = false; ///< --allow-fallback
  };
  virtual Takes takes() const = 0;

  //===--------------------------------------------------------------------===//
  // The pipeline, in the order it asks (docs/targets.md).
  //===--------------------------------------------------------------------===//

  /// On the forward graph, after tcc-precision.
  virtual void addForwardPasses(OpPassManager &pm, const TargetOptions &options) const {}
  /// The 16-bit kinds of ops (declared in ODS: "update", "library",
  /// "exact"; tcc-widen-16bit) the target computes on 16-bit tensors.
  virtual std::vector<std::string> sixteenBitKinds() const = 0;
  /// After tcc-widen-16bit, before fusion: physical layout.
  virtual void addLayoutPasses(OpPassManager &pm, const TargetOptions &options) const {}
  virtual FusionCapabilities fusion() const = 0;
  /// After fusion, before recompute and the memory plan: the library
  /// algorithms of the fused step and the workspaces they need.
  virtual void addSelectionPasses(OpPassManager &pm, const TargetOptions &options) const {}
  /// The optimization passes (as --disable-pass names them) it adds before
  /// tcc-bucket-collectives, and those addSelectionPasses adds.
  virtual ArrayRef<StringRef> optimizationPasses() const { return {}; }
  virtual ArrayRef<StringRef> selectionOptimizationPasses() const { return {}; }
  /// Those of them it adds only where --enable-pass names them.
  virtual ArrayRef<StringRef> offByDefaultPasses() const { return {}; }

  //===--------------------------------------------------------------------===//
  // Code and trainers.
  //===--------------------------------------------------------------------===//

  /// Prints the source of a planned module.
  virtual LogicalResult emitSource(ModuleOp module, llvm::raw_ostream &os) const = 0;
  /// Prints what the target makes of each op (tcc-translate --emit-NAME).
  virtual LogicalResult emitOps(ModuleOp module, llvm::raw_ostream &os) const = 0;
  /// The library choices of a planned module as a table (the cuda target's
  /// cuDNN engines and cuBLASLt algorithms, format tcc-conv-plans/1);
  /// false where the target makes none.
  virtual bool libraryPlans(ModuleOp planned, nlohmann::json &table) const { return false; }
  /// Whether it emulates 16-bit numbers (each rounded as a GPU rounds it)
  /// rather than computing in them.
  virtual bool emulatesSixteenBit() const = 0;

  virtual Availability availability() const = 0;
  /// Chosen by default over targets listed before it, where it runs here.
  virtual bool preferredWhereAvailable() const { return false; }
  /// How its source becomes a trainer; false with `error` where this tcc
  /// cannot build one.
  virtual bool trainerBuild(const TrainerBuildOptions &options, TrainerBuild &build,
                            std::string &error) const = 0;
  virtual SourceTreeParts sourceTree(const TrainerBuildOptions &options) const = 0;
};

/// Adds a target; its name must be new. Called by registerAllTargets.
void registerTargetBackend(std::unique_ptr<TargetBackend> target);
/// Every registered target, in registration order (--help's).
std::vector<const TargetBackend *> registeredTargetBackends();
/// The target named `name`, or null.
const TargetBackend *lookupTargetBackend(StringRef name);

} // namespace tcc
} // namespace mlir

#endif // TCC_TARGET_TARGETBACKEND_H
