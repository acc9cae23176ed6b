//===- tcc-opt.cpp - Run tcc passes on textual IR -------------------------===//
//
// mlir-opt for tcc: parses IR, runs the passes named on the command line
// (the targets' included: tcc-cuda-select-algorithms), prints the result.
// The lit tests drive it.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "codegen/Targets.h"
#include "passes/InitAll.h"

namespace mlir::tcc::test {
void registerTestOpPropertiesPass();
} // namespace mlir::tcc::test

int main(int argc, char **argv) {
  mlir::tcc::registerAllTargets(); // before the pipeline: it lists their passes
  mlir::tcc::registerAllTccPasses();
  mlir::tcc::test::registerTestOpPropertiesPass();
  mlir::DialectRegistry registry;
  mlir::tcc::registerAllTccDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tcc optimizer driver\n", registry));
}
