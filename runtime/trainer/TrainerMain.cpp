//===- TrainerMain.cpp - main() of a compiled trainer ----------------------===//
//
// Linked with the source `tcc compile` generates, which defines
// tccCreateModel().
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Trainer.h"

#include <cstdlib>
#include <iostream>
#include <memory>

int main(int argc, char **argv) {
  // OpenMP's default spin-waiting between the many short kernels of a step
  // costs far more than it saves on a machine that runs other work too.
  // Read when the first parallel region starts; the user's setting wins.
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  std::unique_ptr<tcc::rt::CompiledModel> model;
  try {
    model.reset(tccCreateModel());
  } catch (const std::exception &e) {
    std::cerr << "error: internal error: creating the model failed: "
              << e.what() << std::endl;
    return 1;
  }
  if (!model) {
    std::cerr << "error: internal error: tccCreateModel() returned no model"
              << std::endl;
    return 1;
  }
  return tcc::rt::trainerMain(*model, argc, argv);
}
