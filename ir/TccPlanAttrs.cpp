//===- TccPlanAttrs.cpp - The memory plan as attributes -------------------===//
//
// The plan's attributes alone (their verifiers), then against the IR they
// are on (TccDialect::verifyOperationAttribute): a hand-written or stale
// plan fails to verify instead of making a code generator write out of
// bounds.
//
//===----------------------------------------------------------------------===//

#include "ir/TccPlan.h"

#include "ir/TccAttrNames.h"
#include "ir/TccDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tcc;

FailureOr<SmallVector<int64_t>> mlir::tcc::parseI64ArrayParam(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(values.emplace_back());
      }))
    return failure();
  return values;
}

int64_t mlir::tcc::tensorBytes(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() * std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

int64_t mlir::tcc::layOutWholeState(FunctionOpInterface train, int64_t stateBytes,
                                    SmallVectorImpl<int64_t> &offsets) {
  int64_t end = stateBytes;
  offsets.clear();
  for (BlockArgument arg : train.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (!train.getArgAttr(i, kStateAttr))
      continue;
    auto shardOf = train.getArgAttrOfType<DenseI64ArrayAttr>(i, kShardOfAttr);
    // What the evaluation reads: the parameters and their EMA copies.
    auto stateKind = train.getArgAttrOfType<StringAttr>(i, kKindAttr);
    if (!shardOf || !stateKind ||
        (stateKind.getValue() != kind::kParam && stateKind.getValue() != kind::kEma)) {
      offsets.push_back(-1);
      continue;
    }
    end = alignToPlan(end);
    offsets.push_back(end);
    end += tensorBytes(RankedTensorType::get(
        shardOf.asArrayRef(), cast<ShapedType>(arg.getType()).getElementType()));
  }
  return end;
}

//===----------------------------------------------------------------------===//
// Accessors
//===----------------------------------------------------------------------===//

StateArenaAttr mlir::tcc::getStateArena(Operation *module) {
  return module->getAttrOfType<StateArenaAttr>(kStateArenaAttr);
}
void mlir::tcc::setStateArena(Operation *module, StateArenaAttr arena) {
  module->setAttr(kStateArenaAttr, arena);
}
ScratchArenaAttr mlir::tcc::getScratchArena(Operation *fn) {
  return fn->getAttrOfType<ScratchArenaAttr>(kScratchArenaAttr);
}
void mlir::tcc::setScratchArena(Operation *fn, ScratchArenaAttr arena) {
  fn->setAttr(kScratchArenaAttr, arena);
}
PlacementAttr mlir::tcc::getPlacement(Operation *op) {
  return op->getAttrOfType<PlacementAttr>(kPlacementAttr);
}
void mlir::tcc::setPlacement(Operation *op, PlacementAttr placement) {
  op->setAttr(kPlacementAttr, placement);
}
WorkspaceAttr mlir::tcc::getWorkspace(Operation *op) {
  return op->getAttrOfType<WorkspaceAttr>(kWorkspaceAttr);
}
void mlir::tcc::setWorkspace(Operation *op, WorkspaceAttr workspace) {
  op->setAttr(kWorkspaceAttr, workspace);
}

//===----------------------------------------------------------------------===//
// Verifiers: what the planner writes (passes/MemoryPlan.cpp)
//===----------------------------------------------------------------------===//

namespace {
using EmitError = function_ref<InFlightDiagnostic()>;

bool aligned(int64_t offset) { return offset >= 0 && offset % kPlanAlignment == 0; }
} // namespace

LogicalResult StateArenaAttr::verify(EmitError emitError, int64_t bytes,
                                     ArrayRef<int64_t> offsets) {
  if (!aligned(bytes))
    return emitError() << "bytes must be a non-negative multiple of " << kPlanAlignment
                       << ", got " << bytes;
  for (auto [slot, offset] : llvm::enumerate(offsets)) {
    if (!aligned(offset))
      return emitError() << "offset of state slot " << slot << " must be a non-negative multiple of "
                         << kPlanAlignment << ", got " << offset;
    if (slot > 0 && offset <= offsets[slot - 1])
      return emitError() << "state slot " << slot << " at " << offset
                         << " must start after slot " << slot - 1 << " at " << offsets[slot - 1];
    if (offset >= bytes)
      return emitError() << "state slot " << slot << " at " << offset
                         << " is outside the arena of " << bytes << " bytes";
  }
  return success();
}

LogicalResult ScratchArenaAttr::verify(EmitError emitError, int64_t bytes) {
  if (!aligned(bytes))
    return emitError() << "bytes must be a non-negative multiple of " << kPlanAlignment
                       << ", got " << bytes;
  return success();
}

LogicalResult PlacementAttr::verify(EmitError emitError, ArrayRef<int64_t> scratch,
                                    ArrayRef<int64_t> state) {
  if (!state.empty() && state.size() != scratch.size())
    return emitError() << "state must have an entry per result as scratch has (" << scratch.size()
                       << "), got " << state.size();
  for (auto [r, offset] : llvm::enumerate(scratch)) {
    int64_t slot = state.empty() ? -1 : state[r];
    if (offset != -1 && !aligned(offset))
      return emitError() << "scratch offset of result " << r
                         << " must be -1 or a non-negative multiple of " << kPlanAlignment
                         << ", got " << offset;
    if (slot < -1)
      return emitError() << "state slot of result " << r << " must be -1 or a slot, got "
                         << slot;
    if ((offset >= 0) == (slot >= 0))
      return emitError() << "result " << r
                         << " must have one place: a scratch offset or a state slot";
  }
  return success();
}

LogicalResult WorkspaceAttr::verify(EmitError emitError, int64_t bytes,
                                    std::optional<int64_t> offset) {
  if (bytes < 0 || bytes > kMaxWorkspaceBytes)
    return emitError() << "bytes must be in [0, 2^48], got " << bytes;
  if (offset && !aligned(*offset))
    return emitError() << "offset must be a non-negative multiple of " << kPlanAlignment
                       << ", got " << *offset;
  return success();
}

//===----------------------------------------------------------------------===//
// The plan against the IR
//===----------------------------------------------------------------------===//

namespace {

/// The scratch arena of the function `op` is in (the nearest ancestor that
/// has one), or null.
ScratchArenaAttr enclosingScratch(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent; parent = parent->getParentOp())
    if (ScratchArenaAttr arena = getScratchArena(parent))
      return arena;
  return {};
}

/// The state arena against @train_step's `tcc.state` arguments.
LogicalResult verifyStateArena(Operation *module, StateArenaAttr arena) {
  if (!module->hasTrait<OpTrait::SymbolTable>())
    return module->emitOpError("'") << kStateArenaAttr << "' belongs on the module";
  auto fn = dyn_cast_or_null<FunctionOpInterface>(
      SymbolTable::lookupSymbolIn(module, "train_step"));
  if (!fn || fn.isExternal())
    return success();
  size_t slot = 0;
  for (BlockArgument arg : fn.getArguments()) {
    if (!fn.getArgAttr(arg.getArgNumber(), kStateAttr))
      continue;
    if (slot >= arena.getOffsets().size())
      break;
    int64_t bytes = tensorBytes(arg.getType());
    if (bytes > arena.getSlotBytes(slot))
      return module->emitOpError("'")
             << kStateArenaAttr << "' gives state slot " << slot << " " << arena.getSlotBytes(slot)
             << " bytes at " << arena.getOffsets()[slot] << ", but @train_step's argument "
             << arg.getArgNumber() << " takes " << bytes;
    ++slot;
  }
  size_t slots = 0;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    slots += fn.getArgAttr(i, kStateAttr) ? 1 : 0;
  if (slots != arena.getOffsets().size())
    return module->emitOpError("'")
           << kStateArenaAttr << "' has " << arena.getOffsets().size()
           << " offsets for the " << slots << " state arguments of @train_step";
  return success();
}

LogicalResult verifyPlacement(Operation *op, PlacementAttr placement) {
  if (placement.getScratch().size() != op->getNumResults())
    return op->emitOpError("'") << kPlacementAttr << "' must have an entry per result ("
                                << op->getNumResults() << "), got "
                                << placement.getScratch().size();
  ScratchArenaAttr scratch = enclosingScratch(op);
  if (!scratch)
    return op->emitOpError("'") << kPlacementAttr
                                << "' needs the function's scratch arena ('"
                                << kScratchArenaAttr << "')";
  StateArenaAttr state;
  if (auto module = op->getParentOfType<ModuleOp>())
    state = getStateArena(module);
  for (OpResult result : op->getResults()) {
    auto shaped = dyn_cast<ShapedType>(result.getType());
    if (!shaped || !shaped.hasStaticShape())
      continue;
    unsigned r = result.getResultNumber();
    int64_t bytes = tensorBytes(shaped), offset = placement.getScratchOffset(r),
            slot = placement.getStateSlot(r);
    if (offset >= 0 && offset + bytes > scratch.getBytes())
      return op->emitOpError("result ")
             << r << " (" << bytes << " bytes at " << offset
             << ") ends past the scratch arena of " << scratch.getBytes() << " bytes";
    if (slot < 0)
      continue;
    if (!state || slot >= static_cast<int64_t>(state.getOffsets().size()))
      return op->emitOpError("result ")
             << r << " is in state slot " << slot << ", which the module's '"
             << kStateArenaAttr << "' does not have";
    if (bytes > state.getSlotBytes(slot))
      return op->emitOpError("result ") << r << " (" << bytes << " bytes) does not fit state slot "
                                        << slot << " (" << state.getSlotBytes(slot) << " bytes)";
  }
  return success();
}

LogicalResult verifyWorkspace(Operation *op, WorkspaceAttr workspace) {
  ScratchArenaAttr scratch = enclosingScratch(op);
  std::optional<int64_t> offset = workspace.getOffset();
  if (!offset) {
    // A planned function places every workspace it runs.
    if (scratch && workspace.getBytes() > 0)
      return op->emitOpError("'") << kWorkspaceAttr << "' of " << workspace.getBytes()
                                  << " bytes has no offset in the planned function";
    return success();
  }
  if (!scratch)
    return op->emitOpError("'") << kWorkspaceAttr
                                << "' has an offset but the function has no scratch arena ('"
                                << kScratchArenaAttr << "')";
  if (*offset + workspace.getBytes() > scratch.getBytes())
    return op->emitOpError("workspace (")
           << workspace.getBytes() << " bytes at " << *offset
           << ") ends past the scratch arena of " << scratch.getBytes() << " bytes";
  return success();
}

/// Fails unless `attr` holds an AttrT.
template <typename AttrT>
LogicalResult expect(Operation *op, NamedAttribute attr, StringRef spelling) {
  if (isa<AttrT>(attr.getValue()))
    return success();
  return op->emitOpError("'") << attr.getName().getValue() << "' must be a #tcc." << spelling
                              << ", got " << attr.getValue();
}

} // namespace

LogicalResult TccDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kStateArenaAttr)
    return failure(failed(expect<StateArenaAttr>(op, attr, "state_arena")) ||
                   failed(verifyStateArena(op, cast<StateArenaAttr>(attr.getValue()))));
  if (name == kScratchArenaAttr)
    return expect<ScratchArenaAttr>(op, attr, "scratch_arena");
  if (name == kPlacementAttr)
    return failure(failed(expect<PlacementAttr>(op, attr, "placement")) ||
                   failed(verifyPlacement(op, cast<PlacementAttr>(attr.getValue()))));
  if (name == kWorkspaceAttr)
    return failure(failed(expect<WorkspaceAttr>(op, attr, "workspace")) ||
                   failed(verifyWorkspace(op, cast<WorkspaceAttr>(attr.getValue()))));
  return success();
}

Operation *mlir::tcc::sideStreamJoin(Operation *op) {
  Block *block = op->getBlock();
  Operation *join = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *reader = block->findAncestorOpInBlock(*user);
    if (reader && (!join || reader->isBeforeInBlock(join)))
      join = reader;
  }
  return join;
}
