//===- main.cpp - tcc: every target, then the command line ----------------===//

#include "codegen/Targets.h"
#include "tools/tcc/Driver.h"

int main(int argc, char **argv) {
  mlir::tcc::registerAllTargets();
  return tcc::tccMain(argc, argv);
}
