//===- Interrupt.h - SIGINT/SIGTERM end a run cleanly ---------*- C++ -*-===//
//
// The trainer program installs handlers for SIGINT and SIGTERM that only
// record the first signal (an atomic flag; nothing else is safe in a
// handler). The training loop polls it between steps: it finishes the step
// it is in, saves the state atomically and exits with 128 + the signal
// (130, 143). Later signals change nothing, so a second Ctrl-C while the
// checkpoint is written cannot tear it; signals are also blocked while a
// checkpoint is written, so no system call of the save sees EINTR. To stop
// at once, SIGKILL still works: the previous checkpoint stays intact.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_INTERRUPT_H
#define TCC_RUNTIME_TRAINER_INTERRUPT_H

#include <string>

namespace tcc::rt {

/// Installs the SIGINT and SIGTERM handlers (sigaction, SA_RESTART).
void installInterruptHandlers();

/// 0, or the first SIGINT/SIGTERM received since the handlers were
/// installed.
int interruptSignal();

/// Blocks SIGINT and SIGTERM for the rest of the process (before the final
/// save; they stay recorded). A no-op unless the handlers are installed, so
/// in-process tests keep their default signal handling.
void blockInterruptSignals();

/// Unblocks them again after a periodic checkpoint (--checkpoint-every): a
/// signal that came during the save is delivered now and ends the run at
/// the next step boundary.
void unblockInterruptSignals();

/// "SIGINT", "SIGTERM", else "signal N".
std::string signalName(int signal);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_INTERRUPT_H
