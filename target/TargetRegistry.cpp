//===- TargetRegistry.cpp - The targets tcc knows -------------------------===//

#include "target/TargetBackend.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tcc;

TargetBackend::~TargetBackend() = default;

bool TargetOptions::enabled(StringRef name) const {
  return !llvm::is_contained(disabledPasses, name);
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
