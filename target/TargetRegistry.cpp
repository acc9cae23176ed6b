//===- TargetRegistry.cpp - The targets tcc knows -------------------------===//

#include "target/TargetBackend.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tcc;

TargetBackend::~TargetBackend() = default;

StringRef TargetOptions::optimizationName(const Pass &pass) {
  StringRef flag = pass.getArgument();
  flag.consume_front("tcc-");
  return flag;
}

void TargetOptions::addOptimization(OpPassManager &pm, std::unique_ptr<Pass> pass,
                                    bool onByDefault) const {
  StringRef name = optimizationName(*pass);
  if (!onByDefault && !llvm::is_contained(enabledPasses, name))
    return;
  if (!llvm::is_contained(disabledPasses, name))
    pm.addPass(std::move(pass));
}

namespace {
std::vector<std::unique_ptr<TargetBackend>> &registry() {
  static std::vector<std::unique_ptr<TargetBackend>> targets;
  return targets;
}
} // namespace

void mlir::tcc::registerTargetBackend(std::unique_ptr<TargetBackend> target) {
  if (!lookupTargetBackend(target->name()))
    registry().push_back(std::move(target));
}

std::vector<const TargetBackend *> mlir::tcc::registeredTargetBackends() {
  std::vector<const TargetBackend *> targets;
  for (const auto &target : registry())
    targets.push_back(target.get());
  return targets;
}

const TargetBackend *mlir::tcc::lookupTargetBackend(StringRef name) {
  for (const auto &target : registry())
    if (target->name() == name)
      return target.get();
  return nullptr;
}
