//===- ParamSpecs.cpp - Parameter objects of model.json nodes -------------===//
//
// `weight` and `bias` fields: true / false / {"init": ..., "trainable": ...};
// a `parameter` node holds those fields itself (its role is "").
// Which init applies to which tensor is checked here, since a 1-d tensor has
// no fan-in and dirac / patch whitening only make sense for conv filters.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/SpecSections.h"

#include <algorithm>

namespace tcc::frontend::detail {
namespace {

const std::vector<std::string> kInitNames = {
    "default",        "zeros",          "ones",           "kaiming_uniform",
    "kaiming_normal", "xavier_uniform", "xavier_normal",  "dirac",
    "patch_whitening"};

InitSpec parseInitObject(const ObjectReader &r) {
  InitSpec init;
  init.kind = r.variant("type",
                        {{"normal", {"mean", "std"}},
                         {"uniform", {"low", "high"}},
                         {"constant", {"value"}},
                         {"patch_whitening", {"eps", "images", "unbiased"}}},
                        {}, "init type");
  if (init.kind == "normal") {
    init.mean = r.number("mean", 0.0);
    init.std = r.number("std", 1.0, Range::positive());
  } else if (init.kind == "uniform") {
    init.low = r.number("low", 0.0);
    init.high = r.number("high", 1.0);
    if (!(init.low < init.high))
      r.failField("high", "must be greater than low " +
                              formatNumber(init.low) + ", got " +
                              formatNumber(init.high));
  } else if (init.kind == "patch_whitening") {
    init.whiteningEps = r.number("eps", init.whiteningEps, Range::positive());
    init.whiteningImages = r.integer("images", init.whiteningImages, 2, limits::kMaxWhiteningImages);
    init.whiteningUnbiased = r.boolean("unbiased", false);
  } else {
    init.value = r.number("value", std::nullopt);
  }
  return init;
}

InitSpec parseInit(const ObjectReader &r) {
  const Json *v = r.find("init");
  InitSpec init;
  if (!v)
    return init;
  if (std::optional<double> d = asNumber(*v)) {
    init.kind = "constant";
    init.value = *d;
  } else if (v->is_string()) {
    init.kind = v->get<std::string>();
    if (std::find(kInitNames.begin(), kInitNames.end(), init.kind) ==
        kInitNames.end())
      r.failField("init", "has unknown init " + quote(init.kind) +
                              didYouMean(init.kind, kInitNames));
  } else if (v->is_object()) {
    init = parseInitObject(r.object("init"));
  } else {
    r.failField("init", "must be a number, an init name such as \"zeros\" or "
                        "\"kaiming_normal\", or an object such as "
                        "{\"type\": \"normal\", \"std\": 0.02}, got " +
                            describe(*v));
  }
  return init;
}

} // namespace

ParamSpec parseParamFields(const ObjectReader &p, const NodeSpec &node,
                           std::string_view role);

ParamSpec parseParam(const ObjectReader &r, const NodeSpec &node,
                     std::string_view role, bool acceptsBool) {
  ParamSpec param;
  const Json *v = r.find(role);
  if (!v)
    return param;
  if (v->is_boolean() && acceptsBool) {
    param.present = v->get<bool>();
    return param;
  }
  if (!v->is_object())
    r.failField(role, acceptsBool
                          ? "must be true, false or a parameter object such as "
                            "{\"init\": \"zeros\", \"trainable\": false}, got " +
                                describe(*v)
                          : "must be a parameter object such as {\"init\": "
                            "\"kaiming_normal\"}, got " +
                                describe(*v));
  ObjectReader p = r.object(role);
  p.allowOnly({"init", "trainable", "train_epochs"});
  return parseParamFields(p, node, role);
}

ParamSpec parseParamFields(const ObjectReader &p, const NodeSpec &node,
                           std::string_view role) {
  ParamSpec param;
  param.init = parseInit(p);
  param.trainable = p.boolean("trainable", true);
  // airbench trains its whitening bias for 3 epochs, then freezes it.
  if (p.has("train_epochs")) {
    param.trainEpochs = p.integer("train_epochs", std::nullopt, 1, limits::kMaxTrainEpochs);
    if (!param.trainable)
      p.failField("train_epochs", "needs \"trainable\": true (a frozen parameter never "
                                  "trains); remove one of them");
  }

  const std::string &kind = param.init.kind;
  bool convWeight = node.op == "conv2d" && role == "weight";
  bool matrixWeight = (node.op == "conv2d" || node.op == "linear") &&
                      role == "weight";
  if ((kind == "dirac" || kind == "patch_whitening") && !convWeight)
    p.failField("init", "is " + quote(kind) + ", which applies only to a "
                        "conv2d weight");
  if ((kind.rfind("kaiming", 0) == 0 || kind.rfind("xavier", 0) == 0) &&
      !matrixWeight)
    p.failField("init", "is " + quote(kind) + ", which needs a conv2d or linear weight (" +
                            (node.op == "parameter" ? "a parameter node" : "a 1-d tensor") +
                            " has no fan-in); use \"default\", a number or "
                            "{\"type\": \"normal\"}");
  return param;
}

} // namespace tcc::frontend::detail
