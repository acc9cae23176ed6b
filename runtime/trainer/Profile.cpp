//===- Profile.cpp - The report of ./train --profile -----------------------===//

#include "runtime/trainer/Profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

namespace tcc::rt {

namespace {

/// The sites' times summed by op kind, largest first (ties by name, so the
/// order does not depend on the map's).
std::vector<OpTime> byKind(const std::vector<OpTime> &sites) {
  std::map<std::string, OpTime> kinds;
  for (const OpTime &site : sites) {
    OpTime &kind = kinds[site.op];
    kind.op = site.op;
    kind.calls += site.calls;
    kind.seconds += site.seconds;
  }
  std::vector<OpTime> sorted;
  for (auto &[name, kind] : kinds)
    sorted.push_back(kind);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const OpTime &a, const OpTime &b) { return a.seconds > b.seconds; });
  return sorted;
}

double totalSeconds(const std::vector<OpTime> &sites) {
  double total = 0;
  for (const OpTime &site : sites)
    total += site.seconds;
  return total;
}

/// A collective's time and the part of it the step's other work hid: a
/// side-stream bucket's as timed on its stream; a collective on the step's
/// stream (or the cpu target's blocking MPI call) is its site's time, all
/// of it exposed.
double communicationSeconds(const OpTime &t) { return t.sideStream ? t.sideSeconds : t.seconds; }
double hiddenSeconds(const OpTime &t) { return t.sideStream ? t.hiddenSeconds : 0.0; }

/// The collectives' times summed: (communication, hidden, count).
struct CommunicationTotals {
  double seconds = 0, hidden = 0;
  int collectives = 0;
};
CommunicationTotals communicationTotals(const std::vector<OpTime> &sites) {
  CommunicationTotals c;
  for (const OpTime &t : sites)
    if (t.collective) {
      c.seconds += communicationSeconds(t);
      c.hidden += hiddenSeconds(t);
      ++c.collectives;
    }
  return c;
}

/// The profile's `communication` object (docs/training.md).
nlohmann::json communicationJson(const std::vector<OpTime> &sites, double perStep) {
  const double ms = perStep * 1e3;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < sites.size(); ++i) {
    const OpTime &t = sites[i];
    if (!t.collective)
      continue;
    const double seconds = communicationSeconds(t), hidden = hiddenSeconds(t);
    rows.push_back({{"site", i},
                    {"op", t.op},
                    {"node", t.node},
                    {"bucket", t.bucket >= 0 ? nlohmann::json(t.bucket) : nlohmann::json()},
                    {"bytes", t.bytes},
                    {"stream", t.sideStream ? "side" : "step"},
                    {"calls_per_step", double(t.sideStream ? t.sideCalls : t.calls) * perStep},
                    {"ms_per_step", seconds * ms},
                    {"hidden_ms_per_step", hidden * ms},
                    {"exposed_ms_per_step", (seconds - hidden) * ms}});
  }
  const CommunicationTotals c = communicationTotals(sites);
  return {{"ms_per_step", c.seconds * ms},
          {"hidden_ms_per_step", c.hidden * ms},
          {"exposed_ms_per_step", (c.seconds - c.hidden) * ms},
          {"hidden_share", c.seconds > 0 ? c.hidden / c.seconds : 0.0},
          {"collectives", std::move(rows)}};
}

} // namespace

std::vector<OpTime> profileSince(const std::vector<OpTime> &after,
                                 const std::vector<OpTime> &before) {
  std::vector<OpTime> since = after;
  for (size_t i = 0; i < since.size() && i < before.size(); ++i) {
    since[i].calls -= before[i].calls;
    since[i].seconds -= before[i].seconds;
    since[i].sideCalls -= before[i].sideCalls;
    since[i].sideSeconds -= before[i].sideSeconds;
    since[i].hiddenSeconds -= before[i].hiddenSeconds;
  }
  return since;
}

std::string profileJson(const ModelInfo &info, const std::vector<OpTime> &sites,
                        int64_t steps, int64_t warmupSteps) {
  const double perStep = steps > 0 ? 1.0 / double(steps) : 0;
  const double total = totalSeconds(sites);
  auto row = [&](const OpTime &t) {
    nlohmann::json r;
    r["op"] = t.op;
    r["ms_per_step"] = t.seconds * perStep * 1e3;
    r["calls_per_step"] = double(t.calls) * perStep;
    r["share"] = total > 0 ? t.seconds / total : 0.0;
    return r;
  };
  nlohmann::json j;
  j["format"] = "tcc-profile/1";
  j["model"] = info.name;
  j["target"] = info.target;
  j["batch_size"] = info.batchSize;
  j["steps"] = steps;
  j["warmup_steps"] = warmupSteps;
  j["step_ms"] = total * perStep * 1e3;
  j["sites"] = nlohmann::json::array();
  for (size_t i = 0; i < sites.size(); ++i) {
    nlohmann::json r = row(sites[i]);
    r["site"] = i;
    r["node"] = sites[i].node;
    j["sites"].push_back(std::move(r));
  }
  j["ops"] = nlohmann::json::array();
  for (const OpTime &kind : byKind(sites))
    j["ops"].push_back(row(kind));
  j["communication"] = communicationJson(sites, perStep);
  return j.dump(1) + "\n";
}

std::string profileSummary(const std::vector<OpTime> &sites, int64_t steps, int top) {
  const double total = totalSeconds(sites);
  const double perStep = steps > 0 ? 1.0 / double(steps) : 0;
  char line[256];
  std::snprintf(line, sizeof line, "profile: %lld steps, %.3f ms per step; by op:\n",
                static_cast<long long>(steps), total * perStep * 1e3);
  std::string out = line;
  std::vector<OpTime> kinds = byKind(sites);
  for (int i = 0; i < top && i < int(kinds.size()); ++i) {
    std::snprintf(line, sizeof line, "  %5.1f%%  %10.3f ms  %6.1f calls  %s\n",
                  total > 0 ? 100 * kinds[i].seconds / total : 0.0,
                  kinds[i].seconds * perStep * 1e3, double(kinds[i].calls) * perStep,
                  kinds[i].op.c_str());
    out += line;
  }
  const CommunicationTotals c = communicationTotals(sites);
  if (c.collectives > 0) {
    std::snprintf(line, sizeof line,
                  "profile: communication %.3f ms per step in %d collectives, %.3f ms of it "
                  "hidden (%.1f%%)\n",
                  c.seconds * perStep * 1e3, c.collectives, c.hidden * perStep * 1e3,
                  c.seconds > 0 ? 100 * c.hidden / c.seconds : 0.0);
    out += line;
  }
  return out;
}

} // namespace tcc::rt
