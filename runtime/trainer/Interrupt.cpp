//===- Interrupt.cpp - SIGINT/SIGTERM end a run cleanly --------------------===//

#include "runtime/trainer/Interrupt.h"

#include <csignal>
#include <cstring>
#include <pthread.h>
#include <signal.h>

namespace tcc::rt {

namespace {

volatile std::sig_atomic_t firstSignal = 0;
bool installed = false;

extern "C" void recordSignal(int signal) {
  if (firstSignal == 0)
    firstSignal = signal;
}

} // namespace

void installInterruptHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = recordSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  installed = true;
}

int interruptSignal() { return firstSignal; }

namespace {
void maskInterruptSignals(int how) {
  if (!installed)
    return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(how, &set, nullptr);
}
} // namespace

void blockInterruptSignals() { maskInterruptSignals(SIG_BLOCK); }

void unblockInterruptSignals() { maskInterruptSignals(SIG_UNBLOCK); }

std::string signalName(int signal) {
  if (signal == SIGINT)
    return "SIGINT";
  if (signal == SIGTERM)
    return "SIGTERM";
  return "signal " + std::to_string(signal);
}

} // namespace tcc::rt
