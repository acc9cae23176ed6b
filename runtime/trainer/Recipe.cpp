//===- Recipe.cpp - What the trainer reads of the compiled recipe ----------===//

#include "runtime/trainer/Recipe.h"

#include "runtime/trainer/Text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace tcc::rt {

using Json = nlohmann::json;

int64_t totalStepsFor(double epochs, int64_t stepsPerEpoch) {
  double x = epochs * static_cast<double>(stepsPerEpoch);
  if (!(x > 0))
    return 0;
  if (x >= 9.2e18)
    return INT64_MAX;
  double nearest = std::nearbyint(x);
  if (std::abs(x - nearest) <= 1e-9 * std::max(1.0, x))
    return static_cast<int64_t>(nearest);
  return static_cast<int64_t>(std::ceil(x));
}

bool parseRecipe(const std::string &text, Recipe &out, std::string &error) {
  out = Recipe();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return true;
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception &e) {
    error = oneLine(e.what());
    return false;
  }
  if (!j.is_object()) {
    error = "not a JSON object";
    return false;
  }
  try {
    auto section = [&](const char *name) -> Json {
      auto it = j.find(name);
      if (it == j.end() || it->is_null())
        return Json::object();
      if (!it->is_object())
        throw std::runtime_error(std::string(name) + " is not an object");
      return *it;
    };
    Json train = section("train"), data = section("data"),
         eval = section("eval");
    out.epochs = train.value("epochs", 1.0);
    if (!(out.epochs > 0) || !std::isfinite(out.epochs))
      throw std::runtime_error("train.epochs must be positive");
    out.seed = train.value("seed", uint64_t(0));
    out.dropLast = train.value("drop_last", true);
    out.batchSize = train.value("batch_size", int64_t(0));
    out.precision = train.value("precision", std::string("fp32"));
    out.dataFormat = data.value("format", std::string());
    out.dataPath = data.value("path", std::string());
    if (data.contains("augment") && data["augment"].is_object()) {
      const Json &a = data["augment"];
      out.augment.cropPadding = a.value("random_crop_padding", int64_t(0));
      // true, false or "alternating" (the frontend's normal form)
      const Json flip = a.value("flip", Json(false));
      out.augment.flip = flip == true || flip == "alternating";
      out.augment.alternateFlip = flip == "alternating";
      out.augment.reflect = a.value("padding_mode", std::string("zeros")) == "reflect";
      out.augment.translate = a.value("translate", int64_t(0));
      out.augment.cutout = a.value("cutout", int64_t(0));
      out.augment.balanced = a.value("draws", std::string("independent")) == "balanced";
    }
    if (data.contains("normalize") && data["normalize"].is_object()) {
      const Json &n = data["normalize"];
      out.normalize.mean = n.value("mean", std::vector<float>());
      out.normalize.std = n.value("std", std::vector<float>());
    }
    out.evalBatchSize = eval.value("batch_size", int64_t(0));
  } catch (const std::exception &e) {
    error = oneLine(e.what());
    return false;
  }
  return true;
}

} // namespace tcc::rt
