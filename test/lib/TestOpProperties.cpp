//===- TestOpProperties.cpp - Print what passes ask of each op ------------===//
//
// -tcc-test-op-properties tags every tcc op with the properties passes rely
// on, so lit can check they are declared on the ops (test/ir/properties.mlir):
// `test.elementwise`, `test.monotone` (MonotoneOpInterface's answer, absent
// when the op does not implement it), `test.differentiable`.
//
//===----------------------------------------------------------------------===//

#include "ir/TccOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {
struct TestOpPropertiesPass
    : PassWrapper<TestOpPropertiesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestOpPropertiesPass)

  StringRef getArgument() const final { return "tcc-test-op-properties"; }
  StringRef getDescription() const final {
    return "Tag tcc ops with the traits and interfaces passes query";
  }

  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      if (!isa<TccDialect>(op->getDialect()))
        return;
      op->setAttr("test.elementwise",
                  b.getBoolAttr(op->hasTrait<mlir::OpTrait::Elementwise>()));
      if (auto monotone = dyn_cast<MonotoneOpInterface>(op))
        op->setAttr("test.monotone", b.getBoolAttr(monotone.isMonotoneNonDecreasing()));
      op->setAttr("test.differentiable",
                  b.getBoolAttr(isa<DifferentiableOpInterface>(op)));
    });
  }
};
} // namespace

namespace mlir::tcc::test {
void registerTestOpPropertiesPass() { PassRegistration<TestOpPropertiesPass>(); }
} // namespace mlir::tcc::test
