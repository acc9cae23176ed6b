//===- RunLoop.cpp - A run's steps, evaluation, metrics and save ----------===//

#include "runtime/trainer/Run.h"
#include "runtime/AtomicFile.h"

#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Interrupt.h"
#include "runtime/trainer/Profile.h"
#include "runtime/trainer/SaveTarget.h"
#include "runtime/trainer/ShardedState.h"
#include "runtime/trainer/Text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace tcc::rt::detail {

/// One pass of the evaluation step over the test set: (test loss, test
/// accuracy), empty with no test samples.
std::pair<std::optional<double>, std::optional<double>> Run::evaluateOnce() {
  const Dataset &test = data->test;
  const int64_t batch = info.evalBatchSize > 0 ? info.evalBatchSize
                                               : info.batchSize;
  const bool tta = model.hasTta() && opts.tta.value_or(true);
  // A distributed run splits the test batches over the ranks (every
  // `ranks`-th each) and adds up their totals.
  const int64_t ranks = constants.ranks, batches = (test.n + batch - 1) / batch;
  // Sharded parameters: every rank gathers the parameters and EMA copies
  // whole once (the ranks evaluate different numbers of batches, so the
  // evaluation step itself has no collective) and the evaluation reads
  // them; freed after, as FSDP's summon_full_params.
  std::vector<uint8_t> hostWhole;
  std::unique_ptr<Buffer> deviceWhole;
  if (gathersForEval) {
    model.awaitSteps();
    // Not bind(): a cuda model would build its stream and cuDNN plans anew
    // under its recorded step, which holds the old plans' workspaces.
    model.bindWholeState(gatherForEvaluation(hostWhole, deviceWhole));
  }
  model.resetTotals();
  for (int64_t i = 0, n = (batches + ranks - 1) / ranks; i < n; ++i)
    tta ? model.evalStep() : model.evalStepWithoutTta();
  StepTotals totals = readGlobalTotals();
  if (gathersForEval)
    model.bindWholeState(nullptr);
  model.resetTotals();
  // The evaluation step sums the training criterion over the real samples
  // (padding left out) and counts the correct predictions.
  if (totals.count == 0)
    return {};
  return {totals.lossSum / totals.count,
          static_cast<double>(totals.correct) / totals.count};
}

/// The parameters and EMA copies whole (evalInfo) for an evaluation, in
/// the model's memory: gathered on the host where that is the host's (the
/// cpu target), else by the model in its own (the cuda target: NCCL from
/// the arena into a device buffer, no copy through the host).
void *Run::gatherForEvaluation(std::vector<uint8_t> &hostWhole,
                               std::unique_ptr<Buffer> &deviceWhole) {
  if (memory->isHost()) {
    gatherWholeState(info, evalInfo, state, hostWhole, *comm);
    traceEvalGather("on the host", hostWhole.size());
    return hostWhole.data();
  }
  const std::vector<GatheredTensor> tensors = gatheredTensors(info, evalInfo);
  deviceWhole = std::make_unique<Buffer>(
      *memory, wholeStateRoom(evalInfo, tensors, constants.ranks), "whole state for evaluation");
  if (!model.gatherWholeState(deviceWhole->get(), info.stateBytes, tensors))
    fail("internal error: this model keeps its state in device memory but cannot gather it "
         "whole there for the evaluation");
  traceEvalGather("in the model's device memory", deviceWhole->size());
  return deviceWhole->get();
}

/// TCC_TEST_TRACE_EVAL_GATHER set: one line per evaluation's gather on
/// stderr, so that a test sees which path each rank took.
void Run::traceEvalGather(const char *where, size_t bytes) const {
  if (std::getenv("TCC_TEST_TRACE_EVAL_GATHER"))
    std::fprintf(stderr, "trace: rank %d gathered the evaluation's whole state %s (%zu bytes)\n",
                 rank, where, bytes);
}

/// Exchanges every EMA copy with the tensor it averages, in the state
/// arena: the evaluation step, compiled to read the EMA weights, then reads
/// the raw ones. Done twice, it restores the state.
void Run::swapEmaWithRaw() {
  for (const auto &[ema, raw] : emaPairs) {
    std::vector<char> a(ema->numBytes()), b(raw->numBytes());
    char *base = static_cast<char *>(state);
    memory->download(a.data(), base + ema->offset, a.size());
    memory->download(b.data(), base + raw->offset, b.size());
    memory->upload(base + ema->offset, b.data(), b.size());
    memory->upload(base + raw->offset, a.data(), a.size());
  }
}

void Run::evaluate(EpochMetrics &m) {
  if (data->test.n == 0)
    return;
  const double t0 = clock();
  if (evalMode != "raw")
    std::tie(m.testLoss, m.testAcc) = evaluateOnce();
  if (evalMode != "ema" && !emaPairs.empty()) {
    swapEmaWithRaw();
    auto [loss, acc] = evaluateOnce();
    swapEmaWithRaw();
    if (evalMode == "raw") {
      m.testLoss = loss, m.testAcc = acc;
    } else {
      m.rawToo = true;
      m.rawTestLoss = loss, m.rawTestAcc = acc;
    }
  } else if (evalMode == "raw") {
    std::tie(m.testLoss, m.testAcc) = evaluateOnce();
  }
  m.evalSeconds = clock() - t0;
}

/// fp16 loss scaling's state tensors (passes/StepPlan.cpp), if the model
/// has them.
void Run::findLossScaleState() {
  for (const StateTensor &t : info.state) {
    if (t.name == "amp.loss_scale" && t.dtype == DType::F32 && t.shape.empty())
      lossScale = &t;
    if (t.name == "amp.optimizer_steps" && t.dtype == DType::I64 && t.shape.empty())
      optimizerSteps = &t;
  }
}

/// --eval against the model: the EMA copies it keeps, and which weights
/// the evaluation reads (ema when it keeps them, raw otherwise).
void Run::chooseEvalMode() {
  for (const StateTensor &t : info.state) {
    if (t.role != StateRole::Ema)
      continue;
    const std::string source = t.name.substr(4); // "ema.X" averages X
    for (const StateTensor &raw : info.state)
      if (raw.name == source && raw.role != StateRole::Ema)
        emaPairs.emplace_back(&t, &raw);
  }
  if (emaPairs.empty() && (opts.eval == "ema" || opts.eval == "both"))
    fail("--eval " + opts.eval + ": model '" + info.name +
         "' keeps no EMA weights (train.ema in its JSON); its evaluation "
         "reads the raw weights: leave --eval out or use --eval raw");
  evalMode = !opts.eval.empty() ? opts.eval : emaPairs.empty() ? "raw" : "ema";
  if (opts.tta.value_or(false) && !model.hasTta())
    fail("--tta on: model '" + info.name + "' was compiled without test-time "
         "augmentation (eval.tta in its JSON); leave --tta out, or add eval.tta "
         "and run `tcc compile` again");
  if (opts.evalOnly && opts.init.empty() && opts.resume.empty())
    fail("--eval-only scores the weights of a checkpoint: give it with --init FILE "
         "(or --resume FILE); without one the weights are the untrained initial ones");
}

/// A --log-every record: the training metrics of the steps since the last
/// record (the totals are read here: on a device, the only sync inside an
/// epoch, and only where the user asked for records).
void Run::logStep(const StepTotals &totals, double segmentTrain, double start) {
  StepTotals since;
  since.lossSum = totals.lossSum - logged.lossSum;
  since.correct = totals.correct - logged.correct;
  since.count = totals.count - logged.count;
  EpochMetrics m = trainMetrics(since, segmentTrain - loggedTrain, start, false);
  m.stepRecord = true;
  m.epochSeconds.reset();
  emit(m);
  logged = totals;
  loggedTrain = segmentTrain;
}

StepTotals Run::readGlobalTotals() {
  StepTotals totals = model.readTotals();
  if (comm && comm->size() > 1) {
    comm->allReduceSum(&totals.lossSum, 1);
    int64_t counts[2] = {totals.correct, totals.count};
    comm->allReduceSum(counts, 2);
    totals.correct = counts[0];
    totals.count = counts[1];
  }
  return totals;
}

int Run::agreedSignal() {
  int signal = interrupted();
  if (!comm || comm->size() == 1)
    return signal;
  // mpirun passes SIGINT and SIGTERM to every rank, but not at the same
  // step: the ranks stop at the first step after any of them saw one.
  int64_t seen[2] = {signal == SIGTERM, signal != 0 && signal != SIGTERM};
  comm->allReduceSum(seen, 2);
  return seen[0] ? SIGTERM : seen[1] ? SIGINT : 0;
}

/// --comm-timeout to the communicator, with the checkpoint its timeout
/// error names (every rank may be the one that reports, so before the
/// other ranks forget --save).
void Run::configureFaults() {
  const int64_t ranks = info.recipe.train.distributed.ranks;
  if (opts.commTimeout && ranks == 1 && !opts.help)
    warn("--comm-timeout has no effect: this trainer was compiled for one process "
         "(tcc compile --ranks=N builds a distributed one)");
  if (!comm)
    return;
  FaultSettings settings;
  settings.timeoutSeconds = opts.commTimeout.value_or(kDefaultCommTimeoutSeconds);
  settings.checkpoint = opts.save.empty() ? "" : oneLine(opts.save);
  comm->setFaultSettings(settings);
}

/// --checkpoint-every: the state so far to --save, atomically over the
/// last one (the final save at the end of the run is the usual one).
void Run::checkpoint(void *hostCopy) {
  // Every rank comes here; a sharded state is gathered by all of them.
  if (rank != 0 && !sharded)
    return;
  model.awaitSteps();
  memory->download(hostCopy, state, info.stateBytes);
  const void *whole = stateToWrite(hostCopy);
  if (rank != 0)
    return;
  std::string failure;
  std::string written = save(opts.save, whole, failure);
  unblockInterruptSignals();
  if (written != opts.save)
    warn("the periodic checkpoint went to '" + written + "': " + failure);
  lastCheckpoint = clock();
}

/// --checkpoint-every N minutes: rank 0's clock decides; with a sharded
/// state the others, which help gather it, are told (one value per step).
bool Run::periodicCheckpointDue() {
  if (!opts.checkpointMinutes)
    return false;
  bool due = rank == 0 && clock() - lastCheckpoint >= *opts.checkpointMinutes * 60;
  if (sharded) {
    int64_t flag = due ? 1 : 0;
    comm->allReduceSum(&flag, 1);
    due = flag > 0;
  }
  return due;
}

const void *Run::stateToWrite(const void *hostCopy) {
  if (!sharded)
    return hostCopy;
  gatherWholeState(info, wholeInfo, hostCopy, wholeState, *comm);
  return wholeState.data();
}

void Run::emit(EpochMetrics &m) {
  std::string line = metricsLine(m);
  if (metricsFile.isOpen()) {
    std::string error;
    if (!metricsFile.writeLine(line, error))
      fail(error);
  }
  if (!opts.quiet) {
    progress.clear();
    out << line << '\n';
    out.flush();
  }
}

/// A metrics line of the training totals since the last one (no test
/// fields yet).
EpochMetrics Run::trainMetrics(const StepTotals &totals, double segmentTrain,
                               double start, bool final) {
  EpochMetrics m;
  m.step = step;
  m.epoch = static_cast<double>(step) / constants.stepsPerEpoch;
  if (totals.count > 0) {
    m.trainLoss = totals.lossSum / totals.count;
    m.trainAcc = static_cast<double>(totals.correct) / totals.count;
    m.epochSeconds = segmentTrain;
    if (segmentTrain > 0)
      m.imagesPerSecond = totals.count / segmentTrain;
  }
  // The rate of the last step taken, computed as the step computes it
  // (runtime/common/Schedule.h).
  if (step > 0)
    m.lr = info.baseLr * lrFactor(info.schedule, step - 1, constants.stepsPerEpoch,
                                  constants.totalSteps);
  if (lossScale && optimizerSteps) {
    // Read where the totals were read: the device has synchronised anyway.
    float scale = 0;
    int64_t applied = 0;
    const char *base = static_cast<const char *>(state);
    memory->download(&scale, base + lossScale->offset, sizeof scale);
    memory->download(&applied, base + optimizerSteps->offset, sizeof applied);
    m.lossScale = scale;
    m.skippedSteps = step - applied;
  }
  m.elapsedS = clock() - start;
  m.final = final;
  return m;
}

/// A loss that is NaN or infinite never recovers: stop at once, write the
/// metrics line that shows it, and keep --save's last good checkpoint (no
/// evaluation and no save of a state that is garbage).
void Run::stopIfDiverged(const StepTotals &totals, double segmentTrain,
                         double start) {
  if (totals.count == 0 || std::isfinite(totals.lossSum))
    return;
  EpochMetrics m = trainMetrics(totals, segmentTrain, start, /*final=*/true);
  emit(m);
  const double loss = *m.trainLoss;
  const int64_t epoch = (step - 1) / constants.stepsPerEpoch + 1;
  std::string message =
      "training diverged at epoch " + std::to_string(epoch) + " step " +
      std::to_string(step) + " (train_loss is " +
      (std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf") +
      "): lower the learning rate (train.optimizer.lr) or set "
      "train.grad_clip_norm in the model's JSON and run `tcc compile` again";
  if (!opts.save.empty())
    message += "; --save '" + oneLine(opts.save) + "' was not written" +
               (fileExists(opts.save) ? " and keeps the last good checkpoint"
                                      : "");
  // The totals are global: every rank stops here, after the same step.
  failOnEveryRank(message);
}

/// Writes the checkpoint to `path`; when that fails, to the first fallback
/// path that takes it. Returns the path written, with `failure` saying why
/// `path` failed. Fails when the state is not finite or nothing takes it.
std::string Run::save(const std::string &path, const void *hostState,
                      std::string &failure) {
  if (std::string bad = nonFiniteStateTensor(checkpointInfo(), hostState); !bad.empty())
    fail("the trained state is not finite (state tensor " + bad +
         "): not writing '" + oneLine(path) + "'" +
         (fileExists(path) ? ", which keeps the last good checkpoint" : "") +
         "; lower the learning rate (train.optimizer.lr) or set "
         "train.grad_clip_norm in the model's JSON and run `tcc compile` "
         "again");
  CheckpointMeta meta;
  meta.model = info.name;
  meta.fingerprint = info.fingerprint;
  meta.step = step;
  meta.epoch = step / constants.stepsPerEpoch;
  meta.seed = seed;
  meta.epochs = epochs;
  meta.totalSteps = constants.totalSteps;
  meta.precision = precision;
  meta.shuffle = !opts.noShuffle;
  // Signals that arrive now are recorded and change nothing; blocking them
  // keeps EINTR away from the writes.
  blockInterruptSignals();
  std::string error;
  if (saveCheckpoint(path, checkpointInfo(), hostState, meta, error))
    return path;
  failure = error;
  std::string others;
  for (const std::string &fallback : fallbackSavePaths(info.name)) {
    std::string why;
    if (saveCheckpoint(fallback, checkpointInfo(), hostState, meta, why))
      return fallback;
    others += "; " + why;
  }
  fail(failure + "; the fallback paths failed too" + others +
       ": the trained state is lost");
}

void Run::writeProfile(const std::vector<OpTime> &sites, int64_t steps, int64_t warmupSteps) {
  std::string error;
  if (!writeFileAtomically(opts.profile, profileJson(info, sites, steps, warmupSteps), error))
    fail(error);
  if (!opts.quiet)
    err << profileSummary(sites, steps, 12) << "profile: every op in '" << oneLine(opts.profile)
        << "'" << std::endl;
}

/// The command that continues this run from `checkpoint`.
std::string Run::resumeCommand(const std::string &checkpoint) const {
  // A distributed trainer refuses to start without its launcher.
  const int64_t ranks = info.recipe.train.distributed.ranks;
  std::string command = (ranks > 1 ? "mpirun -np " + std::to_string(ranks) + " " : "") +
                        shellQuote(env.program) + " --resume " + shellQuote(checkpoint);
  if (opts.data)
    command += " --data " + shellQuote(*opts.data);
  if (!opts.save.empty())
    command += " --save " + shellQuote(opts.save);
  if (!opts.metrics.empty())
    command += " --metrics " + shellQuote(opts.metrics);
  if (opts.noShuffle)
    command += " --no-shuffle";
  if (opts.noAugment)
    command += " --no-augment";
  if (opts.quiet)
    command += " --quiet";
  return command;
}

int Run::run(const std::vector<std::string> &args) {
  std::string error;
  // Every rank reads the same command line: a bad flag ends them together,
  // without MPI_Abort's banner cutting into rank 0's error line.
  if (!parseOptions(args, opts, error))
    failOnEveryRank(error);
  configureFaults();
  sharded = comm && hasShardedState(info);
  if (sharded)
    wholeInfo = wholeStateInfo(info);
  gathersForEval = sharded && info.recipe.train.distributed.shard == Distributed::Parameters;
  if (gathersForEval)
    evalInfo = wholeStateInfo(info, /*evaluated=*/true);
  savesState = !opts.save.empty();
  // A distributed run: rank 0 alone shows progress and writes the metrics,
  // checkpoints and profile; every rank trains (docs/distributed.md).
  if (rank != 0) {
    opts.quiet = true;
    opts.save.clear();
    opts.metrics.clear();
    opts.profile.clear();
  }
  progress = ProgressLine(err, env.progress && !opts.quiet, clock);
  const Recipe &recipe = info.recipe;
  precision = recipe.train.precision.name();
  if (opts.help) {
    OptionDefaults d;
    d.model = info.name;
    d.dataFormat = DataRecipe::formatName(recipe.data.format);
    d.dataPath = recipe.data.path;
    d.epochs = recipe.train.epochs;
    d.batchSize = recipe.train.batchSize;
    d.seed = recipe.train.seed;
    for (const StateTensor &t : info.state)
      d.hasEma |= t.role == StateRole::Ema;
    d.hasTta = model.hasTta();
    d.ranks = recipe.train.distributed.ranks;
    d.samples = info.predictBatch > 0 && info.sequenceTargets > 0;
    out << helpText(env.program, d);
    out.flush();
    return 0;
  }
  checkLayout(info);
  // train.batch_size, as model.json and `tcc compile --batch-size` say it
  // (info.batchSize is one rank's step: the micro-batches, its slice).
  if (opts.batchSize && *opts.batchSize != recipe.train.batchSize)
    fail("--batch-size " + std::to_string(*opts.batchSize) +
         " differs from the batch size " + std::to_string(recipe.train.batchSize) +
         " this trainer was compiled for; the step is compiled for one batch "
         "size: recompile with `tcc compile MODEL.json --batch-size " +
         std::to_string(*opts.batchSize) + "` (or set train.batch_size in the model)");
  checkTargets();
  lockTargets();
  chooseEvalMode();
  findLossScaleState();
  if (!env.noDevice.empty())
    fail(env.noDevice);
  loadData(recipe);

  // --- state ---------------------------------------------------------------
  memory = env.memory ? env.memory : &hostMemory();
  Buffer stateBuffer(*memory, info.stateBytes, "state arena");
  Buffer scratchBuffer(*memory, info.scratchBytes, "scratch arena");
  state = stateBuffer.get();
  scratch = scratchBuffer.get();
  std::unique_ptr<Buffer> hostMirror;
  hostState = state;
  if (!memory->isHost()) {
    hostMirror =
        std::make_unique<Buffer>(hostMemory(), info.stateBytes, "state copy");
    hostState = hostMirror->get();
  }

  seed = opts.seed ? *opts.seed : recipe.train.seed;
  epochs = opts.epochs ? *opts.epochs : recipe.train.epochs;
  epochsSource = opts.epochs ? "--epochs" : "train.epochs";
  int64_t metaStep = 0;
  if (!opts.resume.empty())
    resumeState(hostState, metaStep);
  else
    initState(hostState);
  memory->upload(state, hostState, info.stateBytes);

  // --- schedule ------------------------------------------------------------
  const Dataset &train = data->train;
  bool augment = !opts.noAugment;
  // The global batch: every rank's slices of it (the communicator checked
  // that the launcher started the ranks the step was compiled for).
  constants.rank = rank;
  constants.ranks = recipe.train.distributed.ranks;
  constants.microBatches = recipe.train.accumulate;
  const int64_t globalBatch = info.batchSize * constants.ranks;
  BatchLoader loader(train, globalBatch, !opts.noShuffle, augment,
                     recipe.train.dropLast, seed, recipe.data.augment, normalize);
  if (train.n > 0 && !loader.check(error))
    fail("the training set in '" + oneLine(dataPath) + "': " + error);
  int64_t stepsPerEpoch = train.n > 0 ? loader.batchesPerEpoch() : 0;
  if (stepsPerEpoch <= 0 && !opts.evalOnly)
    fail("the training set in '" + oneLine(dataPath) + "' has " +
         std::to_string(train.n) + " samples, fewer than one batch of " +
         std::to_string(globalBatch) + " (train.drop_last is true)");
  constants.stepsPerEpoch = std::max<int64_t>(stepsPerEpoch, 1);
  constants.seed = seed; // dropout masks derive from it
  counter = findCounter(info);
  if (!opts.evalOnly)
    checkCounts();
  constants.totalSteps = totalStepsFor(epochs, constants.stepsPerEpoch);
  if (!opts.evalOnly)
    warnFixedScheduleSpan(recipe);
  step = counter ? readCounter(*counter, hostState) : metaStep;
  if (!opts.evalOnly)
    checkStep();

  // Every check has passed: only now may a fresh run truncate the metrics
  // file (a resumed run appends to it).
  if (!opts.metrics.empty() &&
      !metricsFile.open(opts.metrics, !opts.resume.empty(), error))
    fail(error);

  // --- train ---------------------------------------------------------------
  bindBuffers(recipe);
  model.resetTotals();
  if (!opts.profile.empty() && !model.startProfiling())
    fail("--profile: this trainer has no table of its step's ops to time (a model "
         "not generated by tcc compile)");
  std::vector<OpTime> warmup; // --profile: the totals after the run's first step
  const double start = clock();
  lastCheckpoint = start;
  const int64_t runEnd = opts.steps ? std::min(constants.totalSteps, step + *opts.steps)
                                    : constants.totalSteps;
  double segmentTrain = 0; // training seconds of the current epoch
  StepTotals totals;
  int64_t ran = 0;
  bool emittedFinal = false;
  int signal = 0;
  while (!opts.evalOnly && step < constants.totalSteps &&
         !(opts.steps && ran >= *opts.steps)) {
    // Between steps: a signal ends the run here, with a checkpoint.
    if ((signal = agreedSignal()))
      break;
    const double t0 = clock();
    // The switch goes by the step, so a resumed run picks up the right one;
    // a profiled run stays on the step whose ops it times (the same numbers).
    if (info.frozenFromEpoch > 0 && opts.profile.empty() &&
        step >= info.frozenFromEpoch * constants.stepsPerEpoch)
      model.trainStepFrozen();
    else
      model.trainStep();
    ++ran;
    if (!opts.profile.empty() && ran == 1)
      warmup = model.profile();
    if (counter && memory->isHost()) {
      int64_t now = readCounter(*counter, state);
      if (now != step + 1)
        fail("internal error: the compiled step moved the step counter from " +
             std::to_string(step) + " to " + std::to_string(now));
    }
    ++step;
    const bool last =
        step >= constants.totalSteps || (opts.steps && ran >= *opts.steps);
    // On the host reading the totals costs nothing, so the check runs
    // after every step; a device target is checked where it reads them.
    const bool epochEnd = step % constants.stepsPerEpoch == 0;
    const bool logNow = opts.logEvery && step % *opts.logEvery == 0;
    if (memory->isHost() || epochEnd || last || logNow)
      totals = readGlobalTotals();
    // A device target's step only enqueues its work, and reading the totals
    // waits for it: the training time counts that wait.
    segmentTrain += clock() - t0;
    if (memory->isHost())
      stopIfDiverged(totals, segmentTrain, start);
    if (logNow) {
      stopIfDiverged(totals, segmentTrain, start);
      logStep(totals, segmentTrain, start);
    }

    if (epochEnd || last) {
      stopIfDiverged(totals, segmentTrain, start);
      EpochMetrics m = trainMetrics(totals, segmentTrain, start, last);
      evaluate(m);
      m.elapsedS = clock() - start;
      emit(m);
      emittedFinal = last;
      totals = StepTotals();
      logged = StepTotals();
      loggedTrain = 0;
      model.resetTotals();
      segmentTrain = 0;
      if (!last && opts.checkpointEpochs &&
          (step / constants.stepsPerEpoch) % *opts.checkpointEpochs == 0)
        checkpoint(hostState);
    }
    // (after an epoch's checkpoint, which restarts the minutes)
    if (!last && periodicCheckpointDue())
      checkpoint(hostState);
    if (!epochEnd && !last && progress.enabled()) {
      // Counted toward where this run stops: --steps when it comes first.
      std::string text =
          "epoch " + std::to_string(step / constants.stepsPerEpoch + 1) + "/" +
          std::to_string((runEnd + constants.stepsPerEpoch - 1) / constants.stepsPerEpoch) +
          "  step " + std::to_string(step) + "/" + std::to_string(runEnd);
      if (totals.count > 0) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  loss %.4f  acc %s",
                      totals.lossSum / totals.count,
                      percent(static_cast<double>(totals.correct) /
                              totals.count)
                          .c_str());
        text += buf;
        if (segmentTrain > 0) {
          std::snprintf(buf, sizeof buf, "  %.0f img/s",
                        totals.count / segmentTrain);
          text += buf;
        }
      }
      // The remaining steps at this run's average pace, evaluations included.
      const double eta = (clock() - start) / static_cast<double>(ran) *
                         static_cast<double>(runEnd - step);
      text += "  ETA " + durationText(eta);
      progress.update(text);
    }
  }
  if (!signal && (!comm || comm->size() == 1))
    signal = interrupted();
  if (!emittedFinal && !signal) {
    EpochMetrics m = trainMetrics(totals, segmentTrain, start, true);
    evaluate(m);
    m.elapsedS = clock() - start;
    emit(m);
  }
  progress.clear();
  if (signal && ran == 0) {
    err << "interrupted by " << signalName(signal)
        << " before the first step of this run: nothing to save" << std::endl;
    return 128 + signal;
  }

  // --- finish --------------------------------------------------------------
  // Interrupted without --save: the state still goes somewhere.
  const std::string target = signal && opts.save.empty() && rank == 0
                                 ? interruptedSavePath(info.name)
                                 : opts.save;
  // Rank 0 writes: --save, or the interrupted path; a sharded state is
  // gathered by every rank first.
  const bool gathers = sharded && (savesState || signal);
  if (!memory->isHost() || !target.empty() || gathers) {
    model.awaitSteps();
    memory->download(hostState, state, info.stateBytes);
  }
  if (counter && !memory->isHost()) {
    int64_t now = readCounter(*counter, hostState);
    if (now != step)
      fail("internal error: the step counter is " + std::to_string(now) +
           " after " + std::to_string(step) + " steps");
  }
  const void *toWrite = gathers ? stateToWrite(hostState) : hostState;
  if (!target.empty()) {
    std::string failure;
    std::string written = save(target, toWrite, failure);
    if (written != target)
      fail(failure + "; the trained state was saved to '" + oneLine(written) +
           "' instead (move it into place, or continue with: " +
           resumeCommand(written) + ")");
  }
  // After the save: a profile that cannot be written never costs the
  // trained state.
  if (!opts.profile.empty() && ran > 0)
    writeProfile(ran > 1 ? profileSince(model.profile(), warmup) : model.profile(),
                 ran > 1 ? ran - 1 : ran, ran > 1 ? 1 : 0);
  if (signal) {
    err << "interrupted by " << signalName(signal) << " after step " << step
        << " of " << constants.totalSteps << ": saved the state to '"
        << oneLine(target) << "'; resume with: " << resumeCommand(target)
        << std::endl;
    return 128 + signal;
  }
  return 0;
}

} // namespace tcc::rt::detail
