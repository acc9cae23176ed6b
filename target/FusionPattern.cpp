//===- FusionPattern.cpp - The fusion patterns the targets declare --------===//

#include "target/FusionPattern.h"
#include "target/TargetBackend.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tcc;

const FusionPattern *mlir::tcc::lookupFusionPattern(StringRef name, std::string &error) {
  const FusionPattern *found = nullptr;
  StringRef foundIn;
  std::vector<std::string> known;
  for (const TargetBackend *target : registeredTargetBackends())
    for (const FusionPattern &pattern : target->fusion().epiloguePatterns) {
      if (!llvm::is_contained(known, pattern.name))
        known.push_back(pattern.name.str());
      if (pattern.name != name)
        continue;
      // A target may list another's pattern (the toy target, the cpu
      // target's table); two different ones under one name are ambiguous.
      if (found && (found->match != pattern.match || found->groupKind != pattern.groupKind ||
                    found->anchorKind != pattern.anchorKind)) {
        error = ("fusion pattern '" + name + "' is declared differently by the " + foundIn +
                 " and the " + target->name() + " targets")
                    .str();
        return nullptr;
      }
      if (!found) {
        found = &pattern;
        foundIn = target->name();
      }
    }
  if (!found)
    error = ("no target declares the fusion pattern '" + name + "'; expected one of: " +
             (known.empty() ? std::string("(none)") : llvm::join(known, ", ")))
                .str();
  return found;
}
