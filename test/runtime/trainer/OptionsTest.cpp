//===- OptionsTest.cpp - The trainer's command line -----------------------===//

#include "runtime/trainer/Options.h"

#include <gtest/gtest.h>

using namespace tcc::rt;

namespace {
std::string parseError(std::vector<std::string> args) {
  TrainOptions o;
  std::string error;
  EXPECT_FALSE(parseOptions(args, o, error));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}
} // namespace

TEST(Options, Defaults) {
  TrainOptions o;
  std::string error;
  ASSERT_TRUE(parseOptions({}, o, error));
  EXPECT_FALSE(o.data || o.epochs || o.steps || o.batchSize || o.seed);
  EXPECT_TRUE(o.init.empty() && o.save.empty() && o.resume.empty() &&
              o.metrics.empty());
  EXPECT_FALSE(o.noShuffle || o.noAugment || o.evalOnly || o.quiet || o.help);
}

TEST(Options, BothValueForms) {
  TrainOptions o;
  std::string error;
  ASSERT_TRUE(parseOptions({"--data", "/d", "--epochs=2.5", "--steps", "7",
                            "--batch-size=64", "--seed", "18446744073709551615",
                            "--init=i.safetensors", "--save", "s.safetensors",
                            "--metrics=m.jsonl", "--no-shuffle", "--no-augment",
                            "--eval-only", "--quiet"},
                           o, error))
      << error;
  EXPECT_EQ(*o.data, "/d");
  EXPECT_EQ(*o.epochs, 2.5);
  EXPECT_EQ(*o.steps, 7);
  EXPECT_EQ(*o.batchSize, 64);
  EXPECT_EQ(*o.seed, 18446744073709551615ull);
  EXPECT_EQ(o.init, "i.safetensors");
  EXPECT_EQ(o.save, "s.safetensors");
  EXPECT_EQ(o.metrics, "m.jsonl");
  EXPECT_TRUE(o.noShuffle && o.noAugment && o.evalOnly && o.quiet);
  ASSERT_TRUE(parseOptions({"--resume", "r.safetensors", "--data=a=b"}, o,
                           error));
  EXPECT_EQ(o.resume, "r.safetensors");
  EXPECT_EQ(*o.data, "a=b");
  ASSERT_TRUE(parseOptions({"--help"}, o, error));
  EXPECT_TRUE(o.help);
  ASSERT_TRUE(parseOptions({"-h"}, o, error));
  EXPECT_TRUE(o.help);
}

TEST(Options, UnknownOptionsSuggestTheClosest) {
  EXPECT_EQ(parseError({"--epoch", "3"}),
            "unknown option '--epoch'; did you mean '--epochs'?");
  EXPECT_EQ(parseError({"--batchsize=3"}),
            "unknown option '--batchsize'; did you mean '--batch-size'?");
  EXPECT_EQ(parseError({"--no-shufle"}),
            "unknown option '--no-shufle'; did you mean '--no-shuffle'?");
  EXPECT_NE(parseError({"-x"}).find("unknown option '-x'"), std::string::npos);
  EXPECT_NE(parseError({"data"}).find("unexpected argument 'data'"),
            std::string::npos);
}

TEST(Options, BadNumbersNameTheOption) {
  EXPECT_EQ(parseError({"--epochs", "x"}),
            "--epochs: expected a positive number, got 'x'");
  EXPECT_NE(parseError({"--epochs=0"}).find("--epochs:"), std::string::npos);
  EXPECT_NE(parseError({"--epochs=-1"}).find("--epochs:"), std::string::npos);
  EXPECT_NE(parseError({"--epochs=nan"}).find("--epochs:"), std::string::npos);
  EXPECT_NE(parseError({"--epochs=inf"}).find("--epochs:"), std::string::npos);
  EXPECT_EQ(parseError({"--epochs=1e999"}),
            "--epochs: expected a positive number, got '1e999' (out of range)");
  EXPECT_EQ(parseError({"--steps", "-1"}),
            "--steps: expected a positive integer, got '-1'");
  EXPECT_NE(parseError({"--steps=1.5"}).find("--steps:"), std::string::npos);
  EXPECT_NE(parseError({"--steps=0"}).find("--steps:"), std::string::npos);
  EXPECT_EQ(parseError({"--steps=99999999999999999999"}),
            "--steps: 99999999999999999999 is more than the trainer can count "
            "(at most 9223372036854775807)");
  EXPECT_EQ(parseError({"--steps=9223372036854775808"}),
            "--steps: 9223372036854775808 is more than the trainer can count "
            "(at most 9223372036854775807)");
  EXPECT_EQ(parseError({"--steps=000"}),
            "--steps: expected a positive integer, got '000'");
  EXPECT_NE(parseError({"--batch-size=12x"}).find("--batch-size:"),
            std::string::npos);
  EXPECT_NE(parseError({"--seed=-3"}).find("--seed:"), std::string::npos);
  EXPECT_NE(parseError({"--seed=18446744073709551616"}).find("--seed:"),
            std::string::npos);
  EXPECT_NE(parseError({"--seed="}).find("--seed:"), std::string::npos);
}

TEST(Options, MissingAndUnexpectedValues) {
  EXPECT_EQ(parseError({"--data"}),
            "--data needs a value (--data PATH or --data=PATH)");
  EXPECT_NE(parseError({"--save", "--quiet"}).find("--save needs a value"),
            std::string::npos);
  EXPECT_EQ(parseError({"--quiet=yes"}),
            "--quiet takes no value, got '--quiet=yes'");
  EXPECT_NE(parseError({"--init="}).find("--init: expected a path"),
            std::string::npos);
  EXPECT_NE(parseError({"--init", "a", "--resume", "b"})
                .find("--init and --resume exclude each other"),
            std::string::npos);
}

TEST(Options, HelpListsEverythingWithDefaults) {
  OptionDefaults d;
  d.model = "airbench94";
  d.dataFormat = "cifar10";
  d.dataPath = "data/cifar-10-batches-bin";
  d.epochs = 9.9;
  d.batchSize = 1024;
  d.seed = 0;
  std::string help = helpText("./train", d);
  for (const std::string &name : optionNames())
    EXPECT_NE(help.find(name), std::string::npos) << name;
  EXPECT_NE(help.find("usage: ./train"), std::string::npos);
  EXPECT_NE(help.find("airbench94"), std::string::npos);
  EXPECT_NE(help.find("default: data/cifar-10-batches-bin"), std::string::npos);
  EXPECT_NE(help.find("default: 9.9"), std::string::npos);
  EXPECT_NE(help.find("default: 1024"), std::string::npos);
  EXPECT_NE(help.find("tcc compile"), std::string::npos);
  EXPECT_NE(help.find("this trainer runs as one process: no effect"), std::string::npos);
  d.ranks = 2;
  EXPECT_NE(helpText("./train", d).find("default: 300; docs/distributed.md#faults"),
            std::string::npos);
  EXPECT_EQ(optionNames().size(), 20u);
}

TEST(Options, LogCheckpointAndEvalChoices) {
  TrainOptions o;
  std::string error;
  ASSERT_TRUE(parseOptions({"--log-every", "50", "--checkpoint-every=2", "--save",
                            "s.safetensors", "--eval", "both"},
                           o, error))
      << error;
  EXPECT_EQ(*o.logEvery, 50);
  EXPECT_EQ(*o.checkpointEpochs, 2);
  EXPECT_FALSE(o.checkpointMinutes);
  EXPECT_EQ(o.eval, "both");
  TrainOptions m;
  ASSERT_TRUE(parseOptions({"--checkpoint-every", "0.5m", "--save", "s"}, m, error))
      << error;
  EXPECT_EQ(*m.checkpointMinutes, 0.5);
  EXPECT_FALSE(m.checkpointEpochs);

  EXPECT_NE(parseError({"--log-every", "0"}).find("--log-every: expected a positive integer"),
            std::string::npos);
  EXPECT_NE(parseError({"--checkpoint-every", "2h", "--save", "s"})
                .find("expected a number of epochs (2) or of minutes (30m)"),
            std::string::npos);
  EXPECT_NE(parseError({"--checkpoint-every", "0", "--save", "s"}).find("--checkpoint-every"),
            std::string::npos);
  EXPECT_NE(parseError({"--checkpoint-every", "2"}).find("give --save too"),
            std::string::npos);
  EXPECT_NE(parseError({"--eval", "average"}).find("expected ema, raw or both"),
            std::string::npos);
  EXPECT_NE(parseError({"--tta", "yes"}).find("--tta: expected on or off"),
            std::string::npos);
  TrainOptions t;
  ASSERT_TRUE(parseOptions({"--tta=off"}, t, error)) << error;
  EXPECT_EQ(t.tta, false);
}

TEST(Options, CommTimeout) {
  TrainOptions o;
  std::string error;
  ASSERT_TRUE(parseOptions({"--comm-timeout", "2.5"}, o, error)) << error;
  EXPECT_EQ(*o.commTimeout, 2.5);
  ASSERT_TRUE(parseOptions({}, o, error)) << error;
  EXPECT_FALSE(o.commTimeout);
  for (const char *bad : {"0", "-5", "abc", "nan", "inf", "1e999", " 3", "5s"})
    EXPECT_NE(parseError({"--comm-timeout", bad})
                  .find("--comm-timeout: expected a positive number of seconds"),
              std::string::npos)
        << bad;
  EXPECT_NE(parseError({"--comm-timeout="}).find("--comm-timeout: expected a positive number"),
            std::string::npos);
}

TEST(Options, Profile) {
  TrainOptions o;
  std::string error;
  ASSERT_TRUE(parseOptions({"--profile", "p.json", "--steps", "5"}, o, error)) << error;
  EXPECT_EQ(o.profile, "p.json");
  EXPECT_NE(parseError({"--profile"}).find("--profile needs a value"), std::string::npos);
  EXPECT_NE(parseError({"--profile="}).find("expected a path"), std::string::npos);
  EXPECT_NE(parseError({"--profile", "p.json", "--eval-only"}).find("--eval-only runs none"),
            std::string::npos);
}
