//===- TrainerTest.cpp - The trainer loop with a fake CompiledModel -------===//

#include "FakeModel.h"

#include "runtime/trainer/Safetensors.h"
#include "runtime/trainer/Trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>

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
    for (const char *key : {"train_loss", "train_acc", "test_acc", "elapsed_s",
                            "images_per_s"})
      EXPECT_TRUE(l[key].is_number()) << key << " in " << l.dump();
    // The evaluation step does not compute the loss: null, never a fake 0.
    EXPECT_TRUE(l["test_loss"].is_null()) << l.dump();
    EXPECT_GE(l["test_acc"].get<double>(), 0.0);
    EXPECT_LE(l["test_acc"].get<double>(), 1.0);
  }
  // The fake model learns its easy data set.
  EXPECT_GT(ls[1]["test_acc"].get<double>(), 0.9);
  EXPECT_LT(ls[1]["train_loss"].get<double>(), ls[0]["train_loss"].get<double>());
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
/// Records the batches the trainer passes to each step.
class RecordingModel : public FakeModel {
public:
  void trainStep(void *state, void *scratch, const RunConstants &run,
                 const float *images, const int64_t *labels,
                 StepTotals &totals) override {
    const int64_t sample = 16, batch = mi.batchSize;
    seenImages.emplace_back(images, images + batch * sample);
    seenLabels.emplace_back(labels, labels + batch);
    runs.push_back(run);
    FakeModel::trainStep(state, scratch, run, images, labels, totals);
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
  std::string recipe = tcc::test::fakeRecipe();
  recipe.replace(recipe.find("\"drop_last\": true"), 17, "\"drop_last\": false");
  RecordingModel model;
  model.mi.recipeJson = recipe;
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

TEST(Trainer, UserErrorsAreOneLine) {
  DataSplit data = makeFakeData();
  FakeModel model;
  expectOneErrorLine(train(model, data, {"--batch-size", "16"}),
                     "--batch-size 16 differs from the batch size 8 this "
                     "trainer was compiled for");
  expectOneErrorLine(train(model, data, {"--batch-size", "16"}),
                     "tcc compile");
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
