//===- FakeMain.cpp - A trainer program around the fake model -------------===//
//
// Stands in for the source `tcc compile` generates: defines tccCreateModel()
// and is linked with TccTrainerMain, so the tests run the real main().
//
//===----------------------------------------------------------------------===//

#include "FakeModel.h"

extern "C" tcc::rt::CompiledModel *tccCreateModel() {
  return new tcc::test::FakeModel();
}
