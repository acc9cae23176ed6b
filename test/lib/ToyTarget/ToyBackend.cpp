//===- ToyBackend.cpp - A third target, for the test of the registry ------===//
//
// Proves that a target is a folder and a registry row: "toy" reuses the cpu
// target's emitters and trainer build, and answers one pipeline question
// differently: it runs no op on 16-bit tensors (the optimizer updates of
// pure 16-bit training too run on f32 copies). tcc-toy registers it beside
// the real targets (test/tools/toy-target.test).
//
//===----------------------------------------------------------------------===//

#include "target/TargetBackend.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

class ToyBackend final : public TargetBackend {
public:
  StringRef name() const override { return "toy"; }
  StringRef summary() const override {
    return "a test target: the cpu target's code, every 16-bit op on f32 copies";
  }
  Takes takes() const override { return cpu().takes(); }
  std::vector<std::string> sixteenBitKinds() const override { return {}; }
  FusionCapabilities fusion() const override { return cpu().fusion(); }
  LogicalResult emitSource(ModuleOp module, llvm::raw_ostream &os) const override {
    return cpu().emitSource(module, os);
  }
  LogicalResult emitOps(ModuleOp module, llvm::raw_ostream &os) const override {
    return cpu().emitOps(module, os);
  }
  bool emulatesSixteenBit() const override { return true; }
  Availability availability() const override { return {false, "a test target"}; }
  bool trainerBuild(const TrainerBuildOptions &options, TrainerBuild &build,
                    std::string &error) const override {
    return cpu().trainerBuild(options, build, error);
  }
  SourceTreeParts sourceTree(const TrainerBuildOptions &options) const override {
    return cpu().sourceTree(options);
  }

private:
  static const TargetBackend &cpu() { return *lookupTargetBackend("cpu"); }
};

} // namespace

namespace mlir::tcc::test {
void registerToyTarget() { registerTargetBackend(std::make_unique<ToyBackend>()); }
} // namespace mlir::tcc::test
