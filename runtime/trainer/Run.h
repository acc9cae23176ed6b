//===- Run.h - One run of the trainer, in parts ------------------*- C++ -*-===//
//
// Private to runtime/trainer/: the Run class behind runTrainer(), whose
// phases live in RunSetup.cpp (data, state, checks, bind) and RunLoop.cpp
// (steps, evaluation, metrics, save), and the checks they share
// (RunChecks.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_RUN_H
#define TCC_RUNTIME_TRAINER_RUN_H

#include "runtime/trainer/Metrics.h"
#include "runtime/trainer/RunLock.h"
#include "runtime/trainer/Options.h"
#include "runtime/trainer/Trainer.h"

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace tcc::rt::detail {

/// A user error: one line, printed as "error: <message>".
struct UserError {
  std::string message;
  /// Every rank of a distributed run fails here, after the same step (a
  /// decision on the global totals): the ranks end together, without
  /// MPI_Abort.
  bool everyRank = false;
};

[[noreturn]] inline void fail(const std::string &message) { throw UserError{message}; }
[[noreturn]] inline void failOnEveryRank(const std::string &message) {
  throw UserError{message, true};
}

/// An allocation that frees itself.
class Buffer {
public:
  Buffer(DeviceMemory &memory, size_t bytes, const char *what)
      : memory(memory), bytes(bytes) {
    pointer = memory.allocate(bytes);
    if (!pointer)
      fail(std::string("out of memory: cannot allocate ") +
           std::to_string(bytes) + " bytes for the " + what);
  }
  ~Buffer() { memory.release(pointer); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  void *get() const { return pointer; }
  size_t size() const { return bytes; }

private:
  DeviceMemory &memory;
  size_t bytes;
  void *pointer = nullptr;
};

/// Fails unless `d` (the `which` split loaded from `path`) is consistent and
/// fits the model's input shape and classes.
void checkDataset(const Dataset &d, const char *which, const std::string &path,
                  const ModelInfo &info);
/// Fails unless the compiled layout is sane (batch, classes, state inside
/// the arena).
void checkLayout(const ModelInfo &info);

/// The state tensor "step", or null.
const StateTensor *findCounter(const ModelInfo &info);
/// The counter's value in a host copy of the state.
int64_t readCounter(const StateTensor &t, const void *hostState);
/// The largest step count a counter of `dtype` holds exactly.
int64_t largestCount(DType dtype);

/// "2", "0.3", "1e+30".
std::string numberText(double x);
/// "12.34%".
std::string percent(double x);
/// "4:07", "1:05:03" (rounded to the second).
std::string durationText(double seconds);
bool fileExists(const std::string &path);

class Run {
public:
  Run(CompiledModel &model, std::ostream &out, std::ostream &err,
      const TrainerEnv &env)
      : model(model), info(model.info()), out(out), err(err), env(env),
        clock(env.clock ? env.clock : steadySeconds),
        progress(err, false, clock), comm(env.comm),
        rank(env.comm ? env.comm->rank() : 0) {}

  int run(const std::vector<std::string> &args);

private:
  void configureFaults();
  void checkTargets();
  void lockTargets();
  void loadData(const Recipe &recipe);
  void initState(void *hostState);
  /// Initialises a state laid out as `info` (the arena's, or whole).
  void initState(const ModelInfo &layout, void *hostState);
  void resumeState(void *hostState, int64_t &metaStep);
  void checkCounts();
  void warnFixedScheduleSpan(const Recipe &recipe);
  void checkStep();
  void evaluate(EpochMetrics &m);
  std::pair<std::optional<double>, std::optional<double>> evaluateOnce();
  void *gatherForEvaluation(std::vector<uint8_t> &hostWhole,
                            std::unique_ptr<Buffer> &deviceWhole);
  void traceEvalGather(const char *where, size_t bytes) const;
  void swapEmaWithRaw();
  void chooseEvalMode();
  void findLossScaleState();
  void logStep(const StepTotals &totals, double segmentTrain, double start);
  void checkpoint(void *hostState);
  bool periodicCheckpointDue();
  /// The state a checkpoint holds: `hostState`, or with a sharded state
  /// the whole tensors gathered from every rank (a collective: every rank
  /// calls it at the same point), laid out as checkpointInfo() says.
  const void *stateToWrite(const void *hostState);
  const ModelInfo &checkpointInfo() const { return sharded ? wholeInfo : info; }
  void emit(EpochMetrics &m);
  void bindBuffers(const Recipe &recipe);
  EpochMetrics trainMetrics(const StepTotals &totals, double segmentTrain,
                            double start, bool final);
  void stopIfDiverged(const StepTotals &totals, double segmentTrain,
                      double start);
  std::string save(const std::string &path, const void *hostState,
                   std::string &failure);
  std::string resumeCommand(const std::string &checkpoint) const;
  /// --profile: the file and the summary, for `steps` steps after
  /// `warmupSteps` uncounted ones.
  void writeProfile(const std::vector<OpTime> &sites, int64_t steps, int64_t warmupSteps);
  void warn(const std::string &message);
  /// A distributed run (docs/distributed.md): the totals of every rank's
  /// steps since the last reset, and the signal that stops the run, agreed
  /// by all ranks so that all stop after the same step.
  StepTotals readGlobalTotals();
  int agreedSignal();
  void foldBiases(const ModelInfo &layout, void *hostState, const std::string &file);
  int interrupted() const { return env.interrupted ? env.interrupted() : 0; }

  CompiledModel &model;
  const ModelInfo &info;
  std::ostream &out, &err;
  const TrainerEnv &env;
  std::function<double()> clock;
  ProgressLine progress; ///< enabled once --quiet is known
  /// The other ranks (null: one process); rank 0 alone prints and writes
  /// files.
  Communicator *comm;
  int rank;
  /// train.distributed.shard: this rank's arena holds chunks of the
  /// optimizer state; checkpoints hold it whole (ShardedState.h).
  bool sharded = false;
  ModelInfo wholeInfo;
  std::vector<uint8_t> wholeState;
  /// Sharded parameters (shard "parameters"): every evaluation reads the
  /// whole state, gathered before it (StepBuffers::wholeState).
  bool gathersForEval = false;
  ModelInfo evalInfo; ///< wholeStateInfo(info, /*evaluated=*/true)
  /// Whether rank 0 writes the state at the end (--save; the others' is
  /// cleared): with a sharded state every rank helps gather it.
  bool savesState = false;

  TrainOptions opts;
  DataSplit ownData;
  const DataSplit *data = nullptr;
  std::string dataPath;
  NormalizeConfig normalize;
  DeviceMemory *memory = nullptr;
  void *state = nullptr, *scratch = nullptr;
  MetricsFile metricsFile;
  RunLock saveLock, metricsLock; ///< held until the run ends

  uint64_t seed = 0;
  std::string precision; ///< the recipe's, saved in checkpoints
  double epochs = 1;
  std::string epochsSource; ///< names where `epochs` came from, for errors
  RunConstants constants;
  const StateTensor *counter = nullptr;
  int64_t step = 0;

  /// fp16 loss scaling's state, when the model has it (the metrics show it).
  const StateTensor *lossScale = nullptr, *optimizerSteps = nullptr;

  /// --eval: "ema", "raw" or "both"; the EMA copies and what they average.
  std::string evalMode;
  std::vector<std::pair<const StateTensor *, const StateTensor *>> emaPairs;
  /// --log-every: the epoch's totals and training seconds at the last step
  /// record (the next record covers the steps since).
  StepTotals logged;
  double loggedTrain = 0;
  /// --checkpoint-every: when the last periodic checkpoint was written.
  double lastCheckpoint = 0;
  void *hostState = nullptr;

  /// Device copies of what the step reads besides the arenas (none on the
  /// host, where the step reads the loaded data set in place).
  std::vector<std::unique_ptr<Buffer>> resident;
  std::vector<float> mean, stdev; ///< per channel, for the host
  StepControl hostControl;
  StepControl *control = nullptr;
};

} // namespace tcc::rt::detail

#endif // TCC_RUNTIME_TRAINER_RUN_H
