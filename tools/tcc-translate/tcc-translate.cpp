//===- tcc-translate.cpp - What a target makes of each op -----------------===//
//
// mlir-translate for tcc: `tcc-translate --emit-cpu FILE.mlir` prints the
// statements the cpu target emits for every op of every function, so that
// lit + FileCheck test the emitters op by op. One --emit-NAME per target of
// the registry (codegen/Targets.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/Targets.h"
#include "passes/InitAll.h"
#include "target/TargetBackend.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include <deque>
#include <string>

int main(int argc, char **argv) {
  // Registrations keep a reference to their names (a deque never moves its
  // elements). The registrations are kept too, not leaked with `new`: the
  // sanitizer build reports leaks.
  static std::deque<std::string> names, descriptions;
  static std::deque<mlir::TranslateFromMLIRRegistration> registrations;
  mlir::tcc::registerAllTargets();
  for (const mlir::tcc::TargetBackend *target : mlir::tcc::registeredTargetBackends()) {
    names.push_back("emit-" + target->name().str());
    descriptions.push_back("print each op as the " + target->name().str() +
                           " target emits it");
    registrations.emplace_back(
        names.back(), descriptions.back(),
        [target](mlir::ModuleOp module, llvm::raw_ostream &os) {
          return target->emitOps(module, os);
        },
        [](mlir::DialectRegistry &registry) {
          mlir::tcc::registerAllTccDialects(registry);
        });
  }
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "tcc translation driver\n"));
}
