//===- Activations.cpp - The activation ops as the kernels name them ------===//

#include "codegen/common/Activations.h"

#include "codegen/common/Emitter.h"
#include "codegen/common/OpPrinterTable.h"

#include "ir/TccOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// A forward op and its backward share a row: the backward carries the
/// forward's attribute.
const OpPrinterTable<Activation> &activationTable() {
  static const OpPrinterTable<Activation> table([](OpPrinterTable<Activation> &t) {
    auto named = [](StringRef kernel) {
      return [kernel](auto, Activation &a) {
        a.kernel = kernel.str();
        return success();
      };
    };
    auto withAttr = [](StringRef kernel, auto get) {
      return [kernel, get](auto o, Activation &a) {
        a.kernel = kernel.str();
        a.attr = get(o);
        return success();
      };
    };
    t.add<ReluOp, ReluBackwardOp>(named("relu"));
    t.add<LeakyReluOp, LeakyReluBackwardOp>(
        withAttr("leaky_relu", [](auto o) { return o.getNegativeSlope(); }));
    t.add<EluOp, EluBackwardOp>(withAttr("elu", [](auto o) { return o.getAlpha(); }));
    t.add<CeluOp, CeluBackwardOp>(withAttr("celu", [](auto o) { return o.getAlpha(); }));
    t.add<GeluOp, GeluBackwardOp>([](auto o, Activation &a) {
      a.kernel = o.getApproximate() == "tanh" ? "gelu_tanh" : "gelu";
      return success();
    });
    t.add<SiluOp, SiluBackwardOp>(named("silu"));
    t.add<SigmoidOp, SigmoidBackwardOp>(named("sigmoid"));
    t.add<TanhOp, TanhBackwardOp>(named("tanh"));
  });
  return table;
}

} // namespace

std::optional<Activation> mlir::tcc::activationOf(Operation *op) {
  const auto *spell = activationTable().lookup(op);
  if (!spell)
    return std::nullopt;
  Activation activation;
  (void)(*spell)(op, activation);
  activation.backward = op->getNumOperands() == 2;
  return activation;
}

SmallVector<TypeID> mlir::tcc::activationOps() { return activationTable().keys(); }

std::string mlir::tcc::elementFunctorOf(Operation *op) {
  std::optional<Activation> activation = activationOf(op);
  if (!activation)
    return "";
  std::string functor;
  for (StringRef word : llvm::split(activation->kernel, '_'))
    functor += llvm::toUpper(word.front()) + word.drop_front().str();
  return functor + (activation->backward ? "Backward" : "") + "<float>" +
         (activation->attr ? "(" + cppDouble(*activation->attr) + ")" : "{}");
}
