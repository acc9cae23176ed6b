//===- Trainer.h - The trainer program around a CompiledModel -*- C++ -*-===//
//
// runTrainer() is the whole trainer: it parses the command line, reads the
// recipe compiled into the model (ModelInfo::recipe), loads and checks
// the data, allocates the arenas (64-byte aligned), initialises the state
// (or loads --init / --resume), makes the data set resident and binds it
// with the arenas and the control block (CompiledModel::bind), then calls
// trainStep() once per step, evaluates the whole test set at every epoch
// end and at the end of the run, writes metrics, and saves --save at the
// end of the run (also when --steps stops it early). Nothing goes to the
// model per step: the step gathers its own batch.
//
// Determinism: the state's initial values derive from (seed, tensor name),
// and the batch of step s is batch s % stepsPerEpoch of epoch
// s / stepsPerEpoch, a pure function of (seed, epoch, position)
// (runtime/common/Batch.h) that the BatchLoader computes too. The step
// counter is the state tensor "step", so a run resumed from a checkpoint
// sees exactly the batches, augmentation and schedule of an uninterrupted
// run with the same seed: the final state is bit-identical. --steps only
// stops a run early; the schedule always spans --epochs
// (RunConstants::totalSteps = ceil(epochs * stepsPerEpoch)). On --resume,
// the seed and epochs default to the checkpoint's.
//
// A short last batch (train.drop_last false) is completed with the first
// samples of the epoch's first batch, since the step is compiled for a
// fixed batch size.
//
// Errors: every user error is one line "error: ..." on stderr and exit
// status 1; nothing a user can pass crashes the program.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_TRAINER_H
#define TCC_RUNTIME_TRAINER_TRAINER_H

#include "runtime/CompiledModel.h"
#include "runtime/comm/Communicator.h"
#include "runtime/data/Dataset.h"
#include "runtime/trainer/Memory.h"
#include "runtime/trainer/StepCount.h"
#include "runtime/trainer/SaveTarget.h"

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace tcc::rt {

/// Seams for tests and other targets; the defaults are the program's.
struct TrainerEnv {
  /// Use this data set instead of loading data.format/data.path (--data is
  /// then ignored).
  const DataSplit *data = nullptr;
  /// Arena memory; nullptr: host memory.
  DeviceMemory *memory = nullptr;
  /// Why the device memory a cuda trainer needs is missing (no GPU); empty
  /// when there is none to miss. Reported after the options are checked, so
  /// --help and a mistyped flag are answered on any machine.
  std::string noDevice;
  /// Show the progress line on `err` (the program: stderr is a terminal).
  bool progress = false;
  /// Seconds of a monotonic clock; nullptr: the steady clock.
  std::function<double()> clock;
  /// The program name in --help and in the resume command printed after an
  /// interruption.
  std::string program = "train";
  /// 0, or the signal (SIGINT, SIGTERM) that asks the run to stop after the
  /// current step; nullptr: never. The program: interruptSignal().
  std::function<int()> interrupted;
  /// Free bytes in a directory, for the --save check; nullptr: statvfs.
  FreeSpaceFn freeSpace;
  /// The ranks of a distributed run (runtime/comm); nullptr: one process.
  Communicator *comm = nullptr;
};

/// Runs the trainer with `args` (without the program name), printing
/// metrics to `out` and errors/progress to `err`. Returns the exit status:
/// 0; 1 after printing one "error: ..." line; 128 + the signal (130 for
/// SIGINT, 143 for SIGTERM) after an interruption that saved the state.
int runTrainer(CompiledModel &model, const std::vector<std::string> &args,
               std::ostream &out, std::ostream &err,
               const TrainerEnv &env = TrainerEnv());

/// main() of the trainer program: std::cout, std::cerr, isatty(2),
/// SIGINT/SIGTERM handlers (Interrupt.h), and tccDeviceMemory() for a model
/// in device memory.
int trainerMain(CompiledModel &model, int argc, char **argv);

} // namespace tcc::rt

/// Defined (strongly) by the cuda runtime (runtime/cuda/CudaMemory.cpp); a
/// model whose ModelInfo::memory is MemoryKind::Device needs it. Null with `whyNot` set
/// (one line: no GPU, a driver too old...) when there is no usable device.
extern "C" tcc::rt::DeviceMemory *tccDeviceMemory(const char **whyNot)
    __attribute__((weak));

#endif // TCC_RUNTIME_TRAINER_TRAINER_H
