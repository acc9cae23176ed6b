//===- ParamInit.cpp - Parameter init specs -> concrete distributions -----===//
//
// The trainer only draws from a handful of distributions (constant, uniform,
// normal) or runs a named data-dependent method (dirac, patch_whitening).
// PyTorch's module defaults and the fan-based schemes are resolved here,
// once, with the tensor's fan-in and fan-out as torch.nn.init computes them.
//
//===----------------------------------------------------------------------===//

#include "frontend/ModelImporter.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;

namespace {
DictionaryAttr dict(MLIRContext *ctx, StringRef kind,
                    ArrayRef<std::pair<StringRef, double>> values) {
  Builder b(ctx);
  NamedAttrList attrs;
  attrs.append("kind", b.getStringAttr(kind));
  for (auto [name, value] : values)
    attrs.append(name, b.getF64FloatAttr(value));
  return attrs.getDictionary(ctx);
}

DictionaryAttr uniform(MLIRContext *ctx, double bound) {
  return dict(ctx, "uniform", {{"low", -bound}, {"high", bound}});
}
DictionaryAttr normal(MLIRContext *ctx, double mean, double std) {
  return dict(ctx, "normal", {{"mean", mean}, {"std", std}});
}
DictionaryAttr constant(MLIRContext *ctx, double value) {
  return dict(ctx, "constant", {{"value", value}});
}
} // namespace

DictionaryAttr mlir::tcc::resolveInit(MLIRContext *ctx,
                                      const ::tcc::frontend::InitSpec &init,
                                      StringRef op, StringRef role,
                                      int64_t fanIn, int64_t fanOut) {
  bool isNorm = op == "batch_norm" || op == "layer_norm";
  // PyTorch: kaiming_uniform_(a=sqrt(5)) for conv/linear weights and
  // uniform(+-1/sqrt(fan_in)) for their biases: both +-1/sqrt(fan_in).
  auto pytorchDefault = [&] {
    // torch.nn.Parameter(torch.zeros(...)), as torchvision's class token.
    if (op == "parameter")
      return constant(ctx, 0.0);
    // torch.nn.Embedding: N(0, 1).
    if (op == "embedding")
      return normal(ctx, 0.0, 1.0);
    if (isNorm)
      return constant(ctx, role == "weight" ? 1.0 : 0.0);
    return uniform(ctx, 1.0 / std::sqrt(static_cast<double>(fanIn)));
  };
  const std::string &kind = init.kind;
  if (kind == "default")
    return pytorchDefault();
  if (kind == "constant")
    return constant(ctx, init.value);
  if (kind == "zeros")
    return constant(ctx, 0.0);
  if (kind == "ones")
    return constant(ctx, 1.0);
  if (kind == "normal")
    return normal(ctx, init.mean, init.std);
  if (kind == "uniform")
    return dict(ctx, "uniform", {{"low", init.low}, {"high", init.high}});
  // torch.nn.init's defaults: gain sqrt(2) (ReLU) for kaiming, 1 for xavier.
  double in = static_cast<double>(fanIn), out = static_cast<double>(fanOut);
  if (kind == "kaiming_uniform")
    return uniform(ctx, std::sqrt(6.0 / in));
  if (kind == "kaiming_normal")
    return normal(ctx, 0.0, std::sqrt(2.0 / in));
  if (kind == "xavier_uniform")
    return uniform(ctx, std::sqrt(6.0 / (in + out)));
  if (kind == "xavier_normal")
    return normal(ctx, 0.0, std::sqrt(2.0 / (in + out)));
  if (kind == "dirac") {
    // The default draw first, then identity filters (airbench's Conv).
    DictionaryAttr base = pytorchDefault();
    return dict(ctx, "dirac",
                {{"low", cast<FloatAttr>(base.get("low")).getValueAsDouble()},
                 {"high", cast<FloatAttr>(base.get("high")).getValueAsDouble()}});
  }
  // patch_whitening: computed from the training data by the trainer.
  if (kind == "patch_whitening")
    return dict(ctx, kind,
                {{"eps", init.whiteningEps},
                 {"images", static_cast<double>(init.whiteningImages)},
                 {"ddof", init.whiteningUnbiased ? 1.0 : 0.0}});
  return dict(ctx, kind, {});
}
