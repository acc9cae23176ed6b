//===- DataSpec.cpp - The `data` and `eval` sections of model.json --------===//
//
// Both sections are optional; the output always has every field, and the
// checks here catch a data set or augmentation that cannot feed the model's
// input before anything is compiled.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/SpecSections.h"

#include <algorithm>

namespace tcc::frontend::detail {
namespace {

const Json &emptyObject() {
  static const Json empty = Json::object();
  return empty;
}

bool isImage(const ModelSpec &spec) { return spec.inputShape.size() == 3; }

/// Per-channel normalization; a flat input [F] counts as one channel.
/// data.normalize's mean and std, a value per channel.
void parseNormalize(const ObjectReader &r, const ModelSpec &spec, rt::DataRecipe &out) {
  r.allowOnly({"mean", "std"});
  size_t channels = isImage(spec) ? static_cast<size_t>(spec.inputShape[0]) : 1;
  std::string channelText = std::to_string(channels) +
                            (channels == 1 ? " channel" : " channels") +
                            " (input.shape " + shapeText(spec.inputShape) + ")";
  auto read = [&](const char *key, double dflt, Range range) {
    const Json *v = r.find(key);
    if (!v)
      return std::vector<float>(channels, static_cast<float>(dflt));
    bool numbers = v->is_array() &&
                   std::all_of(v->begin(), v->end(), [](const Json &e) {
                     return asNumber(e).has_value();
                   });
    if (!numbers || v->empty())
      r.failField(key, "must be an array of numbers, one per channel, got " +
                           describe(*v));
    if (v->size() != channels)
      r.failField(key, "has " + std::to_string(v->size()) + " value" +
                           (v->size() == 1 ? "" : "s") + " but the input has " +
                           channelText);
    std::vector<float> values;
    for (size_t i = 0; i < v->size(); ++i) {
      double d = *asNumber((*v)[i]);
      if (!range.contains(d))
        fail(r.fieldRef(key) + "[" + std::to_string(i) + "] must be " +
             range.text() + ", got " + describe((*v)[i]));
      values.push_back(static_cast<float>(d));
    }
    return values;
  };
  out.mean = read("mean", 0.0, Range::any());
  out.std = read("std", 1.0, Range::positive());
}

/// The smaller side of an image input, 0 for a flat one.
int64_t smallerSide(const ModelSpec &spec) {
  return isImage(spec) ? std::min(spec.inputShape[1], spec.inputShape[2]) : 0;
}

rt::AugmentConfig parseAugment(const ObjectReader &r, const ModelSpec &spec) {
  r.allowOnly({"random_crop_padding", "flip", "translate", "cutout", "padding_mode", "draws"});
  const rt::AugmentConfig d;
  rt::AugmentConfig out;
  // flip: false, true (each image at random each epoch), or "alternating"
  // (airbench: each image at random in the first epoch, then the other way
  // each epoch).
  if (const Json *v = r.find("flip")) {
    if (!v->is_boolean() && *v != "alternating")
      r.failField("flip", "must be true, false or \"alternating\", got " + describe(*v));
    out.flip = *v != false;
    out.alternateFlip = *v == "alternating";
  }
  out.cropPadding = r.integer("random_crop_padding", d.cropPadding, 0);
  out.translate = r.integer("translate", d.translate, 0);
  out.cutout = r.integer("cutout", d.cutout, 0);
  out.reflect = r.choice("padding_mode", std::string("zeros"), {"zeros", "reflect"}) == "reflect";
  // "balanced": each choice to an equal share of the epoch (myrtle.ai's
  // cifar10-fast), not drawn per sample
  out.balanced =
      r.choice("draws", std::string("independent"), {"independent", "balanced"}) == "balanced";
  if (!isImage(spec)) {
    std::pair<const char *, bool> used[] = {
        {"random_crop_padding", out.cropPadding != 0}, {"flip", out.flip},
        {"translate", out.translate != 0},             {"cutout", out.cutout != 0},
        {"padding_mode", out.reflect},                 {"draws", out.balanced}};
    for (auto [key, set] : used)
      if (set)
        r.failField(key, "needs an image input [C, H, W], but "
                         "input.shape is " +
                             shapeText(spec.inputShape));
  }
  // Beyond the image's side every pixel is already filled or cut out; the
  // bound also keeps the trainer's padded buffers small.
  std::pair<const char *, int64_t> sizes[] = {
      {"random_crop_padding", out.cropPadding}, {"translate", out.translate}, {"cutout", out.cutout}};
  for (auto [key, size] : sizes)
    if (size > smallerSide(spec))
      r.failField(key, "must be at most the image's smaller side " +
                           std::to_string(smallerSide(spec)) +
                           " (input.shape " + shapeText(spec.inputShape) +
                           "), got " + describe(*r.find(key)));
  // A reflection reaches at most the side - 1 pixels beyond the border
  // (PyTorch's reflect padding needs padding < side).
  if (out.reflect)
    for (auto [key, size] : {sizes[0], sizes[1]})
      if (size >= smallerSide(spec))
        r.failField(key, "must be smaller than the image's smaller side " +
                             std::to_string(smallerSide(spec)) +
                             " with padding_mode \"reflect\", got " + describe(*r.find(key)));
  return out;
}

} // namespace

rt::DataRecipe parseData(const Json *data, const ModelSpec &spec) {
  ObjectReader r(data ? *data : emptyObject(), "", "data");
  r.allowOnly({"format", "path", "augment", "normalize"});
  const std::vector<int64_t> &shape = spec.inputShape;
  std::optional<std::string> defaultFormat;
  if (shape == std::vector<int64_t>{1, 28, 28})
    defaultFormat = "idx";
  else if (shape == std::vector<int64_t>{3, 32, 32})
    defaultFormat = "cifar10";
  if (!defaultFormat && !r.has("format"))
    fail(std::string(data ? "data: missing field 'format'"
                          : "missing top-level field 'data'") +
         ": input.shape " + shapeText(shape) +
         " matches no default data set (\"idx\" is the default for [1, 28, "
         "28], \"cifar10\" for [3, 32, 32]); give \"format\" and \"path\"");
  std::string format =
      r.choice("format", defaultFormat, {"idx", "cifar10", "npy"});
  if (spec.vocab > 0 && format != "npy")
    r.failField("format", "must be \"npy\" for a token input (input.type \"tokens\"): "
                          "train_x.npy of integer token ids [N, T]; got " +
                              quote(format));
  if (spec.vocab > 0 && r.has("normalize"))
    r.failField("normalize", "applies to images and features, not to token ids (input.type "
                             "\"tokens\"); remove it");
  if (format == "idx" && (shape.size() != 3 || shape[0] != 1))
    r.failField("format", "'idx' needs input shape [1, H, W], got " +
                              shapeText(shape));
  if (format == "cifar10" && shape != std::vector<int64_t>{3, 32, 32})
    r.failField("format", "'cifar10' needs input shape [3, 32, 32], got " +
                              shapeText(shape));
  if (format == "cifar10" && spec.classes != 10)
    r.failField("format", "'cifar10' has 10 classes, but input.classes is " +
                              std::to_string(spec.classes));

  std::optional<std::string> defaultPath;
  if (format == "idx")
    defaultPath = "/usr/share/datasets/fashion-mnist";
  else if (format == "cifar10")
    defaultPath = "data/cifar-10-batches-bin";
  std::string path = r.string("path", defaultPath);
  if (path.empty())
    r.failField("path", "must not be empty");

  rt::DataRecipe out;
  out.format = format == "idx"       ? rt::DataRecipe::Idx
               : format == "cifar10" ? rt::DataRecipe::Cifar10
                                     : rt::DataRecipe::Npy;
  out.path = path;
  out.augment = parseAugment(r.has("augment") ? r.object("augment")
                                              : ObjectReader(emptyObject(), "", "data.augment"),
                             spec);
  parseNormalize(r.has("normalize") ? r.object("normalize")
                                    : ObjectReader(emptyObject(), "", "data.normalize"),
                 spec, out);
  return out;
}

rt::EvalRecipe parseEval(const Json *eval, const ModelSpec &spec) {
  ObjectReader r(eval ? *eval : emptyObject(), "", "eval");
  r.allowOnly({"tta", "translate", "batch_size"});
  Json tta = Json::array();
  if (const Json *v = r.find("tta")) {
    static const std::vector<std::string> kinds = {"flip", "translate"};
    if (!v->is_array())
      r.failField("tta", "must be an array such as [\"flip\", \"translate\"], "
                         "got " +
                             describe(*v));
    for (const Json &e : *v) {
      std::string kind = e.is_string() ? e.get<std::string>() : "";
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
        r.failField("tta", "may hold only \"flip\" and \"translate\", got " +
                               describe(e) + didYouMean(kind, kinds));
      if (std::find(tta.begin(), tta.end(), e) != tta.end())
        r.failField("tta", "lists " + describe(e) + " twice");
      if (!isImage(spec))
        r.failField("tta", describe(e) + " needs an image input [C, H, W], "
                                         "but input.shape is " +
                               shapeText(spec.inputShape));
      tta.push_back(e);
    }
  }
  const rt::EvalRecipe d;
  int64_t translate = r.integer("translate", d.translate, 0);
  bool translated = std::find(tta.begin(), tta.end(), "translate") != tta.end();
  if (translate == 0 && translated)
    r.failField("translate", "must be > 0 when eval.tta has \"translate\"");
  // The views are reflected at the border, which needs a shift smaller than
  // the image.
  if (translated && translate >= smallerSide(spec))
    r.failField("translate", "must be smaller than the image's smaller side " +
                                 std::to_string(smallerSide(spec)) +
                                 " (input.shape " + shapeText(spec.inputShape) +
                                 "), got " + std::to_string(translate));
  rt::EvalRecipe out;
  out.flipViews = std::find(tta.begin(), tta.end(), "flip") != tta.end();
  out.translateViews = translated;
  out.translate = translate;
  out.batchSize = r.integer("batch_size", spec.batchSize(), 1, limits::kMaxBatch);
  return out;
}

} // namespace tcc::frontend::detail
