//===- tcc-toy.cpp - tcc with a third, test-only target -------------------===//

#include "codegen/Targets.h"
#include "tools/tcc/Driver.h"

namespace mlir::tcc::test {
void registerToyTarget();
} // namespace mlir::tcc::test

int main(int argc, char **argv) {
  mlir::tcc::registerAllTargets();
  mlir::tcc::test::registerToyTarget();
  return tcc::tccMain(argc, argv);
}
