//===- Mutator.cpp - Structured mutations of a model.json -----------------===//
//
// Mutations work on the parsed document, so almost every mutant is valid JSON
// and reaches the checks past the parser; two act on the text (a duplicate
// key, damaged bytes), which a document cannot hold.
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/Mutator.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace tcc::fuzz {
namespace {

using Json = nlohmann::json;
using Ptr = Json::json_pointer;

/// Stands for a key that the text step duplicates (see dupKey).
constexpr const char *kDupSentinel = "zz_fuzz_duplicate_zz";

const std::vector<std::string> kOps = {
    "conv2d", "linear", "batch_norm", "layer_norm", "relu", "sigmoid", "tanh",
    "silu", "leaky_relu", "elu", "celu", "gelu", "max_pool2d", "avg_pool2d",
    "global_avg_pool", "global_max_pool", "add", "mul", "scale", "concat",
    "flatten", "reshape", "transpose", "dropout", "softmax", "log_softmax",
    "slice", "select", "parameter", "matmul", "mean",
    "scaled_dot_product_attention", "attention"};

/// Fields a mutation may add, by where they go ("node" is any graph node).
const std::vector<std::pair<std::string, std::string>> kFields = {
    {"node", "kernel"}, {"node", "stride"}, {"node", "padding"},
    {"node", "dilation"}, {"node", "groups"}, {"node", "out_channels"},
    {"node", "out_features"}, {"node", "ghost_batch"}, {"node", "axis"},
    {"node", "normalized_dims"}, {"node", "shape"}, {"node", "perm"},
    {"node", "p"}, {"node", "bias"}, {"node", "weight"}, {"node", "inputs"},
    {"node", "heads"}, {"node", "causal"}, {"node", "dropout"}, {"node", "scale"},
    {"node", "key_padding_mask"},
    {"node", "start"}, {"node", "end"}, {"node", "step"}, {"node", "index"},
    {"node", "transpose_a"}, {"node", "transpose_b"}, {"node", "keepdim"},
    {"node", "init"}, {"node", "trainable"},
    {"/train", "accumulate"}, {"/train", "batch_size"}, {"/train", "epochs"},
    {"/train", "ema"}, {"/train", "grad_clip_norm"}, {"/train", "seed"},
    {"/train", "memory_budget"}, {"/train", "precision"},
    {"/train/optimizer", "lookahead"}, {"/train/optimizer", "groups"},
    {"/train/optimizer", "momentum"}, {"/train/optimizer", "betas"},
    {"/train/schedule", "warmup"}, {"/train/schedule", "points"},
    {"/eval", "batch_size"}, {"/eval", "translate"}, {"/eval", "tta"},
    {"/data/augment", "random_crop_padding"}, {"/data/augment", "translate"},
    {"/data/augment", "cutout"}, {"/data/augment", "flip"},
    {"/input", "classes"}, {"/input", "shape"}, {"", "output"}, {"", "name"}};

struct Random {
  std::mt19937_64 &g;
  size_t below(size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(g) : 0; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g) < p; }
  template <class T> const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }
};

/// A number at the edge of some range: huge, negative, zero, fractional,
/// 2^k and 2^k +- 1.
Json edgeNumber(Random &r) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  switch (r.below(7)) {
  case 0:
    return r.pick(std::vector<Json>{0, 1, -1, 2, 3, 4, 7, 8, 16, 32, 100, 1000});
  case 1:
    return r.pick(std::vector<Json>{0.5, 2.5, -0.5, 1e-300, 1e-7, 0.999999, -0.0, 3.0});
  case 2: {
    int k = static_cast<int>(r.below(63));
    return (int64_t(1) << k) + (static_cast<int64_t>(r.below(3)) - 1);
  }
  case 3:
    return r.pick(std::vector<Json>{1e308, -1e308, 1e30, 3e9, 9.2233720368547758e18,
                                    max, std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<uint64_t>::max(),
                                    uint64_t(1) << 63, 1.8446744073709552e19});
  case 4:
    return -(int64_t(1) << r.below(63));
  case 5:
    return r.pick(std::vector<Json>{int64_t(1) << 31, (int64_t(1) << 31) - 1,
                                    int64_t(1) << 20, (int64_t(1) << 20) + 1,
                                    int64_t(1) << 24, (int64_t(1) << 24) + 1,
                                    int64_t(1) << 62, int64_t(1) << 57, 1024, 1025});
  default:
    return Json::array({static_cast<int64_t>(r.below(5)), static_cast<int64_t>(r.below(5))});
  }
}

/// A value of some other JSON type.
Json otherType(Random &r) {
  static const std::vector<Json> values = {
      nullptr, true, false, "", "x", "same", "zeros", Json::array(),
      Json::array({1, 2}), Json::array({1, 2, 3}), Json::array({"a"}),
      Json::object(), Json::object({{"init", "zeros"}}), 1, 0.5, "input"};
  return r.pick(values);
}

Json anyValue(Random &r) { return r.chance(0.7) ? edgeNumber(r) : otherType(r); }

std::string oddName(Random &r, const Json &graph) {
  std::vector<std::string> names = {"input", "", "1abc", "a b", "a/b", "x.y",
                                    std::string(300, 'n'), "caf\u00e9", "new_node"};
  for (const Json &node : graph)
    if (node.is_object() && node.contains("name") && node["name"].is_string())
      names.push_back(node["name"].get<std::string>());
  return r.pick(names);
}

void collect(const Json &v, const Ptr &at, std::vector<Ptr> &all) {
  all.push_back(at);
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it)
      collect(*it, at / it.key(), all);
  else if (v.is_array())
    for (size_t i = 0; i < v.size(); ++i)
      collect(v[i], at / i, all);
}

class Mutation {
public:
  Mutation(Json &doc, Random &r, std::string &what) : doc(doc), r(r), what(what) {}

  /// Applies one mutation to the document; returns true if the text step
  /// should duplicate a key.
  bool apply() {
    collect(doc, Ptr(), paths);
    paths.erase(paths.begin()); // never the root itself
    if (paths.empty())
      return false;
    size_t kind = r.below(100);
    if (kind >= 84)
      return dupKey();
    if (kind < 25)
      number();
    else if (kind < 40)
      addField();
    else if (kind < 47)
      drop();
    else if (kind < 54)
      set(r.pick(paths), otherType(r), "type");
    else if (kind < 62)
      nodeEdit();
    else if (kind < 70)
      rewire();
    else if (kind < 75)
      reorder();
    else if (kind < 80)
      string();
    else
      nest();
    return false;
  }

private:
  void note(const std::string &s) { what += (what.empty() ? "" : "; ") + s; }

  void set(const Ptr &at, Json value, const char *kind) {
    note(std::string(kind) + " " + at.to_string() + " = " + value.dump().substr(0, 60));
    doc[at] = std::move(value);
  }

  void number() {
    std::vector<Ptr> numbers;
    for (const Ptr &p : paths)
      if (doc[p].is_number())
        numbers.push_back(p);
    if (numbers.empty())
      return addField();
    const Ptr &at = r.pick(numbers);
    set(at, r.chance(0.5) ? edgeNumber(r) : nearby(doc[at]), "number");
  }

  /// A value near `v` that often stays valid, so the mutant reaches the
  /// checks past the parser (shapes, the recipe against the graph).
  Json nearby(const Json &v) {
    if (v.is_number_float())
      return v.get<double>() * r.pick(std::vector<double>{0.5, 2, 10, 0.1});
    int64_t i = v.is_number_unsigned() ? 1 : v.get<int64_t>();
    if (i > (int64_t(1) << 60) || i < -(int64_t(1) << 60))
      i /= 4; // keeps i + 1 and 2 * i inside int64
    return r.pick(std::vector<int64_t>{i + 1, i - 1, 2 * i, i / 2, 1, 0});
  }

  Json *graph() {
    Json *g = doc.contains("graph") ? &doc["graph"] : nullptr;
    return g && g->is_array() && !g->empty() ? g : nullptr;
  }

  void addField() {
    const auto &[where, key] = r.pick(kFields);
    Ptr at;
    if (where == "node") {
      Json *g = graph();
      if (!g)
        return;
      at = Ptr("/graph") / r.below(g->size());
    } else {
      at = Ptr(where);
    }
    if (!doc.contains(at) || !doc[at].is_object())
      doc[at] = Json::object();
    set(at / key, anyValue(r), "add");
  }

  void drop() {
    const Ptr &at = r.pick(paths);
    note("drop " + at.to_string());
    Json &parent = doc[at.parent_pointer()];
    if (parent.is_object())
      parent.erase(at.back());
    else if (parent.is_array())
      parent.erase(static_cast<size_t>(std::stoul(at.back())));
  }

  void nodeEdit() {
    Json *g = graph();
    if (!g)
      return;
    size_t i = r.below(g->size());
    Json &node = (*g)[i];
    switch (r.below(4)) {
    case 0:
      return set(Ptr("/graph") / i / "op", r.pick(kOps), "op");
    case 1:
      note("delete node " + std::to_string(i));
      g->erase(i);
      return;
    case 2: {
      std::string name = oddName(r, *g);
      // A consistent rename also renames the references, so that the
      // name's own rules are what is tested.
      if (r.chance(0.5) && node.is_object() && node.contains("name")) {
        Json old = node["name"];
        for (Json &other : *g) {
          if (!other.is_object() || !other.contains("inputs"))
            continue;
          Json &inputs = other["inputs"];
          if (inputs == old)
            inputs = name;
          else if (inputs.is_array())
            for (Json &in : inputs)
              if (in == old)
                in = name;
        }
      }
      return set(Ptr("/graph") / i / "name", name, "rename");
    }
    default: {
      Json copy = node;
      if (r.chance(0.5) && copy.is_object())
        copy["name"] = "dup" + std::to_string(r.below(1000));
      size_t at = r.below(g->size() + 1);
      note("duplicate node " + std::to_string(i) + " at " + std::to_string(at));
      g->insert(g->begin() + static_cast<std::ptrdiff_t>(at), copy);
    }
    }
  }

  void rewire() {
    Json *g = graph();
    if (!g)
      return;
    size_t i = r.below(g->size());
    Json inputs;
    switch (r.below(4)) {
    case 0:
      inputs = oddName(r, *g);
      break;
    case 1:
      inputs = Json::array({oddName(r, *g), oddName(r, *g)});
      break;
    case 2:
      inputs = Json::array({oddName(r, *g), oddName(r, *g), oddName(r, *g)});
      break;
    default:
      inputs = otherType(r);
    }
    set(Ptr("/graph") / i / "inputs", inputs, "inputs");
  }

  void reorder() {
    Json *g = graph();
    if (!g || g->size() < 2)
      return;
    size_t a = r.below(g->size()), b = r.below(g->size());
    note("swap nodes " + std::to_string(a) + " and " + std::to_string(b));
    std::swap((*g)[a], (*g)[b]);
  }

  void string() {
    std::vector<Ptr> strings;
    for (const Ptr &p : paths)
      if (doc[p].is_string())
        strings.push_back(p);
    if (strings.empty())
      return;
    static const std::vector<std::string> values = {
        "", "same", "zeros", "kaiming_normal", "patch_whitening", "dirac",
        "sum", "mean", "cosine", "piecewise_linear", "step", "lamb", "sgd",
        "npy", "cifar10", "idx", "bf16-mixed", "1e999GiB", "8GiB", "tanh",
        std::string(5000, 'x'), "\x01\x7f", "*.bias", "{a,b", "[", "input"};
    set(r.pick(strings), r.chance(0.3) ? r.pick(kOps) : r.pick(values), "string");
  }

  void nest() {
    const Ptr &at = r.pick(paths);
    size_t depth = r.pick(std::vector<size_t>{2, 10, 63, 64, 65, 200});
    bool arrays = r.chance(0.5);
    Json v = doc[at];
    for (size_t d = 0; d < depth; ++d)
      v = arrays ? Json::array({std::move(v)}) : Json::object({{"a", std::move(v)}});
    note("nest " + at.to_string() + " " + std::to_string(depth) + " deep");
    doc[at] = std::move(v);
  }

  bool dupKey() {
    std::vector<Ptr> objects;
    for (const Ptr &p : paths)
      if (doc[p].is_object() && !doc[p].empty())
        objects.push_back(p);
    if (doc.is_object() && !doc.empty())
      objects.push_back(Ptr());
    if (objects.empty())
      return false;
    Json &object = doc[r.pick(objects)];
    auto it = object.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(r.below(object.size())));
    note("duplicate key '" + it.key() + "'");
    dupKeyName = it.key();
    object[kDupSentinel] = anyValue(r);
    return true;
  }

public:
  std::string dupKeyName;

private:
  Json &doc;
  Random &r;
  std::string &what;
  std::vector<Ptr> paths;
};

/// Damages the text: truncates it, or deletes, inserts or replaces a byte.
void damageText(std::string &text, Random &r, std::string &what) {
  if (text.empty())
    return;
  size_t at = r.below(text.size());
  static const std::string bytes = "{}[],:\"\\0x-.e \n\t";
  switch (r.below(4)) {
  case 0:
    text.resize(at);
    what += "; truncate at " + std::to_string(at);
    return;
  case 1:
    text.erase(at, 1);
    break;
  case 2:
    text.insert(at, 1, bytes[r.below(bytes.size())]);
    break;
  default:
    text[at] = static_cast<char>(r.below(256));
  }
  what += "; damage byte " + std::to_string(at);
}

} // namespace

Mutant mutate(const nlohmann::json &model, std::mt19937_64 &rng) {
  Random r{rng};
  Mutant out;
  Json doc = model;
  std::string dupKey;
  size_t count = r.chance(0.6) ? 1 : r.chance(0.75) ? 2 : 3;
  for (size_t n = count; n > 0; --n) {
    Json before = doc;
    std::string whatBefore = out.what;
    Mutation m(doc, r, out.what);
    // nlohmann throws where a path runs through a value of another type
    // (a mutation after an earlier one changed it): skip that mutation.
    try {
      if (m.apply())
        dupKey = m.dupKeyName;
    } catch (const Json::exception &) {
      doc = std::move(before);
      out.what = whatBefore;
    }
  }
  out.text = doc.dump();
  if (!dupKey.empty()) {
    std::string sentinel = "\"" + std::string(kDupSentinel) + "\"";
    size_t at = out.text.find(sentinel);
    if (at != std::string::npos)
      out.text.replace(at, sentinel.size(), Json(dupKey).dump());
  }
  if (r.chance(0.03))
    damageText(out.text, r, out.what);
  return out;
}

} // namespace tcc::fuzz
