//===- FusionPattern.h - A library epilogue a target fuses ------*- C++ -*-===//
//
// tcc-fusion groups ops by the kinds they declare (FusionOpInterface). What
// a target's libraries compute in one call beyond that (cuBLASLt's matmul
// epilogues, cuDNN's conv epilogues) the target lists as a table of
// patterns, as TVM's FuseOpsByPattern takes one table per library: each
// names the group it forms, the kind of op it anchors on, and a matcher for
// the ops after the anchor. tcc-fusion's `epilogue-patterns` option names
// the patterns it tries, so that tcc-opt can turn on any target's.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TARGET_FUSIONPATTERN_H
#define TCC_TARGET_FUSIONPATTERN_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
class Operation;
namespace tcc {

/// How an op fuses with its neighbours (ir/TccInterfaces.h); declared here
/// so that the target interface does not pull in the dialect's.
enum class FusionKind;

/// One library epilogue: an anchor op and what its library call applies
/// to the anchor's result.
struct FusionPattern {
  /// As `epilogue-patterns` names it ("LIBRARY-WHAT"); unique among the
  /// registered targets.
  llvm::StringRef name;
  /// The tcc.fusion_group kind the group gets (FusionGroupOp::kConvEpilogue,
  /// ...); the code generators emit it as that library call.
  llvm::StringRef groupKind;
  /// The fusion kind the anchor declares: the matcher sees only such ops.
  FusionKind anchorKind;
  /// Fills `members` with the anchor and the ops its library call applies
  /// after it, in order, and returns true; returns false, `members` left
  /// empty, where the anchor has no such ops. `free(op)`: `op` is in the
  /// anchor's block and no group has taken it.
  bool (*match)(Operation *anchor, llvm::function_ref<bool(Operation *)> free,
                llvm::SetVector<Operation *> &members);
};

/// The pattern a registered target declares under `name`, or null with
/// `error` set: no target declares it, or two declare different patterns
/// under it.
const FusionPattern *lookupFusionPattern(llvm::StringRef name, std::string &error);

} // namespace tcc
} // namespace mlir

#endif // TCC_TARGET_FUSIONPATTERN_H
