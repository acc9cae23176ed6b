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
#include <unistd.h>

namespace {

/// How long an OpenMP thread spins at a barrier before it sleeps
/// (GOMP_SPINCOUNT). libgomp's default, 300,000 spins, lets a thread
/// burn the time slice of a core another process needs, and the step's
/// many short parallel regions then wait for descheduled threads: a
/// 2,000-layer chain ran 80x slower beside other work. Sleeping at once
/// (OMP_WAIT_POLICY=passive) costs a futex wake per region: the same chain
/// ran 10x slower on an idle machine. docs/performance.md has the numbers.
constexpr const char *kSpinCount = "10000";

/// libgomp reads its settings when it is loaded, before main(): the
/// trainer sets its spin count and starts itself again, once, unless the
/// user chose a wait policy or spin count.
void waitWellOnSharedMachines(char **argv) {
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
    return;
  setenv("GOMP_SPINCOUNT", kSpinCount, /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  // Not re-executed (no /proc): libgomp's defaults stay, which only costs speed.
}

} // namespace

int main(int argc, char **argv) {
  waitWellOnSharedMachines(argv);
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
