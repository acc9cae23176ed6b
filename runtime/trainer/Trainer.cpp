//===- Trainer.cpp - The trainer program around a CompiledModel ------------===//
//
// The entry points: runTrainer() turns a Run's errors into one `error:`
// line and exit status 1; trainerMain() is the program's main().
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Trainer.h"

#include "runtime/trainer/Interrupt.h"
#include "runtime/trainer/Run.h"
#include "runtime/trainer/Sample.h"
#include "runtime/trainer/Text.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <new>
#include <unistd.h>

namespace tcc::rt {

using detail::Run;
using detail::UserError;

namespace {

/// runTrainer(), telling the caller whether a failure is every rank's
/// (UserError::everyRank).
int runGuarded(CompiledModel &model, const std::vector<std::string> &args, std::ostream &out,
               std::ostream &err, const TrainerEnv &env, bool &everyRank) {
  std::string message;
  everyRank = false;
  try {
    // `./train sample ...`: text from a language model (tcc sample runs it).
    if (!args.empty() && args[0] == "sample")
      return runSample(model, {args.begin() + 1, args.end()}, out, err, env.program);
    Run run(model, out, err, env);
    return run.run(args);
  } catch (const UserError &e) {
    message = e.message;
    everyRank = e.everyRank;
  } catch (const ModelSetupError &e) {
    message = e.what();
  } catch (const std::bad_alloc &) {
    message = "out of memory";
  } catch (const std::exception &e) {
    message = std::string("internal error: ") + e.what();
  } catch (...) {
    message = "internal error: unknown exception";
  }
  out.flush();
  // One write: a launcher that merges the ranks' output keeps the line whole.
  err << "error: " + oneLine(message) + "\n" << std::flush;
  return 1;
}

/// The ranks of a distributed run leave together: a rank still working
/// (rank 0 writing --save) is waited for with --comm-timeout, where
/// MPI_Finalize would wait forever for one that hangs.
void leaveTogether(Communicator &comm) {
  int64_t here = 1;
  comm.allReduceSum(&here, 1);
}

} // namespace

int runTrainer(CompiledModel &model, const std::vector<std::string> &args,
               std::ostream &out, std::ostream &err, const TrainerEnv &env) {
  bool everyRank = false;
  return runGuarded(model, args, out, err, env, everyRank);
}

int trainerMain(CompiledModel &model, int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  TrainerEnv env;
  env.progress = isatty(2) == 1;
  if (argc > 0 && argv[0]) {
    std::string program = argv[0];
    env.program = program;
  }
  // --help is answered anywhere: a trainer of several ranks started alone
  // says how to use it rather than how to launch it.
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end())
    return runTrainer(model, args, std::cout, std::cerr, env);
  // The ranks of a distributed run (docs/distributed.md): the trainer's
  // communicator, which checks the world the launcher started.
  std::string error;
  std::unique_ptr<Communicator> comm =
      createCommunicator(model.info().recipe.train.distributed.ranks, error);
  if (!comm) {
    if (!error.empty())
      std::cerr << "error: " << oneLine(error) << std::endl;
    return 1;
  }
  env.comm = comm.get();
  // After the communicator, which picks this rank's GPU (NCCL).
  if (model.info().memory == MemoryKind::Device) {
    const char *whyNot = "its runtime has no CUDA memory provider (tccDeviceMemory)";
    env.memory = tccDeviceMemory ? tccDeviceMemory(&whyNot) : nullptr;
    if (!env.memory)
      env.noDevice = "this trainer was compiled for the " + model.info().target +
                     " target, but " + whyNot;
  }
  installInterruptHandlers();
  env.interrupted = interruptSignal;
  std::ios::sync_with_stdio(true);
  // Rank 0 speaks for the job. A run that fails alone (status 1) ends the
  // whole job: the other ranks may be waiting for this one in a
  // collective. A signal (130, 143) or a failure of every rank (a diverged
  // loss) ends every rank after the same step, and they leave together.
  std::ostream quiet(nullptr);
  const bool speaks = comm->rank() == 0;
  bool everyRank = false;
  int status = runGuarded(model, args, speaks ? std::cout : quiet, speaks ? std::cerr : quiet,
                          env, everyRank);
  if (comm->size() > 1) {
    if (status == 1 && !everyRank)
      comm->abortJob(status);
    leaveTogether(*comm);
  }
  return status;
}

} // namespace tcc::rt
