//===- ModelSpec.h - Validated, normalized form of model.json ---*- C++ -*-===//
//
// The frontend reads model.json in two steps. This file is the first: JSON
// text -> ModelSpec, checking everything that does not need tensor shapes
// (syntax, field names and types, value ranges, graph structure) and filling
// every default. The second step (ImportModel.h) builds the tcc dialect IR from
// a ModelSpec; shape errors are found there, by the ops' own type inference.
//
// Plain C++17 with nlohmann::json; no MLIR, so the runtime may share it.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_MODELSPEC_H
#define TCC_FRONTEND_MODELSPEC_H

#include "runtime/Recipe.h"
#include "runtime/trainer/InitWhitening.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::frontend {

/// How a parameter is initialised (docs/model-format.md, "Parameters").
struct InitSpec {
  /// One of: default, constant, zeros, ones, normal, uniform, kaiming_uniform,
  /// kaiming_normal, xavier_uniform, xavier_normal, dirac, patch_whitening.
  std::string kind = "default";
  double value = 0;              ///< constant
  double mean = 0, std = 1;      ///< normal
  double low = 0, high = 1;      ///< uniform
  /// patch_whitening: airbench's settings by default; myrtle.ai's ResNet-9
  /// uses eps 1e-2, 10000 images and the unbiased (n - 1) covariance.
  double whiteningEps = ::tcc::rt::kWhiteningEps;
  int64_t whiteningImages = ::tcc::rt::kWhiteningImages;
  bool whiteningUnbiased = false;
};

/// A learnable tensor of a node (`weight`, `bias`).
struct ParamSpec {
  bool present = true;
  InitSpec init;
  bool trainable = true;
  /// Trains for the first that many epochs only (0: the whole run).
  int64_t trainEpochs = 0;
};

/// One entry of `graph`, validated and with every default filled.
struct NodeSpec {
  std::string name;
  std::string op;
  /// Producer names; "input" is the model input. Empty only for a
  /// parameter node.
  std::vector<std::string> inputs;
  /// Position in the `graph` array, for messages ("graph[3]").
  size_t index = 0;
  /// Op attributes with defaults filled, in canonical form: pairs such as
  /// kernel/stride/padding/dilation are always 2-element integer arrays
  /// (padding "same" already resolved to numbers); enums are strings.
  nlohmann::json attrs = nlohmann::json::object();
  /// Parameters by role ("weight", "bias"); only ops that have them.
  std::map<std::string, ParamSpec> params;
};

struct LossSpec {
  std::string op = "cross_entropy"; ///< cross_entropy | mse_loss
  double labelSmoothing = 0;
  std::string reduction = "mean";   ///< mean | sum
  /// "sample": one class per sample; "sequence": one per position of a
  /// token input ([N, T] targets, positions equal to ignoreIndex skipped).
  std::string targets = "sample";
  int64_t ignoreIndex = -100;
};

struct ModelSpec {
  std::string path;        ///< the file it came from, for messages
  std::string name;
  std::string description;
  std::vector<int64_t> inputShape; ///< per sample: [C, H, W] or [F]
  int64_t classes = 0;
  /// A token input (input.type "tokens"): ids in [0, vocab); 0 otherwise.
  int64_t vocab = 0;
  std::vector<NodeSpec> nodes;     ///< in file order
  std::vector<size_t> topoOrder;   ///< indices into nodes, producers first
  std::string output;              ///< node whose value is the model output
  LossSpec loss;
  /// The train, data and eval sections, every default filled
  /// (docs/model-format.md).
  rt::Recipe recipe;

  /// Samples of one rank's step: the global train.batch_size over
  /// train.distributed.ranks (the shapes the step is compiled for).
  int64_t batchSize() const {
    return recipe.train.batchSize / recipe.train.distributed.ranks;
  }
  const NodeSpec *findNode(std::string_view name) const;
};

/// Parses and validates model.json text. On failure returns false and sets
/// `error` to one line "FILE[:LINE:COL]: what is wrong and how to fix it"
/// (without an "error:" prefix; the caller adds it).
bool parseModelSpec(std::string_view text, const std::string &path,
                    ModelSpec &spec, std::string &error);

/// Checks the recipe against the graph again after the driver changed it
/// (--batch-size, --ranks): on failure `error` is "WHAT: what is wrong".
bool recheckRecipe(ModelSpec &spec, const std::string &what, std::string &error);

/// Reads `path` and calls parseModelSpec.
bool loadModelSpec(const std::string &path, ModelSpec &spec,
                   std::string &error);

/// The closest of `candidates` to `word` by edit distance, or "" if none is
/// close enough to be a plausible typo.
std::string closestMatch(std::string_view word,
                         const std::vector<std::string> &candidates);

/// Parses a byte size: a non-negative integer, optionally followed by a unit
/// (B, K/KB, M/MB, G/GB, T/TB powers of 1000; KiB, MiB, GiB, TiB powers of
/// 1024), with a decimal fraction allowed before a unit ("1.5GiB").
bool parseByteSize(std::string_view text, int64_t &bytes);

} // namespace tcc::frontend

#endif // TCC_FRONTEND_MODELSPEC_H
