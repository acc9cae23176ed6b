//===- MpiWait.cpp - Waiting for a collective against a deadline ----------===//

#include "runtime/comm/MpiWait.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tcc::rt::mpi {

namespace {

using Clock = std::chrono::steady_clock;

/// Tags on the questions' communicator: {collective asked about, 0} and
/// {collective asked about, collective the answering rank is in}.
constexpr int kQuestion = 1, kAnswer = 2;

/// How long the ranks asked have to answer: a live rank answers within a
/// poll (10 ms at most, more on a loaded machine).
constexpr double kGraceSeconds = 5;

double secondsSince(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

/// The sleeps between polls: 50 us at first, doubling to 1 ms, and to 10 ms
/// once the wait passes a second. A collective of several rounds advances
/// only when each rank polls, so a longer sleep in a healthy step costs
/// every round (4 ranks on 2 cores: 10 ms made a run 2-3x slower; 1 ms is as
/// fast as the blocking MPI_Allreduce, which spun). A rank that waits long
/// for a slower one wakes 100 times a second and burns no core.
class Backoff {
public:
  void sleep() {
    std::this_thread::sleep_for(next);
    const bool longWait = secondsSince(start) > 1;
    next = std::min(next * 2, std::chrono::microseconds(longWait ? 10000 : 1000));
  }

private:
  Clock::time_point start = Clock::now();
  std::chrono::microseconds next{50};
};

bool completed(MPI_Request &request) {
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

/// "rank 1", "ranks 1 and 3", "ranks 0, 2 and 3".
std::string rankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return text;
}

/// "300", "2.5".
std::string secondsText(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return buf;
}

} // namespace

std::string timeoutMessage(const std::vector<int64_t> &where, int64_t collective,
                           int64_t values, const FaultSettings &settings) {
  std::vector<int> absent, elsewhere;
  for (size_t r = 0; r < where.size(); ++r)
    if (where[r] == kAbsent)
      absent.push_back(static_cast<int>(r));
    else if (where[r] != collective)
      elsewhere.push_back(static_cast<int>(r));
  const std::string what = "collective " + std::to_string(collective) + " (an all-reduce of " +
                           std::to_string(values) + (values == 1 ? " value" : " values") + ")";
  const std::string within = " within " + secondsText(settings.timeoutSeconds) + " s";
  std::string message;
  if (!absent.empty()) {
    message = rankList(absent) + " did not reach " + what + within + ": " +
              (absent.size() == 1 ? "it died or hangs" : "they died or hang");
  } else {
    // Every rank answered, twice, and the collective still did not end.
    message = "internal error: " + what + " did not complete" + within +
              " though every rank is alive";
    for (int r : elsewhere)
      message += "; rank " + std::to_string(r) + " waits in collective " +
                 std::to_string(where[static_cast<size_t>(r)]);
  }
  message += "; stopping every rank";
  message += settings.checkpoint.empty()
                 ? " (no --save was given: no checkpoint is kept)"
                 : " (--save '" + settings.checkpoint +
                       "' keeps the last checkpoint written, if any)";
  if (!absent.empty())
    message += "; if " + std::string(absent.size() == 1 ? "it was" : "they were") +
               " only slow (a long checkpoint write, a slow start), raise --comm-timeout";
  return message;
}

void CollectiveWait::wait(MPI_Request &request, int64_t collective, int64_t values) {
  Clock::time_point since = Clock::now();
  Backoff backoff;
  for (int asked = 0;;) {
    if (completed(request))
      return;
    answerQuestions(collective);
    if (secondsSince(since) < settings.timeoutSeconds) {
      backoff.sleep();
      continue;
    }
    std::vector<int64_t> where = askEveryone(request, collective);
    if (where.empty())
      return;
    ++asked;
    const bool someAbsent = std::count(where.begin(), where.end(), kAbsent) > 0;
    const int lowestLive =
        static_cast<int>(std::find_if(where.begin(), where.end(),
                                      [](int64_t w) { return w != kAbsent; }) -
                         where.begin());
    // One rank speaks: the lowest that answered. The others wait on; should
    // it fall silent too, the next of them is the lowest by then.
    if (lowestLive == rank && (someAbsent || asked > 1))
      report(where, collective, values);
    since = Clock::now();
  }
}

std::vector<int64_t> CollectiveWait::askEveryone(MPI_Request &request, int64_t collective) {
  for (int r = 0; r < ranks; ++r)
    if (r != rank)
      send(r, kQuestion, collective, 0);
  std::vector<int64_t> where(static_cast<size_t>(ranks), kAbsent);
  where[static_cast<size_t>(rank)] = collective;
  const double grace = std::min(settings.timeoutSeconds, kGraceSeconds);
  const Clock::time_point since = Clock::now();
  Backoff backoff;
  while (std::count(where.begin(), where.end(), kAbsent) > 0 && secondsSince(since) < grace) {
    if (completed(request))
      return {};
    answerQuestions(collective);
    collectAnswers(collective, where);
    backoff.sleep();
  }
  return where;
}

void CollectiveWait::answerQuestions(int64_t collective) {
  for (;;) {
    int pending = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kQuestion, questions, &pending, &status);
    if (!pending)
      return;
    int64_t question[2];
    MPI_Recv(question, 2, MPI_INT64_T, status.MPI_SOURCE, kQuestion, questions,
             MPI_STATUS_IGNORE);
    send(status.MPI_SOURCE, kAnswer, question[0], collective);
  }
}

void CollectiveWait::collectAnswers(int64_t collective, std::vector<int64_t> &where) {
  for (;;) {
    int pending = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kAnswer, questions, &pending, &status);
    if (!pending)
      return;
    int64_t answer[2];
    MPI_Recv(answer, 2, MPI_INT64_T, status.MPI_SOURCE, kAnswer, questions, MPI_STATUS_IGNORE);
    if (answer[0] == collective) // else a late answer to an earlier question
      where[static_cast<size_t>(status.MPI_SOURCE)] = answer[1];
  }
}

void CollectiveWait::send(int to, int tag, int64_t first, int64_t second) {
  sent.push_back({first, second});
  MPI_Request request;
  MPI_Isend(sent.back().data(), 2, MPI_INT64_T, to, tag, questions, &request);
  MPI_Request_free(&request);
}

void CollectiveWait::report(const std::vector<int64_t> &where, int64_t collective,
                            int64_t values) {
  std::fflush(nullptr); // what rank 0 printed so far comes before the error
  std::fprintf(stderr, "error: %s\n",
               timeoutMessage(where, collective, values, settings).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1); // MPI_Abort does not return; the compiler does not know
}

} // namespace tcc::rt::mpi
