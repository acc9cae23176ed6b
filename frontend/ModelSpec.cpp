//===- ModelSpec.cpp - model.json -> ModelSpec ----------------------------===//
//
// The top level of model.json and the checks that span sections. The parts
// live beside this file: JsonText.cpp (syntax), GraphSpec.cpp, OpSpecs.cpp,
// ParamSpecs.cpp, TrainSpec.cpp, DataSpec.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/ModelSpec.h"

#include "frontend/Limits.h"
#include "frontend/SpecSections.h"

#include <algorithm>
#include <cctype>

namespace tcc::frontend {
using namespace detail;

namespace {

constexpr const char *kFormat = "tcc-model/1";

void parseInput(const ObjectReader &r, ModelSpec &spec) {
  r.allowOnly({"shape", "classes", "type", "vocab"});
  const Json &shape = r.require("shape");
  bool ok = shape.is_array() && (shape.size() == 1 || shape.size() == 3);
  std::optional<int64_t> perSample = 1;
  for (size_t i = 0; ok && i < shape.size(); ++i) {
    std::optional<int64_t> d = asInteger(shape[i]);
    ok = d && *d > 0;
    if (ok) {
      spec.inputShape.push_back(*d);
      perSample = limits::mul(*perSample, *d);
      ok = perSample && *perSample <= limits::kMaxTensorElements;
    }
  }
  if (!ok)
    r.failField("shape", "must be [C, H, W] or [F] with positive integers "
                         "(per sample, without the batch dim) and at most " +
                             std::to_string(limits::kMaxTensorElements) +
                             " elements per sample, got " + describe(shape));
  if (spec.inputShape.size() == 3 &&
      spec.inputShape[0] > limits::kMaxInputChannels)
    r.failField("shape", "has " + std::to_string(spec.inputShape[0]) +
                             " channels, more than " +
                             std::to_string(limits::kMaxInputChannels) +
                             kLimitNote);
  spec.classes = r.integer("classes", std::nullopt, 2, limits::kMaxFeatures);
  // Token ids [T] in [0, vocab): the data's integers, read by embeddings.
  if (r.choice("type", std::string("float"), {"float", "tokens"}) == "tokens") {
    if (spec.inputShape.size() != 1)
      r.failField("shape", "must be [T] (the sequence length) for \"type\": \"tokens\", got " +
                               describe(shape));
    spec.vocab = r.integer("vocab", std::nullopt, 1, limits::kMaxEmbeddings);
  } else if (r.has("vocab")) {
    r.failField("vocab", "applies only to a token input; add \"type\": \"tokens\" or remove "
                         "it");
  }
}

/// What is wrong with `name` as the file ./NAME (and the stem of checkpoint
/// names), or "" when nothing is.
std::string badModelName(const std::string &name) {
  bool charsOk = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.' || c == '-';
  });
  std::string got = ", got " + describe(Json(name));
  if (name.empty() || !charsOk)
    return "must hold only letters, digits, '_', '.' and '-'" + got;
  if (name == "." || name == "..")
    return "must not be '.' or '..': it names the trainer file ./NAME" + got;
  if (name[0] == '-')
    return "must not start with '-': the trainer file ./NAME would read as a "
           "command-line option" + got;
  if (name.size() > limits::kMaxNameLength)
    return "must be at most " + std::to_string(limits::kMaxNameLength) +
           " characters (it names the trainer file ./NAME), got " +
           std::to_string(name.size()) + " characters";
  return "";
}

void parseTop(const Json &doc, ModelSpec &spec) {
  ObjectReader top(doc, "", "");
  top.allowOnly({"format", "name", "description", "input", "blocks", "graph", "output",
                 "loss", "train", "data", "eval"});
  if (!top.has("format"))
    fail(std::string("missing top-level field 'format'; the first line "
                     "should be \"format\": \"") +
         kFormat + "\"");
  const Json &format = top.require("format");
  if (format != kFormat)
    fail("format " + describe(format) + " is not supported; this tcc reads \"" +
         kFormat + "\"");
  spec.name = top.string("name", std::nullopt);
  if (std::string why = badModelName(spec.name); !why.empty())
    top.failField("name", why);
  spec.description = top.string("description", std::string());
  parseInput(top.object("input"), spec);
  const Json *output = top.find("output");
  Json renamed;
  if (output && output->is_string()) {
    std::string name = output->get<std::string>();
    renamed = name;
    output = &renamed;
  }
  std::string *outputName = output ? renamed.get_ptr<std::string *>() : nullptr;
  parseGraph(expandBlocks(top.find("blocks"), top.require("graph"), outputName), output, spec);
  spec.loss = parseLoss(top.object("loss"));
  if (spec.loss.targets == "sequence" && spec.vocab == 0)
    fail("loss.targets \"sequence\" needs a token input (input \"type\": \"tokens\"): "
         "its targets are one class per token");
  spec.recipe.train = parseTrain(top.object("train"));
  spec.recipe.data = parseData(top.find("data"), spec);
  spec.recipe.eval = parseEval(top.find("eval"), spec);
  checkRecipeAgainstGraph(spec);
}

} // namespace

namespace detail {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

/// What a sharded optimizer (train.distributed.shard) cannot do yet: LAMB's
/// trust ratio needs a parameter's whole norm; with sharded gradients (and
/// parameters) the clipping norm and fp16's overflow check would be each
/// rank's alone.
void checkSharding(const rt::TrainRecipe &train) {
  using rt::Distributed;
  const Distributed &d = train.distributed;
  if (d.shard == Distributed::None)
    return;
  const char *mode = d.shard == Distributed::Optimizer   ? "\"optimizer\""
                     : d.shard == Distributed::Gradients ? "\"gradients\""
                                                         : "\"parameters\"";
  if (train.optimizer.type == rt::Optimizer::Lamb)
    fail(std::string("train.distributed.shard ") + mode + " cannot be combined with the lamb "
         "optimizer yet (its trust ratio needs each parameter's whole norm); use shard "
         "\"none\" or another optimizer");
  if (d.shard == Distributed::Optimizer)
    return;
  if (train.gradClipNorm)
    fail(std::string("train.distributed.shard ") + mode + " cannot be combined with "
         "train.grad_clip_norm yet (the norm would be each rank's shard's); use shard "
         "\"optimizer\"");
  if (train.lossScale)
    fail(std::string("train.distributed.shard ") + mode + " cannot be combined with "
         "fp16-mixed loss scaling yet (an overflow would be seen by one rank only); use shard "
         "\"optimizer\" or bf16-mixed");
}

/// The global batch splits evenly over the ranks (train.distributed).
void checkRanks(const rt::TrainRecipe &train) {
  int64_t ranks = train.distributed.ranks;
  if (ranks < 1 || ranks > limits::kMaxRanks)
    fail("train.distributed.ranks must be in [1, " + std::to_string(limits::kMaxRanks) +
         "], got " + std::to_string(ranks));
  if (train.batchSize % ranks != 0)
    fail("train.distributed.ranks " + std::to_string(ranks) + " does not divide train.batch_size " +
         std::to_string(train.batchSize) + " (the global batch: each rank trains an equal "
         "slice); choose a batch size that is a multiple of the ranks");
  checkSharding(train);
}

void checkRecipeAgainstGraph(const ModelSpec &spec) {
  checkRanks(spec.recipe.train);
  int64_t batch = spec.batchSize();
  for (const NodeSpec &node : spec.nodes) {
    for (const auto &[role, param] : node.params)
      if (param.trainEpochs > 0 && spec.recipe.train.gradClipNorm)
        fail("node " + quote(node.name) + " (graph[" + std::to_string(node.index) +
             "]): " + role + ".train_epochs cannot be combined with train.grad_clip_norm "
             "yet (the frozen parameter's gradient would still count in the clipped "
             "norm); remove one of them");
    if (node.op != "batch_norm")
      continue;
    int64_t ghost = node.attrs["ghost_batch"].get<int64_t>();
    std::string label = "node " + quote(node.name) + " (graph[" +
                        std::to_string(node.index) + "])";
    int64_t ranks = spec.recipe.train.distributed.ranks;
    if (ghost > 0 && batch % ghost != 0)
      fail(label + ": ghost_batch " + std::to_string(ghost) + " does not divide " +
           (ranks == 1 ? "train.batch_size " + std::to_string(batch)
                       : "the " + std::to_string(batch) + " samples of each rank (train."
                         "batch_size " + std::to_string(spec.recipe.train.batchSize) +
                         " over " + std::to_string(ranks) + " ranks): ghost batches stay "
                         "within a rank"));
    // Rank r holds the batch's r-th consecutive slice; strided group g is
    // samples g, g + N/G, ..., one from every slice.
    if (ghost > 0 && ranks > 1 && node.attrs["ghost_grouping"] == "strided")
      fail(label + ": ghost_grouping \"strided\" cannot keep its groups within a rank "
                   "(group g takes samples g, g + N/G, ... from every rank's slice of the "
                   "batch, so " + std::to_string(ranks) + " ranks would normalise other "
                   "groups than one process); use \"consecutive\" with train.distributed");
    if (ghost > 0 && !spec.recipe.train.dropLast)
      fail(label + ": ghost_batch needs train.drop_last true (a partial last "
                   "batch may not split into ghost batches)");
  }
}

void checkBatchTensors(const ModelSpec &spec) {
  int64_t perSample = 1;
  for (int64_t d : spec.inputShape)
    perSample *= d; // parseInput bounded the product
  auto check = [&](int64_t samples, const std::string &what,
                   const std::string &fix) {
    std::optional<int64_t> values = limits::mul(samples, perSample);
    if (!values || *values > limits::kMaxTensorElements)
      fail(what + " samples of input.shape " + shapeText(spec.inputShape) +
           " hold " + (values ? std::to_string(*values) : "more than 2^63") +
           " values, more than the " +
           std::to_string(limits::kMaxTensorElements) + " of one tensor" +
           kLimitNote + "; " + fix);
  };
  int64_t batch = spec.batchSize();
  int64_t accumulate = spec.recipe.train.accumulate;
  // The train step reads all `accumulate` micro-batches as one tensor.
  if (accumulate == 1)
    check(batch, "train.batch_size " + std::to_string(batch),
          "lower train.batch_size");
  else
    check(batch * accumulate,
          "train.batch_size " + std::to_string(batch) + " * train.accumulate " +
              std::to_string(accumulate) + " = " +
              std::to_string(batch * accumulate),
          "lower train.batch_size or train.accumulate");
  int64_t evalBatch = spec.recipe.eval.batchSize;
  check(evalBatch, "eval.batch_size " + std::to_string(evalBatch),
        "lower eval.batch_size");
}

} // namespace detail

const NodeSpec *ModelSpec::findNode(std::string_view name) const {
  for (const NodeSpec &node : nodes)
    if (node.name == name)
      return &node;
  return nullptr;
}

bool recheckRecipe(ModelSpec &spec, const std::string &what, std::string &error) {
  try {
    detail::checkRecipeAgainstGraph(spec);
    detail::checkBatchTensors(spec);
    return true;
  } catch (const SpecError &e) {
    error = what + ": " + e.what();
  }
  return false;
}

bool parseModelSpec(std::string_view text, const std::string &path,
                    ModelSpec &spec, std::string &error) {
  try {
    if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
      size_t line = 1 + std::count(text.begin(), text.begin() + nul, '\n');
      size_t lineStart = text.rfind('\n', nul);
      size_t column = nul - (lineStart == std::string_view::npos ? 0 : lineStart + 1) + 1;
      error = path + ":" + std::to_string(line) + ":" + std::to_string(column) +
              ": malformed JSON: a NUL byte (model.json must be plain text)";
      return false;
    }
    ModelSpec parsed;
    parsed.path = path;
    parseTop(parseJsonText(text), parsed);
    checkBatchTensors(parsed);
    spec = std::move(parsed);
    return true;
  } catch (const SpecError &e) {
    error = path + (e.location.empty() ? "" : ":" + e.location) + ": " +
            e.what();
  } catch (const std::exception &e) {
    // Not a user error, but never let it escape (e.g. bad_alloc).
    error = path + ": internal error while reading the model: " + e.what();
  } catch (...) {
    error = path + ": internal error while reading the model";
  }
  return false;
}

std::string closestMatch(std::string_view word,
                         const std::vector<std::string> &candidates) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char &c : out)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  // Optimal string alignment distance: a swap of neighbours costs 1.
  auto distance = [](const std::string &a, const std::string &b) {
    std::vector<std::vector<size_t>> d(a.size() + 1,
                                       std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
      d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
      d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                            d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  // Long inputs are not typos of short names; skip the quadratic work.
  if (word.empty() || word.size() > 64)
    return "";
  std::string w = lower(word);
  std::string best;
  size_t bestDistance = SIZE_MAX;
  for (const std::string &c : candidates) {
    if (c.size() > 64 || c == word)
      continue;
    size_t dist = distance(w, lower(c));
    size_t limit = std::max<size_t>(1, w.size() / 3);
    if (dist <= limit && dist < c.size() && dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  if (!best.empty())
    return best;
  // A missing prefix or suffix ("channels" for "out_channels").
  if (w.size() >= 4)
    for (const std::string &c : candidates) {
      std::string lc = lower(c);
      if (lc != w && (lc.find(w) != std::string::npos ||
                      w.find(lc) != std::string::npos) &&
          lc.size() >= 4)
        return c;
    }
  return "";
}

} // namespace tcc::frontend
