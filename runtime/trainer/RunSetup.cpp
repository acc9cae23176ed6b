//===- RunSetup.cpp - A run's data, state, checks and bind ----------------===//

#include "runtime/trainer/Run.h"

#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Interrupt.h"
#include "runtime/trainer/SaveTarget.h"
#include "runtime/trainer/ShardedState.h"
#include "runtime/trainer/Text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace tcc::rt::detail {

/// Loaded biases the step does not use: folded, with a note per bias.
void Run::foldBiases(const ModelInfo &layout, void *hostState, const std::string &file) {
  for (const std::string &note : foldRemovedBiases(layout, hostState)) {
    progress.clear();
    err << "note: '" << oneLine(file) << "': " << note << std::endl;
  }
}

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
      !checkSaveTarget(opts.save, checkpointSizeBound(checkpointInfo()), env.freeSpace,
                       error))
    fail(error);
  if (!opts.metrics.empty() && !checkMetricsTarget(opts.metrics, error))
    fail(error);
  if (!opts.profile.empty() && !checkProfileTarget(opts.profile, error))
    fail(error);
}

/// One run per checkpoint and metrics file (RunLock.h), taken before any
/// work so that the second run ends at once.
void Run::lockTargets() {
  std::string error;
  if (!opts.save.empty() && !saveLock.acquire(opts.save, "--save", error))
    fail(error);
  if (!opts.metrics.empty() && (opts.save.empty() || RunLock::lockPathFor(opts.metrics) !=
                                                         RunLock::lockPathFor(opts.save)) &&
      !metricsLock.acquire(opts.metrics, "--metrics", error))
    fail(error);
}

void Run::loadData(const Recipe &recipe) {
  dataPath = opts.data ? *opts.data : recipe.data.path;
  if (env.data) {
    data = env.data;
  } else {
    std::string error;
    if (!loadDataset(DataRecipe::formatName(recipe.data.format), dataPath, ownData, error))
      fail(error);
    data = &ownData;
  }
  checkDataset(data->train, "training", dataPath, info);
  checkDataset(data->test, "test", dataPath, info);
  if (!opts.evalOnly && data->train.n == 0)
    fail("the training set in '" + oneLine(dataPath) + "' is empty");

  // Empty: mean 0, std 1; one value: every channel; else one per channel.
  const size_t channels = static_cast<size_t>(data->train.c);
  normalize = NormalizeConfig{recipe.data.mean, recipe.data.std};
  for (const auto *v : {&normalize.mean, &normalize.std})
    if (v->size() > 1 && v->size() != channels)
      fail("the recipe's data.normalize has " +
           std::to_string(normalize.mean.size()) + " means and " +
           std::to_string(normalize.std.size()) +
           " stds, but the data set in '" + oneLine(dataPath) + "' has " +
           std::to_string(channels) + " channels");
}

void Run::initState(void *hostState) {
  if (!sharded)
    return initState(info, hostState);
  // Every rank makes the whole tensors (the same seeds, the same --init)
  // and keeps its chunks, as a resume does.
  std::vector<uint8_t> whole(wholeInfo.stateBytes);
  initState(wholeInfo, whole.data());
  scatterWholeState(info, wholeInfo, whole.data(), hostState, rank);
}

void Run::initState(const ModelInfo &layout, void *hostState) {
  std::string error;
  std::vector<float> whiteningImages;
  WhiteningData whitening;
  if (int64_t images = whiteningImagesNeeded(layout)) {
    const Dataset &train = data->train;
    int64_t n = std::min<int64_t>(train.n, images);
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
  if (!initializeState(layout, hostState, seed, &whitening, error))
    fail(error);
  if (!opts.init.empty()) {
    std::vector<std::string> converted;
    if (!loadStateDict(opts.init, layout, hostState, nullptr, error, &converted))
      fail(error);
    if (!converted.empty()) {
      progress.clear();
      err << "note: '" << oneLine(opts.init) << "': " << converted.size()
          << " tensor(s) rounded to the type the model stores them in: "
          << converted.front() << (converted.size() > 1 ? ", ..." : "") << std::endl;
    }
    foldBiases(layout, hostState, opts.init);
    if (!applyCopyInits(layout, hostState, error))
      fail(error);
  }
}

/// The seed and the epoch count default to the checkpoint's; given
/// explicitly and different, they win with a warning, since they change the
/// rest of the run (another data order; another schedule).
void Run::resumeState(void *hostState, int64_t &metaStep) {
  CheckpointMeta meta;
  std::string error;
  if (sharded) {
    // The file holds the state whole: each rank takes its chunks.
    std::vector<uint8_t> whole(wholeInfo.stateBytes);
    if (!loadCheckpoint(opts.resume, wholeInfo, whole.data(), meta, error))
      fail(error);
    foldBiases(wholeInfo, whole.data(), opts.resume);
    scatterWholeState(info, wholeInfo, whole.data(), hostState, rank);
  } else {
    if (!loadCheckpoint(opts.resume, info, hostState, meta, error))
      fail(error);
    foldBiases(info, hostState, opts.resume);
  }
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
  // The tensors of a mixed-precision step are its fp32 run's: only the
  // metadata tells that the rest of the run computes differently.
  if (!meta.precision.empty() && meta.precision != precision)
    warn(file + " was saved by a run in " + meta.precision + "; this trainer computes in " +
         precision + ", so the remaining steps do too (compile the model with --precision " +
         meta.precision + " to continue the run as it was)");
  if (meta.shuffle == opts.noShuffle && !opts.evalOnly)
    warn(opts.noShuffle
             ? "--no-shuffle: " + file + " was saved by a run that shuffled; the remaining "
               "epochs read the data in file order (omit --no-shuffle to continue exactly)"
             : file + " was saved by a --no-shuffle run; the remaining epochs are shuffled "
               "(pass --no-shuffle to continue exactly)");
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
  b.batch.augment = recipe.data.augment;
  b.batch.shuffle = !opts.noShuffle;
  b.batch.augmentOn = !opts.noAugment;
  b.batch.sequence = info.sequenceTargets > 0;
  b.batch.targets = std::max<int64_t>(1, info.sequenceTargets);
  b.batch.ignoreIndex = info.ignoreIndex;
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
  b.comm = comm;
  model.bind(b);
}

/// A piecewise_linear schedule's knots are fixed epochs (or steps); cosine
/// and one_cycle span whatever run they are in. --epochs other than
/// train.epochs therefore leaves the knots where the recipe put them: said
/// here with the rate the run ends at, as --resume says it of its epochs.
void Run::warnFixedScheduleSpan(const Recipe &recipe) {
  const ScheduleDesc &s = info.schedule;
  if (!opts.epochs || *opts.epochs == recipe.train.epochs ||
      s.type != ScheduleDesc::PiecewiseLinear || s.pointCount < 2)
    return;
  const double perEpoch = static_cast<double>(constants.stepsPerEpoch);
  const double lastKnot = s.pointT[s.pointCount - 1] / (s.perEpoch ? 1.0 : perEpoch);
  const double endRate =
      info.baseLr * lrFactor(s, constants.totalSteps - 1, constants.stepsPerEpoch,
                             constants.totalSteps);
  warn("--epochs " + numberText(*opts.epochs) + " differs from train.epochs " +
       numberText(recipe.train.epochs) + ", and the piecewise_linear learning-rate schedule keeps "
       "the knots it was compiled with (the last at epoch " + numberText(lastKnot) +
       "): the run's last step has lr " + numberText(endRate) + "; for a schedule that fits "
       "the run, set train.epochs and the schedule's points and run tcc compile again");
}

} // namespace tcc::rt::detail
