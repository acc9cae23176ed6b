//===- DeviceWait.h - Waiting for device work against a deadline -*- C++ -*-===//
//
// A cuda trainer of several ranks waits for its GPU where a collective may
// be in the work: the step's NCCL calls, the trainer's own host sums.
// NCCL's blocking calls would wait forever for a rank that died or hangs;
// this polls instead, with short sleeps, until the work is done, NCCL
// reports the communicator broken, or the timeout (--comm-timeout) passes.
// Plain C++: the caller says what done and broken mean.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMM_DEVICEWAIT_H
#define TCC_RUNTIME_COMM_DEVICEWAIT_H

#include <chrono>
#include <thread>

namespace tcc::rt {

enum class WaitEnd { Done, Broken, TimedOut };

/// Polls done() (then broken()) every 50 microseconds: Done as soon as
/// done() is true, Broken when broken() is, TimedOut after `seconds`.
template <class Done, class Broken>
WaitEnd awaitWithin(double seconds, Done done, Broken broken) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  for (;;) {
    if (done())
      return WaitEnd::Done;
    if (broken())
      return WaitEnd::Broken;
    if (Clock::now() >= deadline)
      return WaitEnd::TimedOut;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMM_DEVICEWAIT_H
