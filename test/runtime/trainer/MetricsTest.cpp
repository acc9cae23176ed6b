//===- MetricsTest.cpp - JSON lines and the progress line -----------------===//

#include "FakeModel.h"

#include "runtime/trainer/Metrics.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace tcc::rt;
using tcc::test::readFile;
using tcc::test::TempDir;

TEST(Metrics, LineFormat) {
  EpochMetrics m;
  m.epoch = 2;
  m.step = 10;
  m.trainLoss = 0.5;
  m.trainAcc = 0.75;
  m.testLoss = 0.25;
  m.testAcc = 0.875;
  m.lr = 0.125;
  m.elapsedS = 1.5;
  m.epochSeconds = 1.25;
  m.evalSeconds = 0.25;
  m.imagesPerSecond = 1000;
  EXPECT_EQ(metricsLine(m),
            R"({"type":"epoch","epoch":2,"step":10,"train_loss":0.5,"train_acc":0.75,)"
            R"("test_loss":0.25,"test_acc":0.875,"lr":0.125,"elapsed_s":1.5,)"
            R"("epoch_seconds":1.25,"eval_seconds":0.25,"images_per_second":1000.0})");
  // --eval=both adds the raw weights' test metrics.
  m.rawToo = true;
  m.rawTestLoss = 0.5;
  m.rawTestAcc = 0.75;
  EXPECT_NE(metricsLine(m).find(
                R"("test_acc":0.875,"raw_test_loss":0.5,"raw_test_acc":0.75,"lr")"),
            std::string::npos)
      << metricsLine(m);
  m.rawToo = false;
  // A step record: training metrics only.
  EpochMetrics s = m;
  s.stepRecord = true;
  s.epoch = 1.5;
  s.epochSeconds.reset();
  EXPECT_EQ(metricsLine(s),
            R"({"type":"step","epoch":1.5,"step":10,"train_loss":0.5,"train_acc":0.75,)"
            R"("lr":0.125,"elapsed_s":1.5,"images_per_second":1000.0})");
  m.final = true;
  m.epoch = 2.5;
  m.trainLoss.reset();
  m.testAcc = std::numeric_limits<double>::quiet_NaN();
  auto j = nlohmann::json::parse(metricsLine(m));
  EXPECT_EQ(j["epoch"], 2.5);
  EXPECT_TRUE(j["train_loss"].is_null()) << "does not apply: null";
  EXPECT_EQ(j["test_acc"], "NaN") << "not finite: said so, never null";
  EXPECT_EQ(j["final"], true);
}

TEST(Metrics, NonFiniteValuesAreStringsNotNull) {
  EpochMetrics m;
  m.step = 3;
  m.trainLoss = std::numeric_limits<double>::quiet_NaN();
  m.trainAcc = 0.25;
  m.imagesPerSecond = std::numeric_limits<double>::infinity();
  m.testAcc = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(metricsLine(m),
            R"({"type":"epoch","epoch":0,"step":3,"train_loss":"NaN","train_acc":0.25,)"
            R"("test_loss":null,"test_acc":"-Infinity","lr":null,"elapsed_s":0.0,)"
            R"("epoch_seconds":null,"eval_seconds":null,"images_per_second":"Infinity"})");
}

TEST(Metrics, FileAppendsWholeLines) {
  TempDir dir;
  std::string path = dir.file("m.jsonl"), error;
  {
    MetricsFile f;
    ASSERT_TRUE(f.open(path, false, error)) << error;
    ASSERT_TRUE(f.writeLine("{\"a\":1}", error));
    EXPECT_EQ(readFile(path), "{\"a\":1}\n") << "flushed at once";
    ASSERT_TRUE(f.writeLine("{\"a\":2}", error));
  }
  {
    MetricsFile f;
    ASSERT_TRUE(f.open(path, true, error));
    ASSERT_TRUE(f.writeLine("{\"a\":3}", error));
  }
  EXPECT_EQ(readFile(path), "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
  {
    MetricsFile f;
    ASSERT_TRUE(f.open(path, false, error));
  }
  EXPECT_EQ(readFile(path), "");
  MetricsFile bad;
  EXPECT_FALSE(bad.open(dir.path(), false, error));
  EXPECT_NE(error.find(dir.path()), std::string::npos) << error;
}

TEST(Metrics, ProgressLineIsThrottledAndErasable) {
  std::ostringstream out;
  double now = 0;
  ProgressLine p(out, true, [&] { return now; });
  p.update("step 1");
  now = 0.05;
  p.update("step 2"); // too soon
  EXPECT_EQ(out.str(), "\rstep 1");
  now = 0.2;
  p.update("step 3");
  EXPECT_EQ(out.str(), "\rstep 1\rstep 3");
  now = 0.21;
  p.update("s4", /*force=*/true);
  EXPECT_EQ(out.str(), "\rstep 1\rstep 3\rs4    ");
  p.clear();
  EXPECT_EQ(out.str().substr(out.str().size() - 4), "\r  \r");
  std::ostringstream quiet;
  ProgressLine off(quiet, false);
  off.update("x", true);
  off.clear();
  EXPECT_EQ(quiet.str(), "");
}
