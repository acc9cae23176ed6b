//===- Precision.cpp - Mixed precision: which ops compute in 16 bits ------===//
//
// See Passes.td and docs/passes.md. Under train.precision = bf16-mixed
// (fp16-mixed: the same with f16) the forward is rewritten op by op from what each op declares in ODS
// (ir/TccTraits.h): Tcc_LowPrecisionCompute ops (conv2d, linear) read and
// write bf16; Tcc_FollowsInputPrecision ops (activations, adds, pools,
// views, dropout, batch norm's normalised tensor) keep the precision of
// their data operands; every other op computes in f32. Parameters stay f32
// in the state (the master weights): each is cast once, where the forward
// starts, and autodiff derives the backward from the casts, so weight
// gradients come back as f32 through the casts' gradients. The forward's
// results go back to f32: the loss is computed in f32.
//
// Under the pure modes (bf16, fp16: `model.half()`, as the airbench and
// ResNet-9 records train) the same policy runs, and then every parameter
// that the forward only reads through its cast to 16 bits is itself stored
// in 16 bits: the cast goes, so the parameter's gradient, its optimizer
// state, Lookahead and EMA copies and its checkpoint tensor are 16-bit too.
// A parameter an f32 op reads (batch norm's scale and shift) stays f32, as
// airbench keeps its batch norms in f32.
//
//===----------------------------------------------------------------------===//

#include "passes/PassReport.h"
#include "passes/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccRecipe.h"
#include "ir/TccTraits.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_PRECISION
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

constexpr StringLiteral kPass = "precision";

/// The element type of a float tensor value, or null.
FloatType floatElementOf(Value v) {
  auto tensor = dyn_cast<RankedTensorType>(v.getType());
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
}

bool isLow(Value v) {
  FloatType t = floatElementOf(v);
  return t && t.getWidth() == 16;
}

class Assigner {
public:
  Assigner(func::FuncOp fn, FloatType low) : fn(fn), low(low) {}

  /// Rewrites every op of the function; returns the casts inserted.
  LogicalResult run();

  /// Stores in 16 bits every parameter the forward reads only through its
  /// cast to 16 bits (the pure modes); returns how many.
  int64_t storeParametersInLowPrecision();

  int64_t castsInserted = 0;

private:
  /// `v` as `type` elements: itself, or its one cast, placed right after
  /// its definition (at the start of the function for an argument).
  Value castTo(Value v, FloatType type);

  /// The result types `op` infers from its operands as they are now.
  LogicalResult reinfer(Operation *op);

  func::FuncOp fn;
  FloatType low;
  DenseMap<std::pair<Value, Type>, Value> casts;
};

Value Assigner::castTo(Value v, FloatType type) {
  if (floatElementOf(v) == type)
    return v;
  auto key = std::make_pair(v, Type(type));
  if (Value known = casts.lookup(key))
    return known;
  OpBuilder b(fn.getContext());
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(&fn.front());
  Value cast = b.create<CastOp>(v.getLoc(), v, TypeAttr::get(type));
  casts[key] = cast;
  ++castsInserted;
  return cast;
}

LogicalResult Assigner::reinfer(Operation *op) {
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (!infer)
    return op->emitOpError("cannot take 16-bit operands: it does not infer its result types");
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                    op->getAttrDictionary(), op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return success();
}

LogicalResult Assigner::run() {
  FloatType f32 = Float32Type::get(fn.getContext());
  SmallVector<Operation *> ops;
  for (Operation &op : fn.front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (isa<CastOp>(op))
      continue;
    auto setFloatOperands = [&](function_ref<bool(unsigned)> which, FloatType type) {
      for (OpOperand &operand : op->getOpOperands())
        if (floatElementOf(operand.get()) && which(operand.getOperandNumber()))
          operand.set(castTo(operand.get(), type));
    };
    auto all = [](unsigned) { return true; };
    if (isa<func::ReturnOp>(op)) {
      // The loss and the state are f32.
      setFloatOperands([&](unsigned i) { return isLow(op->getOperand(i)); }, f32);
      continue;
    }
    if (op->hasTrait<mlir::tcc::OpTrait::LowPrecisionCompute>()) {
      setFloatOperands(all, low);
    } else if (op->hasTrait<mlir::tcc::OpTrait::FollowsInputPrecision>()) {
      // The data operands: operand 0 and the float operands of its rank.
      int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
      auto data = [&](unsigned i) {
        auto tensor = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
        return i == 0 || (tensor && tensor.getRank() == rank);
      };
      bool anyLow = false, allLow = true;
      for (OpOperand &operand : op->getOpOperands())
        if (floatElementOf(operand.get()) && data(operand.getOperandNumber())) {
          anyLow |= isLow(operand.get());
          allLow &= isLow(operand.get());
        }
      if (!anyLow)
        continue;
      if (!allLow)
        setFloatOperands(data, f32);
    } else {
      setFloatOperands([&](unsigned i) { return isLow(op->getOperand(i)); }, f32);
    }
    if (failed(reinfer(op)))
      return failure();
  }
  return success();
}

int64_t Assigner::storeParametersInLowPrecision() {
  int64_t stored = 0;
  SmallVector<Type> argTypes(fn.getArgumentTypes());
  for (BlockArgument arg : fn.getArguments()) {
    if (!fn.getArgAttr(arg.getArgNumber(), kParamAttr) ||
        !isa_and_nonnull<Float32Type>(floatElementOf(arg)))
      continue;
    bool onlyCastDown = llvm::all_of(arg.getUsers(), [&](Operation *user) {
      auto cast = dyn_cast<CastOp>(user);
      return cast && floatElementOf(cast.getResult()) == low;
    });
    if (!onlyCastDown)
      continue;
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      user->getResult(0).replaceAllUsesWith(arg);
      user->erase();
      --castsInserted;
    }
    arg.setType(cast<RankedTensorType>(arg.getType()).clone(low));
    argTypes[arg.getArgNumber()] = arg.getType();
    ++stored;
  }
  fn.setFunctionType(FunctionType::get(fn.getContext(), argTypes, fn.getResultTypes()));
  return stored;
}

struct PrecisionPass : mlir::tcc::impl::PrecisionBase<PrecisionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(&getContext());
    ::tcc::rt::Precision precision;
    if (TrainAttr train = moduleTrain(module))
      precision = toRecipe(train.getPrecision());
    // fp16-mixed's loss scaling is tcc-build-train-step's (train.loss_scale).
    FloatType low;
    if (precision.kind == ::tcc::rt::Precision::BF16)
      low = BFloat16Type::get(&getContext());
    else if (precision.kind == ::tcc::rt::Precision::FP16)
      low = Float16Type::get(&getContext());
    bool pure = low && !precision.mixed();
    int64_t casts = 0, sixteenBitParams = 0;
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (low && forward) {
      Assigner assigner(forward, low);
      if (failed(assigner.run()))
        return signalPassFailure();
      if (pure)
        sixteenBitParams = assigner.storeParametersInLowPrecision();
      casts = assigner.castsInserted;
    }
    // What the forward's ops compute in: their first result's element type.
    llvm::StringMap<int64_t> byDtype;
    if (forward)
      forward.walk([&](Operation *op) {
        if (isa<CastOp, func::ReturnOp>(op) || op->getNumResults() == 0 ||
            !floatElementOf(op->getResult(0)))
          return;
        std::string name;
        llvm::raw_string_ostream os(name);
        os << floatElementOf(op->getResult(0));
        ++byDtype[name];
      });
    SmallVector<NamedAttribute> counts;
    for (const auto &entry : byDtype)
      counts.push_back(b.getNamedAttr(entry.getKey(), b.getI64IntegerAttr(entry.getValue())));
    recordPassResult(module, kPass, "precision", b.getStringAttr(precision.name()));
    recordPassResult(module, kPass, "casts", b.getI64IntegerAttr(casts));
    if (pure)
      recordPassResult(module, kPass, "sixteen_bit_params", b.getI64IntegerAttr(sixteenBitParams));
    recordPassResult(module, kPass, "ops_by_dtype", b.getDictionaryAttr(counts));
  }
};

} // namespace
