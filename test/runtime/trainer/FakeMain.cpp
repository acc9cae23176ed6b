//===- FakeMain.cpp - A trainer program around the fake model -------------===//
//
// Stands in for the source `tcc compile` generates: defines tccCreateModel()
// and is linked with TccTrainerMain, so the tests run the real main().
//
// Test-only knobs (environment variables):
//   TCC_FAKE_LR=X         the fake model's learning rate (1e38 diverges)
//   TCC_FAKE_RAISE=S:SIG  the process sends itself SIG (INT or TERM) at the
//                         end of step S; "3:INT,3:TERM" sends two
//   TCC_FAKE_STEP_MS=N    each step sleeps N ms (to signal it from outside)
//   TCC_FAKE_PRECISION=P  the recipe's train.precision (as a recompile with
//                         --precision P: the same tensors)
//
//===----------------------------------------------------------------------===//

#include "FakeModel.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

extern "C" tcc::rt::CompiledModel *tccCreateModel() {
  const char *precision = std::getenv("TCC_FAKE_PRECISION");
  auto *model = new tcc::test::FakeModel(
      tcc::test::fakeRecipe("/nonexistent", 2, precision ? precision : ""));
  if (const char *lr = std::getenv("TCC_FAKE_LR"))
    model->learningRate = std::strtof(lr, nullptr);
  std::string raise = std::getenv("TCC_FAKE_RAISE") ? std::getenv("TCC_FAKE_RAISE") : "";
  long sleepMs = std::getenv("TCC_FAKE_STEP_MS")
                     ? std::strtol(std::getenv("TCC_FAKE_STEP_MS"), nullptr, 10)
                     : 0;
  if (!raise.empty() || sleepMs > 0)
    model->afterStep = [raise, sleepMs](int64_t step) {
      if (sleepMs > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
      std::istringstream items(raise);
      for (std::string item; std::getline(items, item, ',');) {
        size_t colon = item.find(':');
        if (colon != std::string::npos &&
            std::stoll(item.substr(0, colon)) == step)
          std::raise(item.substr(colon + 1) == "TERM" ? SIGTERM : SIGINT);
      }
    };
  return model;
}
