//===- TrainSpec.cpp - The `loss` and `train` sections of model.json ------===//
//
// The output JSON mirrors the input with every default filled, so later
// stages read one canonical form (e.g. groups[].match is always an array,
// memory_budget always a byte count or null).
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/SpecSections.h"
#include "runtime/common/Schedule.h"

namespace tcc::frontend::detail {
namespace {

/// The value of an optional field that may also be null; nullptr for both.
const Json *nullable(const ObjectReader &r, std::string_view key) {
  const Json *v = r.find(key);
  return v && !v->is_null() ? v : nullptr;
}

Json parseGroup(const ObjectReader &r) {
  r.allowOnly({"match", "lr_scale", "weight_decay_scale"});
  const Json &match = r.require("match");
  Json globs = match.is_string() ? Json::array({match}) : match;
  bool ok = globs.is_array() && !globs.empty();
  for (const Json &g : globs)
    ok = ok && g.is_string() && !g.get_ref<const std::string &>().empty();
  if (!ok)
    r.failField("match", "must be a glob over parameter names such as "
                         "\"*.bias\", or a non-empty array of them, got " +
                             describe(match));
  return {{"match", globs},
          {"lr_scale", r.number("lr_scale", 1.0, Range::nonNegative())},
          {"weight_decay_scale",
           r.number("weight_decay_scale", 1.0, Range::nonNegative())}};
}

Json parseLookahead(const ObjectReader &r) {
  r.allowOnly({"every", "alpha", "alpha_schedule", "buffers", "copy_back"});
  return {{"every", r.integer("every", 5, 1)},
          {"alpha", r.number("alpha", 0.5, Range::open(0, 1))},
          {"alpha_schedule",
           r.choice("alpha_schedule", std::string("constant"),
                    {"constant", "cubic"})},
          {"buffers", r.boolean("buffers", false)},
          {"copy_back", r.boolean("copy_back", false)}};
}

Json parseOptimizer(const ObjectReader &r) {
  std::string type = r.variant("type",
                               {{"sgd", {"momentum", "nesterov", "dampening", "momentum_of"}},
                                {"adam", {"betas", "eps"}},
                                {"adamw", {"betas", "eps"}},
                                {"lamb", {"betas", "eps"}}},
                               {"lr", "weight_decay", "groups", "lookahead"},
                               "");
  Json out = {{"type", type},
              {"lr", r.number("lr", std::nullopt, Range::positive())},
              {"weight_decay",
               r.number("weight_decay", 0.0, Range::nonNegative())}};
  if (type == "sgd") {
    double momentum = r.number("momentum", 0.0, Range::closedOpen(0, 1));
    double dampening = r.number("dampening", 0.0, Range::closed(0, 1));
    bool nesterov = r.boolean("nesterov", false);
    if (nesterov && momentum == 0)
      r.failField("nesterov", "needs momentum > 0, got momentum 0");
    if (nesterov && dampening != 0)
      r.failField("nesterov", "needs dampening 0 (as in PyTorch), got " +
                                  formatNumber(dampening));
    // What the momentum buffer accumulates: gradients (torch.optim.SGD) or
    // lr-scaled steps (myrtle.ai's ResNet-9 code); the two differ whenever
    // the rate changes.
    std::string of = r.choice("momentum_of", std::string("gradient"), {"gradient", "update"});
    if (of == "update" && momentum == 0)
      r.failField("momentum_of", "\"update\" needs momentum > 0, got momentum 0");
    if (of == "update" && dampening != 0)
      r.failField("momentum_of", "\"update\" has no dampening, got dampening " +
                                     formatNumber(dampening));
    out["momentum"] = momentum;
    out["dampening"] = dampening;
    out["nesterov"] = nesterov;
    out["momentum_of"] = of;
  } else {
    Json betas = {0.9, 0.999};
    if (const Json *v = r.find("betas")) {
      std::optional<double> b1, b2;
      if (v->is_array() && v->size() == 2) {
        b1 = asNumber((*v)[0]);
        b2 = asNumber((*v)[1]);
      }
      Range unit = Range::closedOpen(0, 1);
      if (!b1 || !b2 || !unit.contains(*b1) || !unit.contains(*b2))
        r.failField("betas", "must be a pair of numbers in [0, 1), got " +
                                 describe(*v));
      betas = {*b1, *b2};
    }
    out["betas"] = betas;
    out["eps"] = r.number("eps", type == "lamb" ? 1e-6 : 1e-8,
                          Range::positive());
  }

  Json groups = Json::array();
  if (const Json *v = r.find("groups")) {
    if (!v->is_array())
      r.failField("groups", "must be an array of {\"match\": ...} objects, "
                            "got " +
                                describe(*v));
    for (size_t i = 0; i < v->size(); ++i)
      groups.push_back(parseGroup(ObjectReader(
          (*v)[i], "", r.fieldRef("groups") + "[" + std::to_string(i) + "]")));
  }
  out["groups"] = groups;
  out["lookahead"] = nullable(r, "lookahead")
                         ? parseLookahead(r.object("lookahead"))
                         : Json(nullptr);
  return out;
}

Json parsePoints(const ObjectReader &r) {
  const Json &points = r.require("points");
  if (!points.is_array() || points.size() < 2 ||
      points.size() > static_cast<size_t>(rt::kMaxSchedulePoints))
    r.failField("points", "must be an array of 2 to " +
                              std::to_string(rt::kMaxSchedulePoints) +
                              " [t, factor] pairs, got " + describe(points));
  Json out = Json::array();
  double previous = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const Json &p = points[i];
    std::string at = r.fieldRef("points") + "[" + std::to_string(i) + "]";
    std::optional<double> t, f;
    if (p.is_array() && p.size() == 2) {
      t = asNumber(p[0]);
      f = asNumber(p[1]);
    }
    if (!t || !f)
      fail(at + " must be a pair [t, factor] of numbers, got " + describe(p));
    if (i == 0 && *t != 0)
      fail(at + " must start at t = 0, got t = " + formatNumber(*t));
    if (i > 0 && !(*t > previous))
      fail(at + ": t must increase, got " + formatNumber(*t) + " after " +
           formatNumber(previous));
    if (*f < 0)
      fail(at + ": factor must be >= 0, got " + formatNumber(*f));
    previous = *t;
    out.push_back({*t, *f});
  }
  return out;
}

Json parseSchedule(const ObjectReader &r) {
  std::string type = r.variant(
      "type",
      {{"constant", {}},
       {"step", {"step_size", "gamma"}},
       {"linear_warmup", {"warmup"}},
       {"one_cycle", {"pct_start", "div_factor", "final_div_factor", "anneal", "cycle_momentum"}},
       {"cosine", {"warmup", "min_factor"}},
       {"piecewise_linear", {"points"}}},
      {"unit", "count_from"}, "schedule type");
  // t counts from 0 at the first step as PyTorch's schedulers do; myrtle.ai's
  // cifar10-fast increments its step counter before reading the schedule.
  Json out = {{"type", type},
              {"unit", r.choice("unit", std::string("epoch"),
                                {"epoch", "step"})},
              {"count_from", r.integer("count_from", 0, 0, 1)}};
  if (type == "step") {
    out["step_size"] = r.number("step_size", std::nullopt, Range::positive());
    out["gamma"] = r.number("gamma", 0.1, Range::positive());
  } else if (type == "linear_warmup") {
    out["warmup"] = r.number("warmup", std::nullopt, Range::positive());
  } else if (type == "one_cycle") {
    out["pct_start"] = r.number("pct_start", 0.3, Range::open(0, 1));
    out["div_factor"] = r.number("div_factor", 25.0, Range::positive());
    out["final_div_factor"] =
        r.number("final_div_factor", 1e4, Range::positive());
    out["anneal"] = r.choice("anneal", std::string("cos"), {"cos", "linear"});
    // OneCycleLR's cycle_momentum (True in PyTorch) is not built: the
    // momentum stays the optimizer's. Saying false records the choice
    // (without it tcc compile warns where the optimizer has a momentum).
    if (r.has("cycle_momentum")) {
      if (r.boolean("cycle_momentum", std::nullopt))
        r.failField("cycle_momentum", "true is not supported: tcc keeps the optimizer's momentum "
                                      "constant under one_cycle (OneCycleLR's "
                                      "cycle_momentum=False); set it to false");
      out["cycle_momentum"] = false;
    }
  } else if (type == "cosine") {
    out["warmup"] = r.number("warmup", 0.0, Range::nonNegative());
    out["min_factor"] = r.number("min_factor", 0.0, Range::closed(0, 1));
  } else if (type == "piecewise_linear") {
    out["points"] = parsePoints(r);
  }
  return out;
}

Json parseEma(const ObjectReader &r) {
  r.allowOnly({"decay", "every", "per_epoch"});
  return {{"decay", r.number("decay", std::nullopt, Range::open(0, 1))},
          {"every", r.integer("every", 1, 1)},
          {"per_epoch", r.boolean("per_epoch", false)}};
}

Json parseMemoryBudget(const ObjectReader &r) {
  const Json *v = nullable(r, "memory_budget");
  if (!v)
    return nullptr;
  std::optional<int64_t> bytes;
  int64_t parsed = 0;
  if (!v->is_string())
    bytes = asInteger(*v);
  else if (v->get_ref<const std::string &>().size() <= 32 &&
           parseByteSize(v->get<std::string>(), parsed))
    bytes = parsed;
  if (!bytes || *bytes < 1)
    r.failField("memory_budget",
                "must be null, a positive number of bytes, or a size such as "
                "\"8GiB\", \"512MiB\", \"2GB\" or \"1.5G\", got " +
                    describe(*v));
  return *bytes;
}

} // namespace

/// torch.amp.GradScaler's arguments, with its defaults.
Json parseLossScale(const ObjectReader &r) {
  r.allowOnly({"init_scale", "growth_factor", "backoff_factor", "growth_interval"});
  // The scale is an f32 on the device.
  constexpr double kMaxF32 = 3.4028234663852886e38;
  return {{"init_scale", r.number("init_scale", 65536.0, Range::openClosed(0, kMaxF32))},
          {"growth_factor", r.number("growth_factor", 2.0, Range::openClosed(1, kMaxF32))},
          {"backoff_factor", r.number("backoff_factor", 0.5, Range::open(0, 1))},
          {"growth_interval", r.integer("growth_interval", 2000, 1)}};
}

LossSpec parseLoss(const ObjectReader &r) {
  r.allowOnly({"op", "label_smoothing", "reduction"});
  LossSpec loss;
  loss.op = r.choice("op", std::nullopt, {"cross_entropy", "mse_loss"});
  if (loss.op != "cross_entropy" && r.has("label_smoothing"))
    r.failField("label_smoothing", "applies only to cross_entropy, not " +
                                       loss.op + "; remove it");
  loss.labelSmoothing =
      r.number("label_smoothing", 0.0, Range::closedOpen(0, 1));
  loss.reduction = r.choice("reduction", std::string("mean"), {"mean", "sum"});
  return loss;
}

Json parseTrain(const ObjectReader &r) {
  r.allowOnly({"batch_size", "epochs", "seed", "drop_last", "optimizer",
               "schedule", "precision", "ema", "grad_clip_norm", "accumulate",
               "memory_budget", "deterministic", "loss_scale"});
  static const Json constantSchedule = {{"type", "constant"}};
  int64_t batch = r.integer("batch_size", std::nullopt, 1, limits::kMaxBatch);
  double epochs = r.number("epochs", std::nullopt, Range::positive());
  // The trainer counts ceil(epochs * steps_per_epoch) steps in an int64.
  if (epochs > limits::kMaxEpochs)
    r.failField("epochs", "must be at most " +
                              formatNumber(limits::kMaxEpochs) + kLimitNote +
                              ", got " + describe(*r.find("epochs")));
  Json train = {
      {"batch_size", batch},
      {"epochs", epochs},
      {"seed", r.integer("seed", 0, 0)},
      {"drop_last", r.boolean("drop_last", true)}};
  train["optimizer"] = parseOptimizer(r.object("optimizer"));
  train["schedule"] = parseSchedule(
      r.has("schedule") ? r.object("schedule")
                        : ObjectReader(constantSchedule, "", r.fieldRef("schedule")));
  train["precision"] = r.choice("precision", std::string("fp32"),
                                {"fp32", "fp16-mixed", "bf16-mixed", "fp16", "bf16"});
  // GradScaler's settings: defaults under fp16-mixed, an error elsewhere.
  static const Json noSettings = Json::object();
  const Json *lossScale = nullable(r, "loss_scale");
  bool fp16 = train["precision"] == "fp16-mixed";
  if (lossScale && !fp16)
    r.failField("loss_scale", "applies only to train.precision \"fp16-mixed\" (bf16, fp32 "
                              "and pure fp16 train without loss scaling), not " +
                                  describe(train["precision"]) + "; remove it");
  train["loss_scale"] =
      fp16 ? parseLossScale(lossScale ? r.object("loss_scale")
                                      : ObjectReader(noSettings, "", r.fieldRef("loss_scale")))
           : Json(nullptr);
  train["ema"] = nullable(r, "ema") ? parseEma(r.object("ema")) : Json(nullptr);
  train["grad_clip_norm"] =
      nullable(r, "grad_clip_norm")
          ? Json(r.number("grad_clip_norm", std::nullopt, Range::positive()))
          : Json(nullptr);
  int64_t accumulate = r.integer("accumulate", 1, 1, limits::kMaxAccumulate);
  // Both are bounded, so the product cannot overflow.
  if (batch * accumulate > limits::kMaxBatch)
    r.failField("accumulate",
                std::to_string(accumulate) + " times train.batch_size " +
                    std::to_string(batch) + " is an effective batch of " +
                    std::to_string(batch * accumulate) +
                    " samples, more than " + std::to_string(limits::kMaxBatch) +
                    kLimitNote + "; lower one of them");
  train["accumulate"] = accumulate;
  train["memory_budget"] = parseMemoryBudget(r);
  train["deterministic"] = r.boolean("deterministic", false);
  return train;
}

} // namespace tcc::frontend::detail

nlohmann::json tcc::frontend::defaultLossScale() {
  static const nlohmann::json noSettings = nlohmann::json::object();
  return detail::parseLossScale(detail::ObjectReader(noSettings, "", "train.loss_scale"));
}
