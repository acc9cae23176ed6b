//===- TrainSpec.cpp - The `loss` and `train` sections of model.json ------===//
//
// The sections become runtime/Recipe.h's structs, every default filled from
// their member initializers, so later stages read one typed value.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"

#include <algorithm>
#include "frontend/SpecSections.h"
#include "runtime/common/Schedule.h"

namespace tcc::frontend::detail {
namespace {

/// The value of an optional field that may also be null; nullptr for both.
const Json *nullable(const ObjectReader &r, std::string_view key) {
  const Json *v = r.find(key);
  return v && !v->is_null() ? v : nullptr;
}

rt::ParamGroup parseGroup(const ObjectReader &r) {
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
  const rt::ParamGroup d;
  rt::ParamGroup group;
  group.match = globs.get<std::vector<std::string>>();
  group.lrScale = r.number("lr_scale", d.lrScale, Range::nonNegative());
  group.weightDecayScale =
      r.number("weight_decay_scale", d.weightDecayScale, Range::nonNegative());
  return group;
}

rt::Lookahead parseLookahead(const ObjectReader &r) {
  r.allowOnly({"every", "alpha", "alpha_schedule", "buffers", "copy_back"});
  const rt::Lookahead d;
  rt::Lookahead l;
  l.every = r.integer("every", d.every, 1);
  l.alpha = r.number("alpha", d.alpha, Range::open(0, 1));
  l.alphaSchedule = r.choice("alpha_schedule", std::string("constant"),
                             {"constant", "cubic"}) == "cubic"
                        ? rt::Lookahead::Cubic
                        : rt::Lookahead::Constant;
  l.buffers = r.boolean("buffers", d.buffers);
  l.copyBack = r.boolean("copy_back", d.copyBack);
  return l;
}

rt::Optimizer parseOptimizer(const ObjectReader &r) {
  std::string type = r.variant("type",
                               {{"sgd", {"momentum", "nesterov", "dampening", "momentum_of"}},
                                {"adam", {"betas", "eps"}},
                                {"adamw", {"betas", "eps"}},
                                {"lamb", {"betas", "eps"}}},
                               {"lr", "weight_decay", "groups", "lookahead"},
                               "");
  const rt::Optimizer d;
  rt::Optimizer out;
  out.type = type == "sgd"     ? rt::Optimizer::SGD
             : type == "adam"  ? rt::Optimizer::Adam
             : type == "adamw" ? rt::Optimizer::AdamW
                               : rt::Optimizer::Lamb;
  out.lr = r.number("lr", std::nullopt, Range::positive());
  out.weightDecay = r.number("weight_decay", d.weightDecay, Range::nonNegative());
  if (type == "sgd") {
    out.momentum = r.number("momentum", d.momentum, Range::closedOpen(0, 1));
    out.dampening = r.number("dampening", d.dampening, Range::closed(0, 1));
    out.nesterov = r.boolean("nesterov", d.nesterov);
    if (out.nesterov && out.momentum == 0)
      r.failField("nesterov", "needs momentum > 0, got momentum 0");
    if (out.nesterov && out.dampening != 0)
      r.failField("nesterov", "needs dampening 0 (as in PyTorch), got " +
                                  formatNumber(out.dampening));
    // What the momentum buffer accumulates: gradients (torch.optim.SGD) or
    // lr-scaled steps (myrtle.ai's ResNet-9 code); the two differ whenever
    // the rate changes.
    std::string of = r.choice("momentum_of", std::string("gradient"), {"gradient", "update"});
    if (of == "update" && out.momentum == 0)
      r.failField("momentum_of", "\"update\" needs momentum > 0, got momentum 0");
    if (of == "update" && out.dampening != 0)
      r.failField("momentum_of", "\"update\" has no dampening, got dampening " +
                                     formatNumber(out.dampening));
    out.momentumOf = of == "update" ? rt::Optimizer::Update : rt::Optimizer::Gradient;
  } else {
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
      out.beta1 = *b1;
      out.beta2 = *b2;
    }
    out.eps = r.number("eps", rt::Optimizer::defaultEps(out.type), Range::positive());
  }

  if (const Json *v = r.find("groups")) {
    if (!v->is_array())
      r.failField("groups", "must be an array of {\"match\": ...} objects, "
                            "got " +
                                describe(*v));
    for (size_t i = 0; i < v->size(); ++i)
      out.groups.push_back(parseGroup(ObjectReader(
          (*v)[i], "", r.fieldRef("groups") + "[" + std::to_string(i) + "]")));
  }
  if (nullable(r, "lookahead"))
    out.lookahead = parseLookahead(r.object("lookahead"));
  return out;
}

/// piecewise_linear's points, into the schedule's fixed arrays.
void parsePoints(const ObjectReader &r, rt::ScheduleDesc &out) {
  const Json &points = r.require("points");
  if (!points.is_array() || points.size() < 2 ||
      points.size() > static_cast<size_t>(rt::kMaxSchedulePoints))
    r.failField("points", "must be an array of 2 to " +
                              std::to_string(rt::kMaxSchedulePoints) +
                              " [t, factor] pairs, got " + describe(points));
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
    out.pointT[i] = *t;
    out.pointFactor[i] = *f;
  }
  out.pointCount = static_cast<int>(points.size());
}

rt::ScheduleDesc parseSchedule(const ObjectReader &r, std::optional<bool> &cycleMomentum) {
  std::string type = r.variant(
      "type",
      {{"constant", {}},
       {"step", {"step_size", "gamma"}},
       {"linear_warmup", {"warmup"}},
       {"one_cycle", {"pct_start", "div_factor", "final_div_factor", "anneal", "cycle_momentum"}},
       {"cosine", {"warmup", "min_factor"}},
       {"piecewise_linear", {"points"}}},
      {"unit", "count_from"}, "schedule type");
  const rt::ScheduleDesc d;
  rt::ScheduleDesc out;
  out.type = type == "step"            ? rt::ScheduleDesc::Step
             : type == "linear_warmup" ? rt::ScheduleDesc::LinearWarmup
             : type == "one_cycle"     ? rt::ScheduleDesc::OneCycle
             : type == "cosine"        ? rt::ScheduleDesc::Cosine
             : type == "piecewise_linear" ? rt::ScheduleDesc::PiecewiseLinear
                                          : rt::ScheduleDesc::Constant;
  out.perEpoch = r.choice("unit", std::string("epoch"), {"epoch", "step"}) == "epoch";
  // t counts from 0 at the first step as PyTorch's schedulers do; myrtle.ai's
  // cifar10-fast increments its step counter before reading the schedule.
  out.countFrom = static_cast<int>(r.integer("count_from", d.countFrom, 0, 1));
  if (type == "step") {
    out.stepSize = r.number("step_size", std::nullopt, Range::positive());
    out.gamma = r.number("gamma", d.gamma, Range::positive());
  } else if (type == "linear_warmup") {
    out.warmup = r.number("warmup", std::nullopt, Range::positive());
  } else if (type == "one_cycle") {
    out.pctStart = r.number("pct_start", d.pctStart, Range::open(0, 1));
    out.divFactor = r.number("div_factor", d.divFactor, Range::positive());
    out.finalDivFactor = r.number("final_div_factor", d.finalDivFactor, Range::positive());
    out.annealCos = r.choice("anneal", std::string("cos"), {"cos", "linear"}) == "cos";
    // OneCycleLR's cycle_momentum (True in PyTorch) is not built: the
    // momentum stays the optimizer's. Saying false records the choice
    // (without it tcc compile warns where the optimizer has a momentum).
    if (r.has("cycle_momentum")) {
      if (r.boolean("cycle_momentum", std::nullopt))
        r.failField("cycle_momentum", "true is not supported: tcc keeps the optimizer's momentum "
                                      "constant under one_cycle (OneCycleLR's "
                                      "cycle_momentum=False); set it to false");
      cycleMomentum = false;
    }
  } else if (type == "cosine") {
    out.warmup = r.number("warmup", d.warmup, Range::nonNegative());
    out.minFactor = r.number("min_factor", d.minFactor, Range::closed(0, 1));
  } else if (type == "piecewise_linear") {
    parsePoints(r, out);
  }
  return out;
}

rt::Ema parseEma(const ObjectReader &r) {
  r.allowOnly({"decay", "every", "per_epoch"});
  const rt::Ema d;
  rt::Ema ema;
  ema.decay = r.number("decay", std::nullopt, Range::open(0, 1));
  ema.every = r.integer("every", d.every, 1);
  ema.perEpoch = r.boolean("per_epoch", d.perEpoch);
  return ema;
}

std::optional<int64_t> parseMemoryBudget(const ObjectReader &r) {
  const Json *v = nullable(r, "memory_budget");
  if (!v)
    return std::nullopt;
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
  return bytes;
}

} // namespace

/// torch.amp.GradScaler's arguments, with its defaults.
rt::LossScale parseLossScale(const ObjectReader &r) {
  r.allowOnly({"init_scale", "growth_factor", "backoff_factor", "growth_interval"});
  // The scale is an f32 on the device.
  constexpr double kMaxF32 = 3.4028234663852886e38;
  const rt::LossScale d;
  rt::LossScale out;
  out.initScale = r.number("init_scale", d.initScale, Range::openClosed(0, kMaxF32));
  out.growthFactor = r.number("growth_factor", d.growthFactor, Range::openClosed(1, kMaxF32));
  out.backoffFactor = r.number("backoff_factor", d.backoffFactor, Range::open(0, 1));
  out.growthInterval = r.integer("growth_interval", d.growthInterval, 1);
  return out;
}

LossSpec parseLoss(const ObjectReader &r) {
  r.allowOnly({"op", "label_smoothing", "reduction", "targets", "ignore_index"});
  LossSpec loss;
  loss.op = r.choice("op", std::nullopt, {"cross_entropy", "mse_loss"});
  if (loss.op != "cross_entropy" && r.has("label_smoothing"))
    r.failField("label_smoothing", "applies only to cross_entropy, not " +
                                       loss.op + "; remove it");
  loss.labelSmoothing =
      r.number("label_smoothing", 0.0, Range::closedOpen(0, 1));
  loss.reduction = r.choice("reduction", std::string("mean"), {"mean", "sum"});
  // Next-token prediction: a class at every position of the sequence.
  loss.targets = r.choice("targets", std::string("sample"), {"sample", "sequence"});
  if (loss.targets == "sequence" && loss.op != "cross_entropy")
    r.failField("targets", "\"sequence\" needs op cross_entropy, not " + loss.op);
  if (r.has("ignore_index") && loss.targets != "sequence")
    r.failField("ignore_index", "applies only to \"targets\": \"sequence\" (a sample's "
                                "class is never ignored); remove it");
  loss.ignoreIndex = r.integer("ignore_index", loss.ignoreIndex, INT64_MIN + 1);
  return loss;
}

/// train.distributed: `ranks` processes share the global batch
/// (docs/distributed.md).
rt::Distributed parseDistributed(const ObjectReader &r) {
  r.allowOnly({"ranks", "shard", "sync_batch_norm"});
  const rt::Distributed d;
  rt::Distributed out;
  out.ranks = r.integer("ranks", d.ranks, 1, limits::kMaxRanks);
  static const std::vector<std::string> kModes = {"none", "optimizer", "gradients",
                                                  "parameters"};
  std::string shard = r.choice("shard", kModes[0], kModes);
  out.shard = rt::Distributed::Shard(
      std::find(kModes.begin(), kModes.end(), shard) - kModes.begin());
  out.syncBatchNorm = r.boolean("sync_batch_norm", d.syncBatchNorm);
  return out;
}

rt::TrainRecipe parseTrain(const ObjectReader &r) {
  r.allowOnly({"batch_size", "epochs", "seed", "drop_last", "optimizer",
               "schedule", "precision", "ema", "grad_clip_norm", "accumulate",
               "memory_budget", "deterministic", "loss_scale", "distributed"});
  static const Json constantSchedule = {{"type", "constant"}};
  const rt::TrainRecipe d;
  rt::TrainRecipe train;
  train.batchSize = r.integer("batch_size", std::nullopt, 1, limits::kMaxBatch);
  train.epochs = r.number("epochs", std::nullopt, Range::positive());
  // The trainer counts ceil(epochs * steps_per_epoch) steps in an int64.
  if (train.epochs > limits::kMaxEpochs)
    r.failField("epochs", "must be at most " +
                              formatNumber(limits::kMaxEpochs) + kLimitNote +
                              ", got " + describe(*r.find("epochs")));
  train.seed = static_cast<uint64_t>(r.integer("seed", static_cast<int64_t>(d.seed), 0));
  train.dropLast = r.boolean("drop_last", d.dropLast);
  train.optimizer = parseOptimizer(r.object("optimizer"));
  train.schedule = parseSchedule(
      r.has("schedule") ? r.object("schedule")
                        : ObjectReader(constantSchedule, "", r.fieldRef("schedule")),
      train.cycleMomentum);
  std::string precision = r.choice("precision", d.precision.name(),
                                   {"fp32", "fp16-mixed", "bf16-mixed", "fp16", "bf16"});
  train.precision = *rt::Precision::parse(precision);
  // GradScaler's settings: defaults under fp16-mixed, an error elsewhere.
  static const Json noSettings = Json::object();
  const Json *lossScale = nullable(r, "loss_scale");
  if (lossScale && !train.precision.scalesLoss())
    r.failField("loss_scale", "applies only to train.precision \"fp16-mixed\" (bf16, fp32 "
                              "and pure fp16 train without loss scaling), not \"" +
                                  precision + "\"; remove it");
  if (train.precision.scalesLoss())
    train.lossScale = parseLossScale(lossScale ? r.object("loss_scale")
                                               : ObjectReader(noSettings, "", r.fieldRef("loss_scale")));
  if (nullable(r, "ema"))
    train.ema = parseEma(r.object("ema"));
  if (nullable(r, "grad_clip_norm"))
    train.gradClipNorm = r.number("grad_clip_norm", std::nullopt, Range::positive());
  train.accumulate = r.integer("accumulate", d.accumulate, 1, limits::kMaxAccumulate);
  // Both are bounded, so the product cannot overflow.
  if (train.batchSize * train.accumulate > limits::kMaxBatch)
    r.failField("accumulate",
                std::to_string(train.accumulate) + " times train.batch_size " +
                    std::to_string(train.batchSize) + " is an effective batch of " +
                    std::to_string(train.batchSize * train.accumulate) +
                    " samples, more than " + std::to_string(limits::kMaxBatch) +
                    kLimitNote + "; lower one of them");
  train.memoryBudget = parseMemoryBudget(r);
  train.deterministic = r.boolean("deterministic", d.deterministic);
  if (nullable(r, "distributed"))
    train.distributed = parseDistributed(r.object("distributed"));
  return train;
}

} // namespace tcc::frontend::detail


