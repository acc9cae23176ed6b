//===- TrainerTest.cpp - The trainer loop with a fake CompiledModel -------===//

#include "FakeModel.h"

#include "runtime/trainer/Safetensors.h"
#include "runtime/trainer/SaveTarget.h"
#include "runtime/trainer/Trainer.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unistd.h>

using namespace tcc::rt;
using tcc::test::FakeModel;
using tcc::test::makeFakeData;
using tcc::test::readFile;
using tcc::test::TempDir;

namespace {

struct Result {
  int status;
  std::string out, err;
};

Result train(FakeModel &model, const DataSplit &data,
             std::vector<std::string> args) {
  std::ostringstream out, err;
  TrainerEnv env;
  env.data = &data;
  double now = 0;
  env.clock = [&] { return now += 0.001; };
  int status = runTrainer(model, args, out, err, env);
  return {status, out.str(), err.str()};
}

std::vector<nlohmann::json> lines(const std::string &text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(nlohmann::json::parse(line));
  return out;
}

/// A safetensors file's tensors by name (bytes), without metadata.
std::map<std::string, std::vector<uint8_t>> tensors(const std::string &path) {
  SafetensorsFile f;
  std::string error;
  EXPECT_TRUE(readSafetensors(path, f, error)) << error;
  std::map<std::string, std::vector<uint8_t>> out;
  for (Tensor &t : f.tensors)
    out[t.name] = t.data;
  return out;
}

void expectOneErrorLine(const Result &r, const std::string &contains) {
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_NE(r.err.find(contains), std::string::npos) << r.err;
}

} // namespace

TEST(Trainer, TrainsAndWritesMetricsEveryEpoch) {
  TempDir dir;
  FakeModel model;
  DataSplit data = makeFakeData();
  std::string metrics = dir.file("m.jsonl");
  Result r = train(model, data, {"--metrics", metrics});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(model.trainCalls, 10); // 40 / 8 = 5 steps per epoch, 2 epochs
  EXPECT_EQ(model.evalCalls, 2 * 3); // 13 test samples in batches of 5
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(readFile(metrics), r.out);
  EXPECT_EQ(ls[0]["epoch"], 1);
  EXPECT_EQ(ls[0]["step"], 5);
  EXPECT_FALSE(ls[0].contains("final"));
  EXPECT_EQ(ls[1]["epoch"], 2);
  EXPECT_EQ(ls[1]["step"], 10);
  EXPECT_EQ(ls[1]["final"], true);
  for (auto &l : ls) {
    EXPECT_EQ(l["type"], "epoch");
    for (const char *key : {"train_loss", "train_acc", "test_loss", "test_acc",
                            "elapsed_s", "epoch_seconds", "eval_seconds",
                            "images_per_second"})
      EXPECT_TRUE(l[key].is_number()) << key << " in " << l.dump();
    EXPECT_GE(l["test_acc"].get<double>(), 0.0);
    EXPECT_LE(l["test_acc"].get<double>(), 1.0);
    EXPECT_GT(l["test_loss"].get<double>(), 0.0);
    // The model keeps no EMA: no raw_* fields.
    EXPECT_FALSE(l.contains("raw_test_acc"));
  }
  // The fake model learns its easy data set.
  EXPECT_GT(ls[1]["test_acc"].get<double>(), 0.9);
  EXPECT_LT(ls[1]["train_loss"].get<double>(), ls[0]["train_loss"].get<double>());
  EXPECT_LT(ls[1]["test_loss"].get<double>(), ls[0]["test_loss"].get<double>());
}

// --log-every 2: a step record of the steps since the previous one, at
// steps 2, 4, 6, 8, 10 (with the epoch records at 5 and 10); the steps'
// samples add up to the epoch's.
TEST(Trainer, LogEveryWritesStepRecords) {
  FakeModel model;
  DataSplit data = makeFakeData();
  Result r = train(model, data, {"--log-every", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto ls = lines(r.out);
  std::vector<std::string> kinds;
  std::vector<int64_t> steps;
  for (auto &l : ls) {
    kinds.push_back(l["type"]);
    steps.push_back(l["step"]);
    if (l["type"] == "step") {
      EXPECT_FALSE(l.contains("test_acc")) << l.dump();
      EXPECT_TRUE(l["train_loss"].is_number()) << l.dump();
      EXPECT_TRUE(l["lr"].is_number()) << l.dump();
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"step", "step", "epoch", "step",
                                             "step", "step", "epoch"}));
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 4, 5, 6, 8, 10, 10}));
  // Steps 1-2 and 3-4 of epoch 1 (8 samples each) and step 5 make the
  // epoch: the epoch's loss is the sample-weighted mean of the records'.
  const double epochLoss = ls[2]["train_loss"];
  const double first4 = (ls[0]["train_loss"].get<double>() + ls[1]["train_loss"].get<double>()) / 2;
  EXPECT_NE(epochLoss, first4); // step 5 counts too
  // Step 6's record covers step 6 only (the epoch record reset the count).
  EXPECT_EQ(ls[3]["epoch"], 1.2);
}

// --eval: the fake model's evaluation reads its EMA weight, as compiled
// models do; raw swaps the raw weight in for the evaluation and back, both
// does both. The state after the run is the same in every mode.
TEST(Trainer, EvalModesEmaRawBoth) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::map<std::string, nlohmann::json> last;
  std::map<std::string, std::string> saved;
  for (const char *mode : {"ema", "raw", "both"}) {
    FakeModel model;
    std::string save = dir.file(std::string(mode) + ".safetensors");
    Result r = train(model, data, {"--eval", mode, "--steps", "3", "--save", save});
    ASSERT_EQ(r.status, 0) << r.err;
    last[mode] = lines(r.out).back();
    saved[mode] = readFile(save);
  }
  EXPECT_EQ(last["both"]["test_loss"], last["ema"]["test_loss"]);
  EXPECT_EQ(last["both"]["test_acc"], last["ema"]["test_acc"]);
  EXPECT_EQ(last["both"]["raw_test_loss"], last["raw"]["test_loss"]);
  EXPECT_EQ(last["both"]["raw_test_acc"], last["raw"]["test_acc"]);
  EXPECT_NE(last["raw"]["test_loss"], last["ema"]["test_loss"]);
  EXPECT_FALSE(last["ema"].contains("raw_test_loss"));
  EXPECT_EQ(saved["raw"], saved["ema"]);
  EXPECT_EQ(saved["both"], saved["ema"]);
}

TEST(Trainer, QuietPrintsNothing) {
  TempDir dir;
  FakeModel model;
  DataSplit data = makeFakeData();
  Result r = train(model, data, {"--quiet", "--metrics", dir.file("m.jsonl")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(lines(readFile(dir.file("m.jsonl"))).size(), 2u);
}

TEST(Trainer, FractionalEpochsAndSteps) {
  FakeModel model;
  DataSplit data = makeFakeData();
  Result r = train(model, data, {"--epochs", "1.5"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(ls[1]["step"], 8); // ceil(1.5 * 5)
  EXPECT_EQ(ls[1]["epoch"], 1.6);
  EXPECT_EQ(totalStepsFor(0.3, 10), 3);
  EXPECT_EQ(totalStepsFor(9.9, 97), 961);
  EXPECT_EQ(totalStepsFor(1, 97), 97);

  FakeModel stopped;
  r = train(stopped, data, {"--steps", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  ls = lines(r.out);
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0]["step"], 3);
  EXPECT_EQ(ls[0]["final"], true);
  EXPECT_EQ(stopped.trainCalls, 3);
}

TEST(Trainer, ResumeIsBitIdentical) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string full = dir.file("full.safetensors"),
              half = dir.file("half.safetensors"),
              resumed = dir.file("resumed.safetensors");
  // 6 steps straight (crossing the epoch boundary at step 5)...
  FakeModel a;
  ASSERT_EQ(train(a, data, {"--steps", "6", "--save", full}).status, 0);
  // ... versus 3 steps, save, resume in a fresh model, 3 more.
  FakeModel b;
  ASSERT_EQ(train(b, data, {"--steps=3", "--save=" + half}).status, 0);
  FakeModel c;
  Result r = train(c, data, {"--resume", half, "--steps", "3", "--save",
                             resumed});
  ASSERT_EQ(r.status, 0) << r.err;
  auto fullState = tensors(full), resumedState = tensors(resumed),
       halfState = tensors(half);
  ASSERT_EQ(fullState.size(), resumedState.size());
  for (auto &[name, bytes] : fullState)
    EXPECT_EQ(bytes, resumedState[name]) << name;
  // The test can fail: stopping at 3 gives another state.
  EXPECT_NE(fullState["fc.weight"], halfState["fc.weight"]);
  int64_t step;
  std::memcpy(&step, resumedState["step"].data(), 8);
  EXPECT_EQ(step, 6);
  // The resumed run's metrics continue the step count.
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(ls[0]["step"], 5);
  EXPECT_EQ(ls[1]["step"], 6);
  // Without --no-shuffle and with a different seed, the run differs.
  FakeModel d;
  std::string other = dir.file("other.safetensors");
  ASSERT_EQ(train(d, data, {"--steps", "6", "--seed", "8", "--save", other})
                .status,
            0);
  EXPECT_NE(tensors(other)["fc.weight"], fullState["fc.weight"]);
}

TEST(Trainer, ResumeUsesTheCheckpointsSeedAndEpochs) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string full = dir.file("full.safetensors"),
              half = dir.file("half.safetensors"),
              resumed = dir.file("resumed.safetensors");
  FakeModel a;
  ASSERT_EQ(train(a, data, {"--seed", "99", "--epochs", "3", "--save", full})
                .status,
            0);
  FakeModel b;
  ASSERT_EQ(train(b, data, {"--seed", "99", "--epochs", "3", "--steps", "7",
                            "--save", half})
                .status,
            0);
  FakeModel c;
  Result r = train(c, data, {"--resume", half, "--save", resumed});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(c.trainCalls, 8);
  EXPECT_EQ(tensors(full), tensors(resumed));
  // Resuming a finished run trains nothing and reports once.
  FakeModel d;
  r = train(d, data, {"--resume", full});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(d.trainCalls, 0);
  EXPECT_EQ(lines(r.out).size(), 1u);
}

namespace {
/// A model with a second training step (ModelInfo::frozenFromEpoch): both
/// compute the same, and it records which ran at which step.
class FrozenStepModel : public FakeModel {
public:
  explicit FrozenStepModel(int64_t fromEpoch) { mi.frozenFromEpoch = fromEpoch; }
  void trainStep() override { run(false); }
  void trainStepFrozen() override { run(true); }
  std::vector<std::pair<int64_t, bool>> steps; ///< (step counter, frozen)

private:
  void run(bool frozen) {
    int64_t step = -1;
    for (const StateTensor &t : mi.state)
      if (t.name == "step")
        std::memcpy(&step, static_cast<char *>(buffers().state) + t.offset, 8);
    steps.push_back({step, frozen});
    FakeModel::trainStep();
  }
};
} // namespace

TEST(Trainer, FrozenStepRunsFromItsEpochAlsoAfterResume) {
  TempDir dir;
  DataSplit data = makeFakeData(); // 5 steps per epoch
  std::string half = dir.file("half.safetensors");
  FrozenStepModel a(1);
  ASSERT_EQ(train(a, data, {"--steps", "7"}).status, 0);
  std::vector<std::pair<int64_t, bool>> expected = {
      {0, false}, {1, false}, {2, false}, {3, false}, {4, false}, {5, true}, {6, true}};
  EXPECT_EQ(a.steps, expected);
  // Resumed before the switch, the run switches at the same step ...
  FrozenStepModel b(1);
  ASSERT_EQ(train(b, data, {"--steps", "3", "--save", half}).status, 0);
  FrozenStepModel c(1);
  ASSERT_EQ(train(c, data, {"--resume", half, "--steps", "4"}).status, 0);
  expected = {{3, false}, {4, false}, {5, true}, {6, true}};
  EXPECT_EQ(c.steps, expected);
  // ... and resumed after it, it starts on the frozen step.
  FrozenStepModel d(0); // 0: no second step
  ASSERT_EQ(train(d, data, {"--steps", "6", "--save", half}).status, 0);
  EXPECT_EQ(d.steps.back(), std::make_pair(int64_t{5}, false));
  FrozenStepModel e(1);
  ASSERT_EQ(train(e, data, {"--resume", half, "--steps", "1"}).status, 0);
  expected = {{6, true}};
  EXPECT_EQ(e.steps, expected);
}

namespace {
/// Records the batches each step gathers.
class RecordingModel : public FakeModel {
public:
  void trainStep() override {
    FakeModel::trainStep();
    seenImages.push_back(images);
    seenLabels.push_back(labels);
    runs.push_back(buffers().control->run);
  }
  std::vector<std::vector<float>> seenImages;
  std::vector<std::vector<int64_t>> seenLabels;
  std::vector<RunConstants> runs;
};
} // namespace

TEST(Trainer, StepSIsBatchSModStepsPerEpochOfEpochSDivStepsPerEpoch) {
  DataSplit data = makeFakeData();
  RecordingModel model;
  ASSERT_EQ(train(model, data, {"--epochs", "2.4"}).status, 0);
  ASSERT_EQ(model.seenImages.size(), 12u); // ceil(2.4 * 5)
  // The recipe's loader: seed 7, flip + translate 1, mean 0.5, std 0.25.
  AugmentConfig augment;
  augment.flip = true;
  augment.translate = 1;
  NormalizeConfig normalize{{0.5f}, {0.25f}};
  BatchLoader loader(data.train, 8, true, true, true, 7, augment, normalize);
  std::vector<float> images(8 * 16);
  std::vector<int64_t> labels(8);
  for (int64_t s = 0; s < 12; ++s) {
    int64_t valid;
    loader.batch(s / 5, s % 5, images.data(), labels.data(), valid);
    EXPECT_EQ(model.seenImages[s], images) << "step " << s;
    EXPECT_EQ(model.seenLabels[s], labels) << "step " << s;
    EXPECT_EQ(model.runs[s].stepsPerEpoch, 5);
    EXPECT_EQ(model.runs[s].totalSteps, 12);
  }
  // Epochs differ (shuffled), so this checks the epoch, not just the index.
  EXPECT_NE(model.seenLabels[0], model.seenLabels[5]);
}

TEST(Trainer, InitLoadsWeightsAndRefreshesEma) {
  TempDir dir;
  DataSplit data = makeFakeData();
  // Train a little, save, and start a new run from those weights.
  FakeModel a;
  std::string trained = dir.file("a.safetensors"),
              evaluated = dir.file("b.safetensors");
  ASSERT_EQ(train(a, data, {"--steps", "4", "--save", trained}).status, 0);
  FakeModel b;
  Result r = train(b, data, {"--init", trained, "--eval-only", "--save",
                             evaluated});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(b.trainCalls, 0);
  auto ls = lines(r.out);
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_TRUE(ls[0]["train_loss"].is_null());
  EXPECT_TRUE(ls[0]["test_acc"].is_number());
  EXPECT_EQ(ls[0]["final"], true);
  auto t = tensors(trained), e = tensors(evaluated);
  EXPECT_EQ(e["fc.weight"], t["fc.weight"]);
  EXPECT_EQ(e["norm.running_mean"], t["norm.running_mean"]);
  EXPECT_EQ(e["ema.fc.weight"], t["fc.weight"]) << "EMA starts as the weights";
  EXPECT_NE(e["optimizer.fc.weight.momentum_buffer"],
            t["optimizer.fc.weight.momentum_buffer"]);
  int64_t step;
  std::memcpy(&step, e["step"].data(), 8);
  EXPECT_EQ(step, 0);
}

TEST(Trainer, NoShuffleNoAugmentChangeTheRun) {
  TempDir dir;
  DataSplit data = makeFakeData();
  auto run = [&](std::vector<std::string> extra) {
    FakeModel m;
    std::string path = dir.file("x.safetensors");
    extra.insert(extra.end(), {"--steps", "2", "--save", path});
    EXPECT_EQ(train(m, data, extra).status, 0);
    return tensors(path)["fc.weight"];
  };
  auto base = run({});
  EXPECT_EQ(base, run({}));
  EXPECT_NE(base, run({"--no-shuffle"}));
  EXPECT_NE(base, run({"--no-augment"}));
}

TEST(Trainer, ShortLastBatchIsCompleted) {
  // drop_last false: 42 samples, batch 8 -> 6 batches, the last with 2 real
  // samples and 6 taken from the epoch's first batch.
  RecordingModel model;
  model.mi.recipe.train.dropLast = false;
  DataSplit data = makeFakeData(42);
  Result r = train(model, data, {"--epochs", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(model.trainCalls, 6);
  const auto &last = model.seenImages[5], &first = model.seenImages[0];
  const auto &lastLabels = model.seenLabels[5], &firstLabels = model.seenLabels[0];
  for (int k = 2; k < 8; ++k) {
    EXPECT_TRUE(std::equal(last.begin() + k * 16, last.begin() + (k + 1) * 16,
                           first.begin() + (k - 2) * 16))
        << k;
    EXPECT_EQ(lastLabels[k], firstLabels[k - 2]) << k;
  }
}

TEST(Trainer, ProgressLineOnlyOnATerminal) {
  FakeModel model;
  DataSplit data = makeFakeData();
  std::ostringstream out, err;
  TrainerEnv env;
  env.data = &data;
  env.progress = true;
  double now = 0;
  env.clock = [&] { return now += 0.5; };
  ASSERT_EQ(runTrainer(model, {}, out, err, env), 0) << err.str();
  EXPECT_NE(err.str().find("\repoch 1/2  step 1/10"), std::string::npos)
      << err.str();
  EXPECT_EQ(err.str().find('\n'), std::string::npos);
  std::ostringstream out2, err2;
  FakeModel quiet;
  ASSERT_EQ(runTrainer(quiet, {"--quiet"}, out2, err2, env), 0);
  EXPECT_EQ(err2.str(), "");
}

TEST(Trainer, HelpShowsTheRecipesDefaults) {
  FakeModel model;
  DataSplit data = makeFakeData();
  Result r = train(model, data, {"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--batch-size N"), std::string::npos);
  EXPECT_NE(r.out.find("default: 8"), std::string::npos);
  EXPECT_NE(r.out.find("fake_linear"), std::string::npos);
  EXPECT_EQ(model.trainCalls, 0);
}

// A one-process trainer has no collective to time out: the flag is taken,
// and said to do nothing (docs/distributed.md#faults).
TEST(Trainer, CommTimeoutOnOneProcessWarns) {
  FakeModel model;
  DataSplit data = makeFakeData();
  Result r = train(model, data, {"--steps", "1", "--comm-timeout", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "warning: --comm-timeout has no effect: this trainer was compiled for one "
                   "process (tcc compile --ranks=N builds a distributed one)\n");
  expectOneErrorLine(train(model, data, {"--comm-timeout", "-1"}),
                     "--comm-timeout: expected a positive number of seconds");
}

TEST(Trainer, UserErrorsAreOneLine) {
  DataSplit data = makeFakeData();
  FakeModel model;
  expectOneErrorLine(train(model, data, {"--batch-size", "16"}),
                     "--batch-size 16 differs from the batch size 8 this "
                     "trainer was compiled for");
  expectOneErrorLine(train(model, data, {"--batch-size", "16"}),
                     "recompile with `tcc compile MODEL.json --batch-size 16`");
  EXPECT_EQ(train(model, data, {"--batch-size", "8", "--steps", "1"}).status,
            0);
  expectOneErrorLine(train(model, data, {"--epoch", "1"}),
                     "did you mean '--epochs'");
  expectOneErrorLine(train(model, data, {"--resume", "/nonexistent/x"}),
                     "cannot read '/nonexistent/x'");
  expectOneErrorLine(train(model, data, {"--init", "/nonexistent/x"}),
                     "cannot read '/nonexistent/x'");
  TempDir dir;
  expectOneErrorLine(train(model, data, {"--steps", "1", "--save", dir.path()}),
                     "--save " + dir.path() + ": is a directory");
  EXPECT_EQ(model.trainCalls, 1) << "checked before training";
  expectOneErrorLine(
      train(model, data, {"--save", dir.file("no/such/dir/c.safetensors")}),
      "directory '" + dir.file("no/such/dir") + "' does not exist");
  expectOneErrorLine(
      train(model, data, {"--metrics", dir.path()}), dir.path());
  tcc::test::writeFile(dir.file("bad.safetensors"),
                       std::string("\x05\0\0\0\0\0\0\0{\n\"", 11));
  expectOneErrorLine(train(model, data, {"--init", dir.file("bad.safetensors")}),
                     "bad.safetensors: ");
}

TEST(Trainer, DataMustFitTheModel) {
  FakeModel model; // [1, 4, 4], 3 classes
  DataSplit wrong = makeFakeData(40, 13, 5);
  expectOneErrorLine(train(model, wrong, {}),
                     "the training set in '/nonexistent' has images [1, 5, 5], "
                     "but model 'fake_linear' takes input [1, 4, 4]");
  DataSplit labels = makeFakeData();
  labels.test.labels[4] = 3;
  expectOneErrorLine(train(model, labels, {}),
                     "the test set in '/nonexistent' has label 3 (sample 4), "
                     "but model 'fake_linear' has 3 classes");
  DataSplit small = makeFakeData(5);
  expectOneErrorLine(train(model, small, {}),
                     "fewer than one batch of 8");
  DataSplit broken = makeFakeData();
  broken.train.u8.pop_back();
  expectOneErrorLine(train(model, broken, {}), "inconsistent sizes");
  // A flat model input [16] takes [1, 4, 4] images.
  FakeModel flat;
  flat.mi.inputShape = {16};
  EXPECT_EQ(train(flat, labels = makeFakeData(), {"--steps", "1"}).status, 0);
}

TEST(Trainer, LoadsTheRecipesDataFromDisk) {
  TempDir dir;
  DataSplit data = makeFakeData();
  tcc::test::writeNpyDataset(dir.path(), data);
  FakeModel model(tcc::test::fakeRecipe(dir.path()));
  std::ostringstream out, err;
  ASSERT_EQ(runTrainer(model, {"--steps", "2"}, out, err), 0) << err.str();
  EXPECT_EQ(model.trainCalls, 2);
  // --data overrides the recipe's path; a bad one is one error line.
  std::ostringstream out2, err2;
  FakeModel other(tcc::test::fakeRecipe("/nonexistent"));
  EXPECT_EQ(runTrainer(other, {"--data", dir.path(), "--steps", "1"}, out2,
                       err2),
            0)
      << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(runTrainer(other, {}, out3, err3), 1);
  EXPECT_EQ(err3.str().rfind("error: ", 0), 0u) << err3.str();
  EXPECT_EQ(err3.str().find('\n'), err3.str().size() - 1) << err3.str();
}

//===----------------------------------------------------------------------===//
// Keeping the user's work: divergence, counts, checkpoints, interruptions
//===----------------------------------------------------------------------===//

namespace {

Result trainWith(FakeModel &model, const DataSplit &data,
                 std::vector<std::string> args, TrainerEnv env) {
  std::ostringstream out, err;
  env.data = &data;
  double now = 0;
  env.clock = [&] { return now += 0.001; };
  int status = runTrainer(model, args, out, err, env);
  return {status, out.str(), err.str()};
}

/// Device memory that is not the host's (but host RAM underneath): the
/// trainer must treat the totals as read only at epoch ends.
class FakeDevice final : public DeviceMemory {
public:
  bool isHost() const override { return false; }
  void *allocate(size_t bytes) override {
    return hostMemory().allocate(bytes);
  }
  void release(void *p) override { hostMemory().release(p); }
  void upload(void *d, const void *h, size_t n) override {
    std::memcpy(d, h, n);
  }
  void download(void *h, const void *d, size_t n) override {
    std::memcpy(h, d, n);
  }
};

int64_t savedStep(const std::string &path) {
  int64_t step = -1;
  auto t = tensors(path);
  std::memcpy(&step, t["step"].data(), 8);
  return step;
}

} // namespace

TEST(Trainer, DivergenceStopsTheRunAndKeepsTheLastGoodCheckpoint) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string save = dir.file("c.safetensors"),
              metrics = dir.file("m.jsonl");
  FakeModel good;
  ASSERT_EQ(train(good, data, {"--steps", "2", "--save", save}).status, 0);
  const std::string lastGood = readFile(save);
  // A learning rate of 1e38 overflows the weights: the loss of step 7 is NaN (with
  // this data order).
  FakeModel model;
  model.learningRate = 1e38f;
  Result r = train(model, data, {"--save", save, "--metrics", metrics});
  expectOneErrorLine(r, "training diverged at epoch 2 step 7 (train_loss is "
                        "nan): lower the learning rate (train.optimizer.lr) "
                        "or set train.grad_clip_norm in the model's JSON and "
                        "run `tcc compile` again; --save '" +
                            save +
                            "' was not written and keeps the last good "
                            "checkpoint");
  EXPECT_EQ(model.trainCalls, 7) << "stopped at once, not at the end";
  EXPECT_EQ(readFile(save), lastGood);
  auto ls = lines(readFile(metrics));
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_TRUE(ls[0]["train_loss"].is_number());
  EXPECT_EQ(ls[1]["step"], 7);
  EXPECT_EQ(ls[1]["train_loss"], "NaN") << "never null";
  EXPECT_TRUE(ls[1]["test_acc"].is_null()) << "a diverged state is not evaluated";
  EXPECT_EQ(ls[1]["final"], true);
  EXPECT_EQ(readFile(metrics), r.out);
}

TEST(Trainer, DivergenceOnADeviceIsFoundWhereTheTotalsAreRead) {
  // No per-step read of the totals on a device: the NaN of step 7 shows at
  // the end of epoch 2 (step 10).
  DataSplit data = makeFakeData();
  FakeModel model;
  model.learningRate = 1e38f;
  FakeDevice device;
  TrainerEnv env;
  env.memory = &device;
  Result r = trainWith(model, data, {}, env);
  expectOneErrorLine(r, "training diverged at epoch 2 step 10 (train_loss is "
                        "nan)");
  EXPECT_EQ(model.trainCalls, 10);
  FakeModel fine;
  r = trainWith(fine, data, {}, env);
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Trainer, CountsBeyondTheStepCounterAreRefused) {
  TempDir dir;
  DataSplit data = makeFakeData();
  FakeModel model;
  expectOneErrorLine(
      train(model, data, {"--epochs", "1e30"}),
      "--epochs 1e+30: 1e+30 epochs of 5 steps are 5e+30 steps, but this "
      "trainer counts at most 9223372036854775807 steps (its step counter "
      "'step' is I64); use at most 1.84467440737096e+18 epochs");
  expectOneErrorLine(train(model, data, {"--epochs", "1844674407370955200"}),
                     "this trainer counts at most 9223372036854775807 steps");
  EXPECT_EQ(train(model, data, {"--epochs", "1e18", "--steps", "1"}).status, 0)
      << "5e18 steps still count";
  FakeModel recipe(tcc::test::fakeRecipe("/nonexistent", 1e300));
  expectOneErrorLine(train(recipe, data, {}), "train.epochs 1e+300: ");
  // A counter stored as F32 counts exactly only up to 2^24.
  FakeModel f32;
  for (StateTensor &t : f32.mi.state)
    if (t.name == "step")
      t.dtype = DType::F32;
  expectOneErrorLine(train(f32, data, {"--epochs", "4e6"}),
                     "this trainer counts at most 16777216 steps (its step "
                     "counter 'step' is F32); use at most 3355443 epochs");
  expectOneErrorLine(train(f32, data, {"--steps", "20000000"}),
                     "--steps 20000000: this trainer counts at most 16777216 "
                     "steps");
  EXPECT_EQ(model.trainCalls + recipe.trainCalls + f32.trainCalls, 1);
}

TEST(Trainer, CheckpointBeyondTheRunIsRefused) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string save = dir.file("c.safetensors"), metrics = dir.file("m.jsonl");
  FakeModel a;
  ASSERT_EQ(train(a, data, {"--steps", "7", "--save", save}).status, 0);
  tcc::test::writeFile(metrics, "{\"earlier\":1}\n");
  FakeModel b;
  Result r = train(b, data, {"--resume", save, "--epochs", "1", "--metrics",
                             metrics});
  // --epochs differs from the checkpoint's: a warning line comes first.
  size_t warning = r.err.find('\n');
  ASSERT_NE(warning, std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("warning: --epochs 1 differs", 0), 0u) << r.err;
  r.err = r.err.substr(warning + 1);
  expectOneErrorLine(r, "'" + save + "' is at step 7 (epoch 1.4), beyond the "
                        "end of this run at step 5 (1 epochs of 5 steps, from "
                        "--epochs); to train on, pass --epochs 2 or more");
  EXPECT_EQ(b.trainCalls, 0);
  EXPECT_EQ(readFile(metrics), "{\"earlier\":1}\n");
  // At the very end is fine: nothing to train, one line.
  FakeModel c;
  r = train(c, data, {"--resume", save, "--epochs", "1.4"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(c.trainCalls, 0);
}

TEST(Trainer, ResumeWithAnotherSeedOrEpochsWarnsAndUsesThem) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string save = dir.file("c.safetensors");
  FakeModel a;
  ASSERT_EQ(train(a, data, {"--steps", "3", "--save", save}).status, 0);
  RecordingModel same;
  Result r = train(same, data, {"--resume", save, "--seed", "7", "--epochs",
                                "2", "--steps", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << "the checkpoint's own values: no warning";
  RecordingModel changed;
  r = train(changed, data, {"--resume", save, "--seed", "5", "--epochs", "3",
                            "--steps", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "warning: --seed 5 differs from seed 7 saved in '" + save +
                "'; using 5: the remaining steps see another data order and "
                "augmentation than the saved run would have (omit --seed to "
                "continue it exactly)\n"
                "warning: --epochs 3 differs from the 2 epochs saved in '" +
                save +
                "'; using 3: the learning-rate schedule now spans 3 epochs "
                "instead of 2 (omit --epochs to continue exactly)\n");
  ASSERT_EQ(changed.runs.size(), 1u);
  EXPECT_EQ(changed.runs[0].seed, 5u);
  EXPECT_EQ(changed.runs[0].totalSteps, 15);
  EXPECT_NE(changed.seenLabels[0], same.seenLabels[0]) << "seed 5 is used";
}

TEST(Trainer, TheRunsSeedReachesTheStep) {
  // Dropout masks derive from RunConstants::seed: --seed must reach it.
  DataSplit data = makeFakeData();
  RecordingModel a, b;
  ASSERT_EQ(train(a, data, {"--steps", "1"}).status, 0);
  ASSERT_EQ(train(b, data, {"--steps", "1", "--seed", "99"}).status, 0);
  EXPECT_EQ(a.runs[0].seed, 7u);
  EXPECT_EQ(b.runs[0].seed, 99u);
}

TEST(Trainer, SaveTargetIsCheckedBeforeTraining) {
  TempDir dir;
  DataSplit data = makeFakeData();
  FakeModel model;
  expectOneErrorLine(train(model, data, {"--save", "/dev/full"}),
                     "--save /dev/full: is a character device, not a regular "
                     "file");
  TrainerEnv env;
  env.freeSpace = [](const std::string &) -> std::optional<uint64_t> {
    return 1000;
  };
  expectOneErrorLine(
      trainWith(model, data, {"--save", dir.file("c.safetensors")}, env),
      "--save " + dir.file("c.safetensors") + ": the checkpoint needs about "
      "8.1 kB, but the file system of '" + dir.path() + "' has 1.0 kB free; "
      "free some space or save elsewhere");
  EXPECT_EQ(model.trainCalls, 0);
  // The estimate is an upper bound of what a save writes.
  std::string written = dir.file("written.safetensors");
  ASSERT_EQ(train(model, data, {"--steps", "1", "--save", written}).status, 0);
  EXPECT_LE(std::filesystem::file_size(written),
            checkpointSizeBound(model.info()));
  model.trainCalls = 0;
  // A bad command line never truncates an existing metrics file.
  std::string metrics = dir.file("m.jsonl");
  tcc::test::writeFile(metrics, "{\"earlier\":1}\n");
  expectOneErrorLine(train(model, data, {"--metrics", metrics, "--save",
                                         "/dev/full"}),
                     "/dev/full");
  expectOneErrorLine(train(model, data, {"--metrics", metrics, "--epochs",
                                         "1e30"}),
                     "--epochs");
  expectOneErrorLine(train(model, data, {"--metrics", metrics, "--resume",
                                         dir.file("none")}),
                     "none");
  EXPECT_EQ(readFile(metrics), "{\"earlier\":1}\n");
  EXPECT_EQ(model.trainCalls, 0);
}

TEST(Trainer, AFailedFinalSaveGoesToAFallbackPath) {
  TempDir dir, tmp;
  DataSplit data = makeFakeData();
  std::string sub = dir.file("sub");
  std::filesystem::create_directory(sub);
  std::string save = sub + "/c.safetensors";
  // The save directory disappears during training.
  FakeModel model;
  model.afterStep = [&](int64_t step) {
    if (step == 2)
      std::filesystem::remove_all(sub);
  };
  const char *oldTmp = std::getenv("TMPDIR");
  std::string savedTmp = oldTmp ? oldTmp : "";
  setenv("TMPDIR", tmp.path().c_str(), 1);
  Result r = train(model, data, {"--steps", "3", "--save", save});
  if (oldTmp)
    setenv("TMPDIR", savedTmp.c_str(), 1);
  else
    unsetenv("TMPDIR");
  std::string fallback = tmp.file("fake_linear.rescued-" +
                                  std::to_string(getpid()) + ".safetensors");
  expectOneErrorLine(r, "cannot write '" + save + "': ");
  EXPECT_NE(r.err.find("; the trained state was saved to '" + fallback +
                       "' instead (move it into place, or continue with: "
                       "train --resume " +
                       fallback + " --save " + save + ")"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(savedStep(fallback), 3);
}

TEST(Trainer, InterruptFinishesTheStepSavesAndResumesBitIdentically) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string full = dir.file("full.safetensors"),
              save = dir.file("c.safetensors"),
              metrics = dir.file("m.jsonl");
  FakeModel whole;
  ASSERT_EQ(train(whole, data, {"--save", full}).status, 0);

  FakeModel model;
  TrainerEnv env;
  env.interrupted = [&] { return model.trainCalls >= 7 ? SIGINT : 0; };
  Result r = trainWith(model, data, {"--save", save, "--metrics", metrics},
                       env);
  EXPECT_EQ(r.status, 130);
  EXPECT_EQ(r.err, "interrupted by SIGINT after step 7 of 10: saved the state "
                   "to '" + save + "'; resume with: train --resume " + save +
                   " --save " + save + " --metrics " + metrics + "\n");
  EXPECT_EQ(model.trainCalls, 7);
  EXPECT_EQ(savedStep(save), 7);
  EXPECT_EQ(lines(readFile(metrics)).size(), 1u) << "epoch 1 only";

  FakeModel resumed;
  r = train(resumed, data, {"--resume", save, "--save", save, "--metrics",
                            metrics});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(resumed.trainCalls, 3);
  EXPECT_EQ(tensors(save), tensors(full));
  auto ls = lines(readFile(metrics));
  ASSERT_EQ(ls.size(), 2u) << "appended on resume";
  EXPECT_EQ(ls[1]["step"], 10);
}

TEST(Trainer, InterruptWithoutSaveUsesTheDefaultPath) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  FakeModel model;
  TrainerEnv env;
  env.interrupted = [&] { return model.trainCalls >= 2 ? SIGTERM : 0; };
  Result r = trainWith(model, data, {"--quiet"}, env);
  FakeModel early;
  TrainerEnv before;
  before.interrupted = [] { return SIGINT; };
  Result none = trainWith(early, data, {"--save", "x.safetensors"}, before);
  std::filesystem::current_path(cwd);
  EXPECT_EQ(r.status, 143);
  EXPECT_EQ(r.err, "interrupted by SIGTERM after step 2 of 10: saved the "
                   "state to 'fake_linear.interrupted.safetensors'; resume "
                   "with: train --resume fake_linear.interrupted.safetensors "
                   "--quiet\n");
  EXPECT_EQ(savedStep(dir.file("fake_linear.interrupted.safetensors")), 2);
  // Interrupted before its first step, a run has nothing to save.
  EXPECT_EQ(none.status, 130);
  EXPECT_EQ(none.err, "interrupted by SIGINT before the first step of this "
                      "run: nothing to save\n");
  EXPECT_EQ(early.trainCalls, 0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.safetensors")));
}

// --checkpoint-every 1: after epoch 1 (step 5) --save holds that state while
// epoch 2 runs; a run resumed from it finishes the same as the whole run.
TEST(Trainer, CheckpointEveryWritesEachEpochAndResumes) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string save = dir.file("c.safetensors"), early = dir.file("early.safetensors");
  FakeModel model;
  model.afterStep = [&](int64_t step) {
    if (step == 5)
      EXPECT_FALSE(std::filesystem::exists(save)) << "not before the epoch ends";
    if (step == 6)
      std::filesystem::copy_file(save, early);
  };
  Result r = train(model, data, {"--checkpoint-every", "1", "--save", save});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(early));
  FakeModel resumed;
  Result rest = train(resumed, data, {"--resume", early, "--save", dir.file("r.safetensors")});
  ASSERT_EQ(rest.status, 0) << rest.err;
  EXPECT_EQ(resumed.trainCalls, 5);
  EXPECT_EQ(tensors(dir.file("r.safetensors")), tensors(save));
}

// --checkpoint-every in minutes: due after the first step here (the test
// clock runs fast), then written between steps.
TEST(Trainer, CheckpointEveryMinutes) {
  TempDir dir;
  DataSplit data = makeFakeData();
  std::string save = dir.file("c.safetensors");
  FakeModel model;
  bool seen = false;
  model.afterStep = [&](int64_t step) {
    if (step == 4)
      seen = std::filesystem::exists(save);
  };
  Result r = train(model, data, {"--checkpoint-every", "0.0001m", "--save", save});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(seen);
}
