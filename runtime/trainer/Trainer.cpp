//===- Trainer.cpp - The trainer program around a CompiledModel ------------===//

#include "runtime/trainer/Trainer.h"

#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Interrupt.h"
#include "runtime/trainer/Metrics.h"
#include "runtime/trainer/Options.h"
#include "runtime/trainer/SaveTarget.h"
#include "runtime/trainer/Text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt {

namespace {

using Json = nlohmann::json;

/// A user error: one line, printed as "error: <message>".
struct UserError {
  std::string message;
};

[[noreturn]] void fail(const std::string &message) { throw UserError{message}; }

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

class HostMemory final : public DeviceMemory {
public:
  bool isHost() const override { return true; }
  void *allocate(size_t bytes) override {
    size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded);
    if (p)
      std::memset(p, 0, rounded);
    return p;
  }
  void release(void *pointer) override { std::free(pointer); }
  void upload(void *device, const void *host, size_t bytes) override {
    if (device != host && bytes)
      std::memcpy(device, host, bytes);
  }
  void download(void *host, const void *device, size_t bytes) override {
    if (device != host && bytes)
      std::memcpy(host, device, bytes);
  }
};

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

//===----------------------------------------------------------------------===//
// Data checks
//===----------------------------------------------------------------------===//

void checkDataset(const Dataset &d, const char *which, const std::string &path,
                  const ModelInfo &info) {
  const std::string where =
      std::string("the ") + which + " set in '" + oneLine(path) + "'";
  const int64_t sample = d.c * d.h * d.w;
  if (d.n < 0 || d.c < 0 || d.h < 0 || d.w < 0 ||
      static_cast<int64_t>(d.labels.size()) != d.n ||
      (d.isFloat ? static_cast<int64_t>(d.f32.size())
                 : static_cast<int64_t>(d.u8.size())) != d.n * sample)
    fail("internal error: " + where + " was loaded with inconsistent sizes");
  std::vector<int64_t> shape = {d.c, d.h, d.w};
  bool ok;
  if (info.inputShape.size() == 3) {
    ok = shape == info.inputShape;
  } else {
    int64_t n = 1;
    for (int64_t x : info.inputShape)
      n *= x;
    ok = n == sample;
  }
  if (!ok)
    fail(where + " has images " + shapeText(shape) + ", but model '" +
         info.name + "' takes input " + shapeText(info.inputShape));
  for (int64_t i = 0; i < d.n; ++i)
    if (d.labels[i] < 0 || d.labels[i] >= info.classes)
      fail(where + " has label " + std::to_string(d.labels[i]) +
           " (sample " + std::to_string(i) + "), but model '" + info.name +
           "' has " + std::to_string(info.classes) + " classes [0, " +
           std::to_string(info.classes) + ")");
}

//===----------------------------------------------------------------------===//
// State helpers
//===----------------------------------------------------------------------===//

const StateTensor *findCounter(const ModelInfo &info) {
  for (const StateTensor &t : info.state)
    if (t.name == "step")
      return &t;
  return nullptr;
}

int64_t readCounter(const StateTensor &t, const void *hostState) {
  return static_cast<int64_t>(
      loadValue(t.dtype, static_cast<const uint8_t *>(hostState) + t.offset));
}

void checkLayout(const ModelInfo &info) {
  if (info.batchSize < 1)
    fail("internal error: the compiled model has batch size " +
         std::to_string(info.batchSize));
  if (info.classes < 1)
    fail("internal error: the compiled model has " +
         std::to_string(info.classes) + " classes");
  for (const StateTensor &t : info.state) {
    for (int64_t d : t.shape)
      if (d < 0)
        fail("internal error: state tensor '" + t.name +
             "' has a negative dimension");
    if (t.offset > info.stateBytes || t.numBytes() > info.stateBytes - t.offset)
      fail("internal error: state tensor '" + t.name +
           "' lies outside the state arena");
  }
}

/// The largest step count a counter of `dtype` holds exactly.
int64_t largestCount(DType dtype) {
  switch (dtype) {
  case DType::I64:
    return INT64_MAX;
  case DType::F32:
    return int64_t(1) << 24;
  case DType::F16:
    return 2048;
  case DType::BF16:
    return 256;
  case DType::U8:
    return 255;
  }
  return INT64_MAX;
}

/// "2", "0.3", "1e+30".
std::string numberText(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * x);
  return buf;
}

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

class Run {
public:
  Run(CompiledModel &model, std::ostream &out, std::ostream &err,
      const TrainerEnv &env)
      : model(model), info(model.info()), out(out), err(err), env(env),
        clock(env.clock ? env.clock : steadySeconds),
        progress(err, false, clock) {}

  int run(const std::vector<std::string> &args);

private:
  void checkTargets();
  void loadData(const Recipe &recipe);
  void initState(void *hostState);
  void resumeState(void *hostState, int64_t &metaStep);
  void checkCounts();
  void checkStep();
  void evaluate(EpochMetrics &m);
  void emit(EpochMetrics &m);
  void bindBuffers(const Recipe &recipe);
  EpochMetrics trainMetrics(const StepTotals &totals, double segmentTrain,
                            double start, bool final);
  void stopIfDiverged(const StepTotals &totals, double segmentTrain,
                      double start);
  std::string save(const std::string &path, const void *hostState,
                   std::string &failure);
  std::string resumeCommand(const std::string &checkpoint) const;
  void warn(const std::string &message);
  int interrupted() const { return env.interrupted ? env.interrupted() : 0; }

  CompiledModel &model;
  const ModelInfo &info;
  std::ostream &out, &err;
  const TrainerEnv &env;
  std::function<double()> clock;
  ProgressLine progress; ///< enabled once --quiet is known

  TrainOptions opts;
  DataSplit ownData;
  const DataSplit *data = nullptr;
  std::string dataPath;
  NormalizeConfig normalize;
  DeviceMemory *memory = nullptr;
  void *state = nullptr, *scratch = nullptr;
  MetricsFile metricsFile;

  uint64_t seed = 0;
  double epochs = 1;
  std::string epochsSource; ///< names where `epochs` came from, for errors
  RunConstants constants;
  const StateTensor *counter = nullptr;
  int64_t step = 0;

  /// Device copies of what the step reads besides the arenas (none on the
  /// host, where the step reads the loaded data set in place).
  std::vector<std::unique_ptr<Buffer>> resident;
  std::vector<float> mean, stdev; ///< per channel, for the host
  StepControl hostControl;
  StepControl *control = nullptr;
};

void Run::warn(const std::string &message) {
  progress.clear();
  err << "warning: " << oneLine(message) << std::endl;
}

/// Everything the run will write is checked before the first step: a typo
/// or a full disk must not cost a run, and nothing is created or truncated
/// here.
void Run::checkTargets() {
  std::string error;
  if (!opts.save.empty() &&
      !checkSaveTarget(opts.save, checkpointSizeBound(info), env.freeSpace,
                       error))
    fail(error);
  if (!opts.metrics.empty() && !checkMetricsTarget(opts.metrics, error))
    fail(error);
}

void Run::loadData(const Recipe &recipe) {
  dataPath = opts.data ? *opts.data : recipe.dataPath;
  if (env.data) {
    data = env.data;
  } else {
    if (recipe.dataFormat.empty())
      fail("the model's recipe names no data format (data.format)");
    std::string error;
    if (!loadDataset(recipe.dataFormat, dataPath, ownData, error))
      fail(error);
    data = &ownData;
  }
  checkDataset(data->train, "training", dataPath, info);
  checkDataset(data->test, "test", dataPath, info);
  if (!opts.evalOnly && data->train.n == 0)
    fail("the training set in '" + oneLine(dataPath) + "' is empty");

  // Empty: mean 0, std 1; one value: every channel; else one per channel.
  const size_t channels = static_cast<size_t>(data->train.c);
  normalize = recipe.normalize;
  for (const auto *v : {&normalize.mean, &normalize.std})
    if (v->size() > 1 && v->size() != channels)
      fail("the recipe's data.normalize has " +
           std::to_string(normalize.mean.size()) + " means and " +
           std::to_string(normalize.std.size()) +
           " stds, but the data set in '" + oneLine(dataPath) + "' has " +
           std::to_string(channels) + " channels");
}

void Run::initState(void *hostState) {
  std::string error;
  std::vector<float> whiteningImages;
  WhiteningData whitening;
  if (needsWhiteningData(info)) {
    const Dataset &train = data->train;
    int64_t n = std::min<int64_t>(train.n, kWhiteningImages);
    if (n == 0)
      fail("patch-whitening init needs training images, but the training "
           "set in '" + oneLine(dataPath) + "' is empty");
    BatchLoader first(train, n, /*shuffle=*/false, /*augment=*/false,
                      /*dropLast=*/false, seed, AugmentConfig(), normalize);
    if (!first.check(error))
      fail("the training set in '" + oneLine(dataPath) + "': " + error);
    whiteningImages.resize(
        static_cast<size_t>(n * train.c * train.h * train.w));
    std::vector<int64_t> ignored(static_cast<size_t>(n));
    int64_t valid = 0;
    first.batch(0, 0, whiteningImages.data(), ignored.data(), valid);
    whitening = {whiteningImages.data(), valid, train.c, train.h, train.w};
  }
  if (!initializeState(info, hostState, seed, &whitening, error))
    fail(error);
  if (!opts.init.empty()) {
    if (!loadStateDict(opts.init, info, hostState, nullptr, error))
      fail(error);
    if (!applyCopyInits(info, hostState, error))
      fail(error);
  }
}

/// The seed and the epoch count default to the checkpoint's; given
/// explicitly and different, they win with a warning, since they change the
/// rest of the run (another data order; another schedule).
void Run::resumeState(void *hostState, int64_t &metaStep) {
  CheckpointMeta meta;
  std::string error;
  if (!loadCheckpoint(opts.resume, info, hostState, meta, error))
    fail(error);
  metaStep = meta.step;
  const std::string file = "'" + oneLine(opts.resume) + "'";
  if (!opts.seed)
    seed = meta.seed;
  else if (*opts.seed != meta.seed)
    warn("--seed " + std::to_string(*opts.seed) + " differs from seed " +
         std::to_string(meta.seed) + " saved in " + file + "; using " +
         std::to_string(*opts.seed) +
         ": the remaining steps see another data order and augmentation "
         "than the saved run would have (omit --seed to continue it exactly)");
  if (meta.epochs > 0) {
    if (!opts.epochs) {
      epochs = meta.epochs;
      epochsSource = "the epochs saved in " + file;
    } else if (*opts.epochs != meta.epochs) {
      warn("--epochs " + numberText(*opts.epochs) + " differs from the " +
           numberText(meta.epochs) + " epochs saved in " + file + "; using " +
           numberText(*opts.epochs) +
           ": the learning-rate schedule now spans " +
           numberText(*opts.epochs) + " epochs instead of " +
           numberText(meta.epochs) + " (omit --epochs to continue exactly)");
    }
  }
}

/// The run's step count must fit int64 and the step counter's dtype (an F32
/// counter counts exactly only up to 2^24).
void Run::checkCounts() {
  const int64_t limit = counter ? largestCount(counter->dtype) : INT64_MAX;
  const std::string countable =
      "this trainer counts at most " + std::to_string(limit) + " steps" +
      (counter ? std::string(" (its step counter '") + counter->name +
                     "' is " + dtypeName(counter->dtype) + ")"
               : std::string());
  const double perEpoch = static_cast<double>(constants.stepsPerEpoch);
  const double steps = epochs * perEpoch;
  // totalStepsFor saturates at INT64_MAX: that value means "too many".
  const int64_t total = totalStepsFor(epochs, constants.stepsPerEpoch);
  if (!(steps <= static_cast<double>(limit)) || total > limit ||
      total == INT64_MAX)
    fail(epochsSource + " " + numberText(epochs) + ": " + numberText(epochs) +
         " epochs of " + std::to_string(constants.stepsPerEpoch) +
         " steps are " + numberText(steps) + " steps, but " + countable +
         "; use at most " +
         numberText(std::floor(static_cast<double>(limit) / perEpoch)) +
         " epochs");
  if (opts.steps && *opts.steps > limit)
    fail("--steps " + std::to_string(*opts.steps) + ": " + countable);
}

/// A checkpoint past the end of the run would train nothing.
void Run::checkStep() {
  if (step < 0)
    fail("the step counter in the state is negative (" + std::to_string(step) +
         ")");
  if (step <= constants.totalSteps)
    return;
  const int64_t perEpoch = constants.stepsPerEpoch;
  fail((opts.resume.empty() ? std::string("the state")
                            : "'" + oneLine(opts.resume) + "'") +
       " is at step " + std::to_string(step) + " (epoch " +
       numberText(static_cast<double>(step) / perEpoch) +
       "), beyond the end of this run at step " +
       std::to_string(constants.totalSteps) + " (" + numberText(epochs) +
       " epochs of " + std::to_string(perEpoch) + " steps, from " +
       epochsSource + "); to train on, pass --epochs " +
       std::to_string(step / perEpoch + 1) + " or more");
}

/// Makes the data set and the normalisation resident where the step runs,
/// writes the run constants to the control block, and binds it all.
void Run::bindBuffers(const Recipe &recipe) {
  // Returns `bytes` of `host` as the step sees them: in place on the host,
  // a device copy otherwise.
  auto place = [&](const void *host, size_t bytes, const char *what) {
    if (memory->isHost())
      return const_cast<void *>(host);
    resident.push_back(std::make_unique<Buffer>(*memory, bytes, what));
    memory->upload(resident.back()->get(), host, bytes);
    return resident.back()->get();
  };
  auto view = [&](const Dataset &d, const char *pixelsWhat,
                  const char *labelsWhat) {
    DataView v;
    v.isFloat = d.isFloat;
    v.n = d.n;
    v.pixels = d.isFloat ? place(d.f32.data(), d.f32.size() * sizeof(float),
                                 pixelsWhat)
                         : place(d.u8.data(), d.u8.size(), pixelsWhat);
    v.labels = static_cast<const int64_t *>(
        place(d.labels.data(), d.labels.size() * sizeof(int64_t), labelsWhat));
    return v;
  };
  const Dataset &train = data->train;
  StepBuffers b;
  b.state = state;
  b.scratch = scratch;
  b.train = view(train, "training images", "training labels");
  b.test = view(data->test, "test images", "test labels");
  b.batch.c = train.c;
  b.batch.h = train.h;
  b.batch.w = train.w;
  b.batch.augment = recipe.augment;
  b.batch.shuffle = !opts.noShuffle;
  b.batch.augmentOn = !opts.noAugment;
  // Empty: mean 0, std 1; one value: every channel; else one per channel.
  for (int64_t ch = 0; ch < train.c; ++ch) {
    auto pick = [&](const std::vector<float> &v, float fallback) {
      return v.empty() ? fallback : v[v.size() == 1 ? 0 : ch];
    };
    mean.push_back(pick(normalize.mean, 0.0f));
    stdev.push_back(pick(normalize.std, 1.0f));
  }
  b.batch.mean = static_cast<const float *>(
      place(mean.data(), mean.size() * sizeof(float), "normalisation"));
  b.batch.std = static_cast<const float *>(
      place(stdev.data(), stdev.size() * sizeof(float), "normalisation"));
  hostControl.run = constants;
  control = static_cast<StepControl *>(
      place(&hostControl, sizeof hostControl, "step control block"));
  b.control = control;
  model.bind(b);
}

void Run::evaluate(EpochMetrics &m) {
  const Dataset &test = data->test;
  if (test.n == 0)
    return;
  const int64_t batch = info.evalBatchSize > 0 ? info.evalBatchSize
                                               : info.batchSize;
  model.resetTotals();
  for (int64_t i = 0, n = (test.n + batch - 1) / batch; i < n; ++i)
    model.evalStep();
  StepTotals totals = model.readTotals();
  model.resetTotals();
  // The evaluation step counts correct predictions only; test_loss stays
  // null rather than a misleading 0.
  if (totals.count > 0)
    m.testAcc = static_cast<double>(totals.correct) / totals.count;
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
    if (segmentTrain > 0)
      m.imagesPerS = totals.count / segmentTrain;
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
  fail(message);
}

/// Writes the checkpoint to `path`; when that fails, to the first fallback
/// path that takes it. Returns the path written, with `failure` saying why
/// `path` failed. Fails when the state is not finite or nothing takes it.
std::string Run::save(const std::string &path, const void *hostState,
                      std::string &failure) {
  if (std::string bad = nonFiniteStateTensor(info, hostState); !bad.empty())
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
  // Signals that arrive now are recorded and change nothing; blocking them
  // keeps EINTR away from the writes.
  blockInterruptSignals();
  std::string error;
  if (saveCheckpoint(path, info, hostState, meta, error))
    return path;
  failure = error;
  std::string others;
  for (const std::string &fallback : fallbackSavePaths(info.name)) {
    std::string why;
    if (saveCheckpoint(fallback, info, hostState, meta, why))
      return fallback;
    others += "; " + why;
  }
  fail(failure + "; the fallback paths failed too" + others +
       ": the trained state is lost");
}

/// The command that continues this run from `checkpoint`.
std::string Run::resumeCommand(const std::string &checkpoint) const {
  std::string command =
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
  if (!parseOptions(args, opts, error))
    fail(error);
  progress = ProgressLine(err, env.progress && !opts.quiet, clock);
  Recipe recipe;
  if (!parseRecipe(info.recipeJson, recipe, error))
    fail("internal error: the recipe compiled into the model is invalid: " +
         error);
  if (opts.help) {
    OptionDefaults d;
    d.model = info.name;
    d.dataFormat = recipe.dataFormat;
    d.dataPath = recipe.dataPath;
    d.epochs = recipe.epochs;
    d.batchSize = info.batchSize;
    d.seed = recipe.seed;
    out << helpText(env.program, d);
    out.flush();
    return 0;
  }
  checkLayout(info);
  if (opts.batchSize && *opts.batchSize != info.batchSize)
    fail("--batch-size " + std::to_string(*opts.batchSize) +
         " differs from the batch size " + std::to_string(info.batchSize) +
         " this trainer was compiled for; the step is compiled for one batch "
         "size: set train.batch_size in the model's JSON and run `tcc "
         "compile` again");
  checkTargets();
  loadData(recipe);

  // --- state ---------------------------------------------------------------
  memory = env.memory ? env.memory : &hostMemory();
  Buffer stateBuffer(*memory, info.stateBytes, "state arena");
  Buffer scratchBuffer(*memory, info.scratchBytes, "scratch arena");
  state = stateBuffer.get();
  scratch = scratchBuffer.get();
  std::unique_ptr<Buffer> hostMirror;
  void *hostState = state;
  if (!memory->isHost()) {
    hostMirror =
        std::make_unique<Buffer>(hostMemory(), info.stateBytes, "state copy");
    hostState = hostMirror->get();
  }

  seed = opts.seed ? *opts.seed : recipe.seed;
  epochs = opts.epochs ? *opts.epochs : recipe.epochs;
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
  BatchLoader loader(train, info.batchSize, !opts.noShuffle, augment,
                     recipe.dropLast, seed, recipe.augment, normalize);
  if (train.n > 0 && !loader.check(error))
    fail("the training set in '" + oneLine(dataPath) + "': " + error);
  int64_t stepsPerEpoch = train.n > 0 ? loader.batchesPerEpoch() : 0;
  if (stepsPerEpoch <= 0 && !opts.evalOnly)
    fail("the training set in '" + oneLine(dataPath) + "' has " +
         std::to_string(train.n) + " samples, fewer than one batch of " +
         std::to_string(info.batchSize) + " (train.drop_last is true)");
  constants.stepsPerEpoch = std::max<int64_t>(stepsPerEpoch, 1);
  constants.seed = seed; // dropout masks derive from it
  counter = findCounter(info);
  if (!opts.evalOnly)
    checkCounts();
  constants.totalSteps = totalStepsFor(epochs, constants.stepsPerEpoch);
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
  const double start = clock();
  double segmentTrain = 0; // training seconds of the current epoch
  StepTotals totals;
  int64_t ran = 0;
  bool emittedFinal = false;
  int signal = 0;
  while (!opts.evalOnly && step < constants.totalSteps &&
         !(opts.steps && ran >= *opts.steps)) {
    // Between steps: a signal ends the run here, with a checkpoint.
    if ((signal = interrupted()))
      break;
    const double t0 = clock();
    model.trainStep();
    ++ran;
    if (counter && memory->isHost()) {
      int64_t now = readCounter(*counter, state);
      if (now != step + 1)
        fail("internal error: the compiled step moved the step counter from " +
             std::to_string(step) + " to " + std::to_string(now));
    }
    ++step;
    segmentTrain += clock() - t0;
    const bool last =
        step >= constants.totalSteps || (opts.steps && ran >= *opts.steps);
    // On the host reading the totals costs nothing, so the check runs
    // after every step; a device target is checked where it reads them.
    if (memory->isHost() || step % constants.stepsPerEpoch == 0 || last)
      totals = model.readTotals();
    if (memory->isHost())
      stopIfDiverged(totals, segmentTrain, start);

    if (step % constants.stepsPerEpoch == 0 || last) {
      stopIfDiverged(totals, segmentTrain, start);
      EpochMetrics m = trainMetrics(totals, segmentTrain, start, last);
      evaluate(m);
      m.elapsedS = clock() - start;
      emit(m);
      emittedFinal = last;
      totals = StepTotals();
      model.resetTotals();
      segmentTrain = 0;
    } else if (progress.enabled()) {
      std::string text =
          "epoch " + std::to_string(step / constants.stepsPerEpoch + 1) + "/" +
          std::to_string((constants.totalSteps + constants.stepsPerEpoch - 1) /
                         constants.stepsPerEpoch) +
          "  step " + std::to_string(step) + "/" +
          std::to_string(constants.totalSteps);
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
      progress.update(text);
    }
  }
  if (!signal)
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
  const std::string target = signal && opts.save.empty()
                                 ? interruptedSavePath(info.name)
                                 : opts.save;
  if (!memory->isHost() || !target.empty())
    memory->download(hostState, state, info.stateBytes);
  if (counter && !memory->isHost()) {
    int64_t now = readCounter(*counter, hostState);
    if (now != step)
      fail("internal error: the step counter is " + std::to_string(now) +
           " after " + std::to_string(step) + " steps");
  }
  if (!target.empty()) {
    std::string failure;
    std::string written = save(target, hostState, failure);
    if (written != target)
      fail(failure + "; the trained state was saved to '" + oneLine(written) +
           "' instead (move it into place, or continue with: " +
           resumeCommand(written) + ")");
  }
  if (signal) {
    err << "interrupted by " << signalName(signal) << " after step " << step
        << " of " << constants.totalSteps << ": saved the state to '"
        << oneLine(target) << "'; resume with: " << resumeCommand(target)
        << std::endl;
    return 128 + signal;
  }
  return 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

DeviceMemory &hostMemory() {
  static HostMemory memory;
  return memory;
}

int64_t totalStepsFor(double epochs, int64_t stepsPerEpoch) {
  double x = epochs * static_cast<double>(stepsPerEpoch);
  if (!(x > 0))
    return 0;
  if (x >= 9.2e18)
    return INT64_MAX;
  double nearest = std::nearbyint(x);
  if (std::abs(x - nearest) <= 1e-9 * std::max(1.0, x))
    return static_cast<int64_t>(nearest);
  return static_cast<int64_t>(std::ceil(x));
}

bool parseRecipe(const std::string &text, Recipe &out, std::string &error) {
  out = Recipe();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return true;
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception &e) {
    error = oneLine(e.what());
    return false;
  }
  if (!j.is_object()) {
    error = "not a JSON object";
    return false;
  }
  try {
    auto section = [&](const char *name) -> Json {
      auto it = j.find(name);
      if (it == j.end() || it->is_null())
        return Json::object();
      if (!it->is_object())
        throw std::runtime_error(std::string(name) + " is not an object");
      return *it;
    };
    Json train = section("train"), data = section("data"),
         eval = section("eval");
    out.epochs = train.value("epochs", 1.0);
    if (!(out.epochs > 0) || !std::isfinite(out.epochs))
      throw std::runtime_error("train.epochs must be positive");
    out.seed = train.value("seed", uint64_t(0));
    out.dropLast = train.value("drop_last", true);
    out.batchSize = train.value("batch_size", int64_t(0));
    out.dataFormat = data.value("format", std::string());
    out.dataPath = data.value("path", std::string());
    if (data.contains("augment") && data["augment"].is_object()) {
      const Json &a = data["augment"];
      out.augment.cropPadding = a.value("random_crop_padding", int64_t(0));
      out.augment.flip = a.value("flip", false);
      out.augment.translate = a.value("translate", int64_t(0));
      out.augment.cutout = a.value("cutout", int64_t(0));
    }
    if (data.contains("normalize") && data["normalize"].is_object()) {
      const Json &n = data["normalize"];
      out.normalize.mean = n.value("mean", std::vector<float>());
      out.normalize.std = n.value("std", std::vector<float>());
    }
    out.evalBatchSize = eval.value("batch_size", int64_t(0));
  } catch (const std::exception &e) {
    error = oneLine(e.what());
    return false;
  }
  return true;
}

int runTrainer(CompiledModel &model, const std::vector<std::string> &args,
               std::ostream &out, std::ostream &err, const TrainerEnv &env) {
  std::string message;
  try {
    Run run(model, out, err, env);
    return run.run(args);
  } catch (const UserError &e) {
    message = e.message;
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
  if (model.info().target == "cuda") {
    env.memory = tccDeviceMemory ? tccDeviceMemory() : nullptr;
    if (!env.memory) {
      std::cerr << "error: this trainer was compiled for the cuda target, "
                   "but its runtime has no CUDA memory provider "
                   "(tccDeviceMemory)"
                << std::endl;
      return 1;
    }
  }
  installInterruptHandlers();
  env.interrupted = interruptSignal;
  std::ios::sync_with_stdio(true);
  return runTrainer(model, args, std::cout, std::cerr, env);
}

} // namespace tcc::rt
