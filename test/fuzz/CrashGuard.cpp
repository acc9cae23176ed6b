//===- CrashGuard.cpp - Report the case that crashed or hung --------------===//
//
// What runs in a signal handler here is async-signal-safe: write, pread and
// _exit on buffers prepared before the case started.
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/CrashGuard.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#ifdef TCC_SANITIZE
#include <sanitizer/common_interface_defs.h>
#endif

namespace tcc::fuzz {
namespace {

int realStderr = 2;
int captureFd = -1;
std::string banner; // not modified while a case runs

void writeAll(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void writeText(const char *s) { writeAll(realStderr, s, std::strlen(s)); }

/// Prints why the run ends, the case, and what the case wrote to stderr
/// (where a sanitizer report or "LLVM ERROR" went).
void onDeath(const char *why) {
  writeText("\ntcc-fuzz-frontend: FAILED: ");
  writeText(why);
  writeText("\n");
  writeAll(realStderr, banner.data(), banner.size());
  if (captureFd >= 0) {
    writeText("\n--- the case's stderr ---\n");
    char buffer[4096];
    off_t at = 0;
    ssize_t n;
    while ((n = ::pread(captureFd, buffer, sizeof buffer, at)) > 0) {
      writeAll(realStderr, buffer, static_cast<size_t>(n));
      at += n;
    }
  }
  writeText("\n");
}

extern "C" void onSignal(int sig) {
  const char *why = sig == SIGALRM   ? "the case ran past its time limit (a hang?)"
                    : sig == SIGABRT ? "the case aborted (SIGABRT)"
                    : sig == SIGSEGV ? "the case crashed (SIGSEGV)"
                    : sig == SIGFPE  ? "the case crashed (SIGFPE)"
                    : sig == SIGBUS  ? "the case crashed (SIGBUS)"
                                     : "the case crashed (SIGILL)";
  onDeath(why);
  ::_exit(1);
}

#ifdef TCC_SANITIZE
void onSanitizerDeath() { onDeath("a sanitizer found an error in the case"); }
#endif

} // namespace

void installCrashGuard() {
  realStderr = ::dup(2);
  if (FILE *capture = std::tmpfile()) {
    captureFd = ::fileno(capture);
    ::dup2(captureFd, 2);
  }
  struct sigaction action = {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  // A sanitizer handles faults itself, with a stack trace; it calls
  // onSanitizerDeath afterwards.
#ifdef TCC_SANITIZE
  __sanitizer_set_death_callback(onSanitizerDeath);
  for (int sig : {SIGALRM, SIGABRT})
#else
  for (int sig : {SIGALRM, SIGABRT, SIGSEGV, SIGFPE, SIGBUS, SIGILL})
#endif
    ::sigaction(sig, &action, nullptr);
}

void beginCase(const std::string &text, unsigned seconds) {
  banner = text;
  ::alarm(seconds);
}

std::string endCase() {
  ::alarm(0);
  std::string out;
  if (captureFd < 0)
    return out;
  char buffer[4096];
  off_t at = 0;
  ssize_t n;
  while ((n = ::pread(captureFd, buffer, sizeof buffer, at)) > 0) {
    out.append(buffer, static_cast<size_t>(n));
    at += n;
  }
  // fd 2 shares the file offset: rewind it for the next case.
  if (::ftruncate(captureFd, 0) == 0)
    ::lseek(captureFd, 0, SEEK_SET);
  return out;
}

void report(const std::string &text) {
  writeAll(realStderr, text.data(), text.size());
}

} // namespace tcc::fuzz
