//===- Widen16Bit.cpp - f32 arithmetic on 16-bit storage ------------------===//
//
// See Passes.td and docs/passes.md. Under mixed precision the step stores
// 16-bit tensors; a target computes the kinds of op its kernels take on
// them directly (`keep`, the kinds ops declare in ODS) and the others in
// f32. This pass makes each other op
// that reads or writes a 16-bit tensor run on f32 copies: its 16-bit
// operands are cast up right before it and its 16-bit results cast down
// right after it. The copies live for that op only, and the memory plan
// counts them. Values keep the precision tcc-precision gave them, so every
// rounding to 16 bits happens where it would on a target with 16-bit
// kernels: when a value is stored.
//
//===----------------------------------------------------------------------===//

#include "passes/PassReport.h"
#include "passes/Passes.h"

#include "ir/TccOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_WIDEN16BIT
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

bool isSixteenBitFloat(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType()) &&
         tensor.getElementType().getIntOrFloatBitWidth() == 16;
}

/// Runs `op` on f32 copies of its 16-bit tensors; returns the casts added.
FailureOr<int64_t> widen(Operation *op) {
  bool reads = llvm::any_of(op->getOperandTypes(), isSixteenBitFloat);
  bool writes = llvm::any_of(op->getResultTypes(), isSixteenBitFloat);
  if (!reads && !writes)
    return 0;
  int64_t casts = 0;
  OpBuilder b(op);
  Type f32 = b.getF32Type();
  for (OpOperand &operand : op->getOpOperands())
    if (isSixteenBitFloat(operand.get().getType())) {
      operand.set(b.create<CastOp>(op->getLoc(), operand.get(), TypeAttr::get(f32)));
      ++casts;
    }
  // Without type inference (the sharded state's collectives) each 16-bit
  // result becomes f32 of its shape, if the op's verifier accepts that.
  SmallVector<Type> types;
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (infer) {
    if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                      op->getAttrDictionary(), op->getPropertiesStorage(),
                                      op->getRegions(), types)))
      return failure();
  } else {
    for (Type type : op->getResultTypes())
      types.push_back(isSixteenBitFloat(type) ? cast<RankedTensorType>(type).clone(f32) : type);
  }
  b.setInsertionPointAfter(op);
  for (auto [result, type] : llvm::zip(op->getResults(), types)) {
    Type stored = result.getType();
    result.setType(type);
    if (stored == type)
      continue;
    auto narrow = b.create<CastOp>(
        op->getLoc(), result, TypeAttr::get(cast<RankedTensorType>(stored).getElementType()));
    result.replaceAllUsesExcept(narrow, narrow);
    ++casts;
  }
  if (!infer && failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    op->emitOpError("has 16-bit tensors and cannot run on f32 copies");
    return failure();
  }
  return casts;
}

/// Whether `op` declares one of the 16-bit `kinds`, or moves bits (kept on
/// every target).
bool declaresKind(Operation *op, ArrayRef<std::string> kinds) {
  auto is = [&](StringRef kind) { return llvm::is_contained(kinds, kind); };
  return op->hasTrait<tcc::OpTrait::SixteenBitMove>() ||
         (is("update") && op->hasTrait<tcc::OpTrait::SixteenBitUpdate>()) ||
         (is("library") && op->hasTrait<tcc::OpTrait::SixteenBitLibrary>()) ||
         (is("exact") && op->hasTrait<tcc::OpTrait::SixteenBitExact>());
}

struct Widen16BitPass : mlir::tcc::impl::Widen16BitBase<Widen16BitPass> {
  using Widen16BitBase::Widen16BitBase;

  LogicalResult initialize(MLIRContext *context) override {
    for (const std::string &kind : keep)
      if (kind != "update" && kind != "library" && kind != "exact")
        return emitError(UnknownLoc::get(context))
               << "tcc-widen-16bit: keep=" << kind
               << " is not a kind of 16-bit op; expected update, library or exact";
    return success();
  }

  void runOnOperation() override {
    int64_t casts = 0, ops = 0;
    WalkResult walk = getOperation().walk([&](Operation *op) {
      if (isa<CastOp, FusionGroupOp, MicroBatchesOp, YieldOp, func::ReturnOp, func::FuncOp,
              ModuleOp>(op) ||
          op->getParentOfType<FusionGroupOp>() ||
          declaresKind(op, keep))
        return WalkResult::advance();
      FailureOr<int64_t> added = widen(op);
      if (failed(added))
        return WalkResult::interrupt();
      casts += *added;
      ops += *added > 0;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    Builder b(&getContext());
    recordPassResult(getOperation(), "widen-16bit", "ops", b.getI64IntegerAttr(ops));
    recordPassResult(getOperation(), "widen-16bit", "casts", b.getI64IntegerAttr(casts));
  }
};

} // namespace
