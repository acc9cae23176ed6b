//===- MpiWait.h - Waiting for a collective against a deadline --*- C++ -*-===//
//
// The MPI communicator starts each collective non-blocking and waits for
// it here: polled with short sleeps (a rank waiting for a slower one burns
// no core), answering the other ranks' "where are you?" meanwhile. Past the
// timeout the rank asks every other rank where it is; those silent through
// a grace period died or hang, and the lowest rank that answered names them
// in one `error:` line and ends the job (docs/distributed.md#faults).
// Asking needs nothing from the silent ranks, so a hung one cannot stop it.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMM_MPIWAIT_H
#define TCC_RUNTIME_COMM_MPIWAIT_H

#include "runtime/comm/Communicator.h"

// MPI's C interface only (Open MPI and MPICH add deprecated C++ bindings
// to a C++ translation unit otherwise, which need their own library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace tcc::rt::mpi {

/// Where each rank said it was: the number of the collective it waits in,
/// or kAbsent when it did not answer.
inline constexpr int64_t kAbsent = -1;

/// The one-line error (without "error: ") of a collective that timed out:
/// the ranks that did not reach it, what to do, the checkpoint kept.
std::string timeoutMessage(const std::vector<int64_t> &where, int64_t collective,
                           int64_t values, const FaultSettings &settings);

class CollectiveWait {
public:
  /// `questions`: a communicator of the same ranks kept for the questions
  /// and answers, so that they never match a collective's messages.
  CollectiveWait(MPI_Comm questions, int rank, int ranks)
      : questions(questions), rank(rank), ranks(ranks) {}

  void setFaultSettings(const FaultSettings &s) { settings = s; }

  /// Waits until `request` completes: collective number `collective`
  /// (counted alike on every rank), an all-reduce of `values` values. Ends
  /// the job, after the error line, when ranks stay away past the timeout.
  void wait(MPI_Request &request, int64_t collective, int64_t values);

private:
  /// Every rank's answer to "where are you?", asked now; empty when
  /// `request` completed meanwhile.
  std::vector<int64_t> askEveryone(MPI_Request &request, int64_t collective);
  /// Answers every question pending: this rank is in `collective`.
  void answerQuestions(int64_t collective);
  /// Records the answers pending to the question about `collective`.
  void collectAnswers(int64_t collective, std::vector<int64_t> &where);
  void send(int to, int tag, int64_t first, int64_t second);
  [[noreturn]] void report(const std::vector<int64_t> &where, int64_t collective,
                           int64_t values);

  MPI_Comm questions;
  int rank, ranks;
  FaultSettings settings;
  /// The messages sent, kept until the end: a send is never waited for (its
  /// receiver may be the rank that hangs), so its buffer must outlive it.
  std::deque<std::array<int64_t, 2>> sent;
};

} // namespace tcc::rt::mpi

#endif // TCC_RUNTIME_COMM_MPIWAIT_H
