//===- CrashGuard.h - Report the case that crashed or hung ------*- C++ -*-===//
//
// Private to tcc-fuzz-frontend. The cases run in one process for speed, so a
// crash, an abort (LLVM's report_fatal_error), a sanitizer report or a hang
// ends the whole run: these handlers then print which case it was and how to
// reproduce it. stderr is captured meanwhile, so that any stray output of a
// case (a second error line, a warning) is found and shown.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TEST_FUZZ_CRASHGUARD_H
#define TCC_TEST_FUZZ_CRASHGUARD_H

#include <string>

namespace tcc::fuzz {

/// Installs the handlers and starts capturing stderr. Call once.
void installCrashGuard();

/// The case about to run: `banner` is printed if it crashes, `seconds` is its
/// time limit.
void beginCase(const std::string &banner, unsigned seconds);

/// Ends the case; returns what it wrote to stderr.
std::string endCase();

/// Writes to the real stderr, which the guard otherwise captures.
void report(const std::string &text);

} // namespace tcc::fuzz

#endif // TCC_TEST_FUZZ_CRASHGUARD_H
