//===- ProfileTest.cpp - ./train --profile's communication times ----------===//
//
// The per-site totals of a profiled step (runtime/StepProfile.h) and the
// profile file's `communication` object (runtime/trainer/Profile.cpp) on
// made-up times whose hidden and exposed parts are worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "runtime/StepProfile.h"
#include "runtime/trainer/Profile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace tcc::rt;

namespace {

/// gather, a side-stream bucket 0 of 4096 bytes, a norm's sums on the
/// step's stream (64 bytes, no bucket), the step's end.
std::vector<OpSite> distributedSites() {
  return {{"gather_batch", ""},
          {"tcc.all_reduce", "", true, 0, 4096, true},
          {"tcc.all_reduce", "bn1", true, -1, 64, false},
          {"step_end", ""}};
}

TEST(Profile, BucketHiddenUntilTheJoin) {
  SiteTotals sums(distributedSites());
  // Ran 1.0 s to 3.0 s, the step's stream reached the join at 2.5 s: the
  // last 0.5 s were waited for.
  sums.bucket(0, 1.0, 3.0, 2.5);
  // Done before the join: all hidden.
  sums.bucket(0, 1.0, 2.0, 2.5);
  // Started after the step's stream was at the join: none hidden.
  sums.bucket(0, 2.0, 3.0, 1.0);
  // No such bucket (a collective on the step's stream is not timed so).
  sums.bucket(1, 0.0, 9.0, 9.0);
  const OpTime &b = sums.totals()[1];
  EXPECT_EQ(b.sideCalls, 3);
  EXPECT_DOUBLE_EQ(b.sideSeconds, 2.0 + 1.0 + 1.0);
  EXPECT_DOUBLE_EQ(b.hiddenSeconds, 1.5 + 1.0 + 0.0);
  EXPECT_EQ(sums.totals()[2].sideCalls, 0);
  EXPECT_DOUBLE_EQ(sums.totals()[2].sideSeconds, 0.0);
}

TEST(Profile, CommunicationInTheFile) {
  SiteTotals sums(distributedSites());
  // Two steps: marks in seconds, then each step's bucket.
  for (double t0 : {0.0, 10.0}) {
    sums.mark(0, t0);
    sums.mark(1, t0 + 1.0); // the fork
    sums.mark(2, t0 + 1.5); // the norm's sums: 2.0 s on the step's stream
    sums.mark(3, t0 + 3.5);
    sums.mark(-1, t0 + 4.0);
    sums.bucket(0, t0 + 1.5, t0 + 4.0, t0 + 3.5); // 2.5 s, 2.0 hidden
  }
  ModelInfo info;
  info.name = "m";
  info.target = "cuda";
  nlohmann::json j = nlohmann::json::parse(profileJson(info, sums.totals(), 2, 1));
  const nlohmann::json &c = j["communication"];
  EXPECT_DOUBLE_EQ(c["ms_per_step"].get<double>(), 2500.0 + 2000.0);
  EXPECT_DOUBLE_EQ(c["hidden_ms_per_step"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(c["exposed_ms_per_step"].get<double>(), 500.0 + 2000.0);
  EXPECT_DOUBLE_EQ(c["hidden_share"].get<double>(), 2000.0 / 4500.0);
  ASSERT_EQ(c["collectives"].size(), 2u);
  const nlohmann::json &bucket = c["collectives"][0];
  EXPECT_EQ(bucket["site"], 1);
  EXPECT_EQ(bucket["op"], "tcc.all_reduce");
  EXPECT_EQ(bucket["bucket"], 0);
  EXPECT_EQ(bucket["bytes"], 4096);
  EXPECT_EQ(bucket["stream"], "side");
  EXPECT_DOUBLE_EQ(bucket["calls_per_step"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(bucket["ms_per_step"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(bucket["hidden_ms_per_step"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(bucket["exposed_ms_per_step"].get<double>(), 500.0);
  const nlohmann::json &sums2 = c["collectives"][1];
  EXPECT_EQ(sums2["site"], 2);
  EXPECT_EQ(sums2["node"], "bn1");
  EXPECT_TRUE(sums2["bucket"].is_null());
  EXPECT_EQ(sums2["stream"], "step");
  EXPECT_DOUBLE_EQ(sums2["ms_per_step"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(sums2["hidden_ms_per_step"].get<double>(), 0.0);
  // The step's time is the step's stream's: the bucket's fork only.
  EXPECT_DOUBLE_EQ(j["sites"][1]["ms_per_step"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["step_ms"].get<double>(), 4000.0);

  const std::string summary = profileSummary(sums.totals(), 2, 4);
  EXPECT_NE(summary.find("profile: communication 4500.000 ms per step in 2 collectives, "
                         "2000.000 ms of it hidden (44.4%)"),
            std::string::npos)
      << summary;
}

TEST(Profile, SinceTheWarmupSubtractsTheBuckets) {
  SiteTotals sums(distributedSites());
  sums.mark(1, 0.0);
  sums.mark(-1, 1.0);
  sums.bucket(0, 0.0, 3.0, 1.0);
  std::vector<OpTime> warmup = sums.totals();
  sums.mark(1, 5.0);
  sums.mark(-1, 6.0);
  sums.bucket(0, 5.0, 6.0, 7.0);
  std::vector<OpTime> since = profileSince(sums.totals(), warmup);
  EXPECT_EQ(since[1].sideCalls, 1);
  EXPECT_DOUBLE_EQ(since[1].sideSeconds, 1.0);
  EXPECT_DOUBLE_EQ(since[1].hiddenSeconds, 1.0);
}

TEST(Profile, NoCollectivesNoCommunication) {
  SiteTotals sums({{"gather_batch", ""}, {"tcc.matmul", "fc"}, {"step_end", ""}});
  sums.mark(0, 0.0);
  sums.mark(1, 1.0);
  sums.mark(-1, 2.0);
  ModelInfo info;
  nlohmann::json j = nlohmann::json::parse(profileJson(info, sums.totals(), 1, 0));
  EXPECT_TRUE(j["communication"]["collectives"].empty());
  EXPECT_DOUBLE_EQ(j["communication"]["ms_per_step"].get<double>(), 0.0);
  EXPECT_EQ(profileSummary(sums.totals(), 1, 4).find("communication"), std::string::npos);
}

} // namespace
