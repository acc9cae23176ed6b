//===- Trainer.cpp - The trainer program around a CompiledModel ------------===//
//
// The entry points: runTrainer() turns a Run's errors into one `error:`
// line and exit status 1; trainerMain() is the program's main().
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Trainer.h"

#include "runtime/trainer/Interrupt.h"
#include "runtime/trainer/Run.h"
#include "runtime/trainer/Text.h"

#include <iostream>
#include <memory>
#include <new>
#include <unistd.h>

namespace tcc::rt {

using detail::Run;
using detail::UserError;

int runTrainer(CompiledModel &model, const std::vector<std::string> &args,
               std::ostream &out, std::ostream &err, const TrainerEnv &env) {
  std::string message;
  try {
    Run run(model, out, err, env);
    return run.run(args);
  } catch (const UserError &e) {
    message = e.message;
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
  err << "error: " << oneLine(message) << std::endl;
  return 1;
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
  if (model.info().memory == MemoryKind::Device) {
    const char *whyNot = "its runtime has no CUDA memory provider (tccDeviceMemory)";
    env.memory = tccDeviceMemory ? tccDeviceMemory(&whyNot) : nullptr;
    if (!env.memory)
      env.noDevice = "this trainer was compiled for the " + model.info().target +
                     " target, but " + whyNot;
  }
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
  installInterruptHandlers();
  env.interrupted = interruptSignal;
  std::ios::sync_with_stdio(true);
  if (comm->rank() != 0) {
    // Rank 0 speaks for the job; a rank that fails alone ends it through
    // the launcher, which names the rank.
    std::ostream quiet(nullptr);
    return runTrainer(model, args, quiet, quiet, env);
  }
  return runTrainer(model, args, std::cout, std::cerr, env);
}

} // namespace tcc::rt
