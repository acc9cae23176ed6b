//===- OpSpecs.cpp - Fields of each op in model.json ----------------------===//
//
// One table entry per op: its fields, its number of inputs, and a function
// that reads the fields into NodeSpec::attrs (defaults filled, pairs as
// [h, w]) and NodeSpec::params. Parameter objects are read in ParamSpecs.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/SpecSections.h"

#include <array>

namespace tcc::frontend::detail {

ParamSpec parseParam(const ObjectReader &r, const NodeSpec &node,
                     std::string_view role, bool acceptsBool);
ParamSpec parseParamFields(const ObjectReader &p, const NodeSpec &node,
                           std::string_view role);

namespace {

using Pair = std::array<int64_t, 2>;

/// Reads op fields of one node, storing each in node.attrs.
struct OpReader {
  const ObjectReader &r;
  NodeSpec &node;
  const ModelSpec &spec;

  int64_t integer(const char *key, std::optional<int64_t> dflt, int64_t min,
                  int64_t max = INT64_MAX) {
    int64_t v = r.integer(key, dflt, min, max);
    node.attrs[key] = v;
    return v;
  }
  double number(const char *key, std::optional<double> dflt,
                Range range = Range::any()) {
    double v = r.number(key, dflt, range);
    node.attrs[key] = v;
    return v;
  }
  bool boolean(const char *key, bool dflt) {
    bool v = r.boolean(key, dflt);
    node.attrs[key] = v;
    return v;
  }
  std::string choice(const char *key, const char *dflt,
                     const std::vector<std::string> &choices) {
    std::string v = r.choice(key, std::string(dflt), choices);
    node.attrs[key] = v;
    return v;
  }
  /// An axis in PyTorch's convention; 0 is the batch and is refused.
  void axis(const char *key, int64_t dflt) {
    const Json *v = r.find(key);
    int64_t a = v ? r.checkInteger(key, *v, INT64_MIN + 1, INT64_MAX,
                                   "an integer")
                  : dflt;
    if (a == 0)
      r.failField(key, "must not be 0: dim 0 is the batch (dims count the "
                       "batch first, as in PyTorch)");
    node.attrs[key] = a;
  }
  /// An int or [h, w], each in [min, kMaxWindow]; stored as [h, w].
  Pair pair(const char *key, std::optional<Pair> dflt, int64_t min,
            std::string expected = "") {
    if (expected.empty())
      expected = ObjectReader::integerKind(min, INT64_MAX) + " or a pair of them";
    const Json *v = dflt ? r.find(key) : &r.require(key);
    Pair p = dflt ? *dflt : Pair{0, 0};
    auto entry = [&](const Json &e) {
      std::optional<int64_t> i = asInteger(e);
      std::optional<double> d = asNumber(e);
      if (d && *d > static_cast<double>(limits::kMaxWindow))
        r.failField(key, "must be at most " +
                             std::to_string(limits::kMaxWindow) + kLimitNote +
                             ", got " + describe(*v));
      if (!i || *i < min)
        r.failField(key, "must be " + expected + ", got " + describe(*v));
      return *i;
    };
    if (v) {
      if (v->is_array() && v->size() == 2)
        p = {entry((*v)[0]), entry((*v)[1])};
      else
        p = {entry(*v), entry(*v)};
    }
    node.attrs[key] = {p[0], p[1]};
    return p;
  }
  void param(const char *role, bool acceptsBool) {
    node.params[role] = parseParam(r, node, role, acceptsBool);
  }
};

std::string pairText(const Pair &p) {
  return "[" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + "]";
}

void conv2d(OpReader &o) {
  int64_t out = o.integer("out_channels", std::nullopt, 1, limits::kMaxFeatures);
  Pair kernel = o.pair("kernel", std::nullopt, 1);
  Pair stride = o.pair("stride", Pair{1, 1}, 1);
  Pair dilation = o.pair("dilation", Pair{1, 1}, 1);
  int64_t groups = o.integer("groups", 1, 1);
  if (out % groups != 0)
    o.r.failField("groups", "must divide out_channels " + std::to_string(out) +
                                ", got " + std::to_string(groups));
  const Json *padding = o.r.find("padding");
  if (padding && padding->is_string() && *padding == "same") {
    if (stride != Pair{1, 1})
      o.r.failField("padding", "\"same\" needs stride 1, got stride " +
                                   pairText(stride));
    Pair pad;
    for (int i = 0; i < 2; ++i) {
      int64_t span = dilation[i] * (kernel[i] - 1);
      if (span % 2 != 0)
        o.r.failField("padding",
                      "\"same\" needs an odd kernel, got kernel " +
                          pairText(kernel) + " with dilation " +
                          pairText(dilation) + "; give the padding as numbers");
      pad[i] = span / 2;
    }
    o.node.attrs["padding"] = {pad[0], pad[1]};
  } else {
    o.pair("padding", Pair{0, 0}, 0,
           "a non-negative integer, a pair of them, or \"same\"");
  }
  o.param("weight", false);
  o.param("bias", true);

  const ParamSpec &weight = o.node.params["weight"];
  if (weight.init.kind != "patch_whitening")
    return;
  auto failWhiten = [&](const std::string &why) {
    o.r.failHere("init 'patch_whitening' " + why);
  };
  if (weight.trainable)
    failWhiten("needs \"trainable\": false in 'weight' (the filters are "
               "computed from the data, not learned)");
  if (groups != 1)
    failWhiten("needs groups 1, got " + std::to_string(groups));
  if (dilation != Pair{1, 1})
    failWhiten("needs dilation 1, got " + pairText(dilation));
  if (o.node.inputs != std::vector<std::string>{"input"})
    failWhiten("needs the node to read \"input\" directly (the whitening is "
               "computed on the data)");
  if (o.spec.inputShape.size() == 3) {
    // in_channels < 2^31 and kh, kw <= 2^24: the product may overflow.
    // One filter per eigenvector (myrtle.ai's), or each also negated
    // (airbench's [V; -V]).
    std::optional<int64_t> want = o.spec.inputShape[0];
    for (int64_t k : kernel)
      want = want ? limits::mul(*want, k) : std::nullopt;
    std::optional<int64_t> twice = want ? limits::mul(2, *want) : std::nullopt;
    if (!want || (out != *want && out != twice))
      failWhiten("needs out_channels = in_channels * kh * kw = " +
                 (want ? std::to_string(*want) + " (or twice that for the negated filters "
                                                 "too)"
                       : std::to_string(o.spec.inputShape[0]) + " * " +
                             std::to_string(kernel[0]) + " * " + std::to_string(kernel[1])) +
                 ", got " + std::to_string(out));
  }
}

void pool2d(OpReader &o) {
  Pair kernel = o.pair("kernel", std::nullopt, 1);
  o.pair("stride", kernel, 1);
  Pair pad = o.pair("padding", Pair{0, 0}, 0);
  for (int i = 0; i < 2; ++i)
    if (pad[i] > kernel[i] / 2)
      o.r.failField("padding", "must be at most half the kernel (as PyTorch "
                               "requires), got padding " +
                                   pairText(pad) + " for kernel " +
                                   pairText(kernel));
}

void reshape(OpReader &o) {
  const Json &v = o.r.require("shape");
  const std::string expected =
      "must be a non-empty array of positive integers (one may be -1), "
      "without the batch dim, got ";
  if (!v.is_array() || v.empty())
    o.r.failField("shape", expected + describe(v));
  int inferred = 0;
  for (const Json &e : v) {
    std::optional<int64_t> i = asInteger(e);
    if (!i || (*i < 1 && *i != -1))
      o.r.failField("shape", expected + describe(v));
    if (*i == -1 && ++inferred > 1)
      o.r.failField("shape", "may hold -1 only once, got " + describe(v));
  }
  o.node.attrs["shape"] = v;
}

void transpose(OpReader &o) {
  const Json &v = o.r.require("perm");
  const std::string expected =
      "must be a permutation of 0..rank-1 over all dims, batch included, "
      "with perm[0] = 0, got ";
  if (!v.is_array() || v.size() < 2)
    o.r.failField("perm", expected + describe(v));
  std::vector<bool> seen(v.size(), false);
  for (const Json &e : v) {
    std::optional<int64_t> i = asInteger(e);
    if (!i || *i < 0 || *i >= static_cast<int64_t>(v.size()) || seen[*i])
      o.r.failField("perm", expected + describe(v));
    seen[*i] = true;
  }
  if (asInteger(v[0]) != 0)
    o.r.failField("perm", "must keep the batch first (perm[0] = 0), got " +
                              describe(v));
  o.node.attrs["perm"] = v;
}

/// slice and select: a required axis (not the batch); indices are
/// checked against the input's shape at import.
void slice(OpReader &o) {
  o.r.require("axis");
  o.axis("axis", 1);
  o.integer("start", 0, INT64_MIN + 1);
  const Json *end = o.r.find("end");
  o.node.attrs["end"] =
      end && !end->is_null()
          ? Json(o.r.checkInteger("end", *end, INT64_MIN + 1, INT64_MAX, "null or an integer"))
          : Json(nullptr);
  if (o.integer("step", 1, INT64_MIN + 1) != 1)
    o.r.failField("step", "must be 1 (strided slices are not supported yet), got " +
                              describe(*o.r.find("step")));
}

void select(OpReader &o) {
  o.r.require("axis");
  o.axis("axis", 1);
  o.integer("index", std::nullopt, INT64_MIN + 1);
}

/// A learnable tensor of PyTorch's shape [1, ...], broadcast over the batch.
void parameter(OpReader &o) {
  const Json &v = o.r.require("shape");
  const std::string expected =
      "must be the PyTorch tensor's shape, [1, ...] with at least 2 positive integers "
      "(dim 0, of size 1, is broadcast over the batch), got ";
  if (!v.is_array() || v.size() < 2)
    o.r.failField("shape", expected + describe(v));
  for (const Json &e : v) {
    std::optional<int64_t> i = asInteger(e);
    if (!i || *i < 1 || *i > limits::kMaxFeatures)
      o.r.failField("shape", expected + describe(v));
  }
  if (asInteger(v[0]) != 1)
    o.r.failField("shape", "must start with 1: the tensor is broadcast over the batch, as "
                           "cls.expand(N, -1, ...); got " +
                               describe(v));
  o.node.attrs["shape"] = v;
  o.node.params[""] = parseParamFields(o.r, o.node, "");
}

/// torch.nn.MultiheadAttention(E, heads, dropout, bias, batch_first=True):
/// its fields, and its parameters with PyTorch's names and inits (not
/// fields: a checkpoint of the module loads as is).
void multiheadAttention(OpReader &o) {
  if (o.r.has("key_padding_mask"))
    o.r.failField("key_padding_mask", "is not supported yet: every key is attended to; "
                                      "remove it (issue 38)");
  o.integer("heads", std::nullopt, 1, limits::kMaxFeatures);
  o.boolean("causal", false);
  o.number("dropout", 0.0, Range::closedOpen(0, 1));
  bool bias = o.boolean("bias", true);
  ParamSpec inProj, outProj, zeros;
  inProj.init.kind = "xavier_uniform";
  zeros.present = bias;
  zeros.init.kind = "zeros";
  o.node.params["in_proj_weight"] = inProj;
  o.node.params["in_proj_bias"] = zeros;
  o.node.params["out_proj.weight"] = outProj; // nn.Linear's default
  o.node.params["out_proj.bias"] = zeros;
}

/// torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx): the
/// table's weight; a negative padding_idx counts from the end, as PyTorch's.
void embedding(OpReader &o) {
  int64_t rows = o.integer("num_embeddings", std::nullopt, 1, limits::kMaxEmbeddings);
  o.integer("embedding_dim", std::nullopt, 1, limits::kMaxFeatures);
  const Json *padding = o.r.find("padding_idx");
  int64_t index = -1;
  if (padding && !padding->is_null()) {
    int64_t given =
        o.r.checkInteger("padding_idx", *padding, INT64_MIN + 1, INT64_MAX, "null or an integer");
    if (given < -rows || given >= rows)
      o.r.failField("padding_idx", "must be in [-num_embeddings, num_embeddings) = [" +
                                       std::to_string(-rows) + ", " + std::to_string(rows) +
                                       "), got " + std::to_string(given));
    index = given < 0 ? given + rows : given;
  }
  o.node.attrs["padding_idx"] = index;
  o.param("weight", false);
}

struct OpDef {
  const char *name;
  std::vector<std::string> fields;
  OpArity arity;
  void (*parse)(OpReader &);
};

void noFields(OpReader &) {}

const std::vector<OpDef> &opTable() {
  static const std::vector<OpDef> table = {
      {"conv2d",
       {"out_channels", "kernel", "stride", "padding", "dilation", "groups",
        "bias", "weight"},
       {1, 1},
       conv2d},
      {"linear",
       {"out_features", "bias", "weight"},
       {1, 1},
       [](OpReader &o) {
         o.integer("out_features", std::nullopt, 1, limits::kMaxFeatures);
         o.param("weight", false);
         o.param("bias", true);
       }},
      {"batch_norm",
       {"momentum", "eps", "ghost_batch", "ghost_grouping", "weight", "bias"},
       {1, 1},
       [](OpReader &o) {
         o.number("momentum", 0.1, Range::closed(0, 1));
         o.number("eps", 1e-5, Range::positive());
         const Json *ghost = o.r.find("ghost_batch");
         o.node.attrs["ghost_batch"] =
             ghost && !ghost->is_null()
                 ? o.r.checkInteger("ghost_batch", *ghost, 1,
                                    limits::kMaxBatch,
                                    "null or a positive integer")
                 : 0;
         // Consecutive samples (Hoffer et al.) or strided ones (myrtle.ai's
         // GhostBatchNorm view).
         o.choice("ghost_grouping", "consecutive", {"consecutive", "strided"});
         if (o.node.attrs["ghost_batch"] == 0 && o.r.has("ghost_grouping"))
           o.r.failField("ghost_grouping", "applies only with a ghost_batch; set one or "
                                           "remove it");
         o.param("weight", true);
         o.param("bias", true);
       }},
      {"layer_norm",
       {"normalized_dims", "eps", "weight", "bias"},
       {1, 1},
       [](OpReader &o) {
         const Json *dims = o.r.find("normalized_dims");
         o.node.attrs["normalized_dims"] =
             dims && !dims->is_null()
                 ? Json(o.r.checkInteger("normalized_dims", *dims, 1,
                                         INT64_MAX, "a positive integer"))
                 : Json(nullptr);
         o.number("eps", 1e-5, Range::positive());
         o.param("weight", true);
         o.param("bias", true);
       }},
      {"relu", {}, {1, 1}, noFields},
      {"sigmoid", {}, {1, 1}, noFields},
      {"tanh", {}, {1, 1}, noFields},
      {"silu", {}, {1, 1}, noFields},
      {"leaky_relu", {"negative_slope"}, {1, 1},
       [](OpReader &o) { o.number("negative_slope", 0.01); }},
      {"elu", {"alpha"}, {1, 1}, [](OpReader &o) { o.number("alpha", 1.0); }},
      {"celu", {"alpha"}, {1, 1},
       [](OpReader &o) {
         if (o.number("alpha", 1.0) == 0)
           o.r.failField("alpha", "must not be 0 (CELU divides by it)");
       }},
      {"gelu", {"approximate"}, {1, 1},
       [](OpReader &o) { o.choice("approximate", "none", {"none", "tanh"}); }},
      {"max_pool2d", {"kernel", "stride", "padding"}, {1, 1}, pool2d},
      {"avg_pool2d",
       {"kernel", "stride", "padding", "count_include_pad"},
       {1, 1},
       [](OpReader &o) {
         pool2d(o);
         o.boolean("count_include_pad", true);
       }},
      {"global_avg_pool", {}, {1, 1}, noFields},
      {"global_max_pool", {}, {1, 1}, noFields},
      {"add", {}, {2, 2}, noFields},
      {"mul", {}, {2, 2}, noFields},
      {"scale", {"factor"}, {1, 1},
       [](OpReader &o) { o.number("factor", std::nullopt); }},
      {"concat", {"axis"}, {2, 0}, [](OpReader &o) { o.axis("axis", 1); }},
      {"flatten", {}, {1, 1}, noFields},
      {"reshape", {"shape"}, {1, 1}, reshape},
      {"transpose", {"perm"}, {1, 1}, transpose},
      {"slice", {"axis", "start", "end", "step"}, {1, 1}, slice},
      {"parameter", {"shape", "init", "trainable", "train_epochs"}, {0, 0}, parameter},
      {"matmul", {"transpose_a", "transpose_b"}, {2, 2},
       [](OpReader &o) {
         o.boolean("transpose_a", false);
         o.boolean("transpose_b", false);
       }},
      {"mean", {"axis", "keepdim"}, {1, 1},
       [](OpReader &o) {
         o.r.require("axis");
         o.axis("axis", 1);
         o.boolean("keepdim", false);
       }},
      {"select", {"axis", "index"}, {1, 1}, select},
      {"embedding", {"num_embeddings", "embedding_dim", "padding_idx", "weight"}, {1, 1},
       embedding},
      {"dropout", {"p"}, {1, 1},
       [](OpReader &o) { o.number("p", 0.5, Range::closedOpen(0, 1)); }},
      {"softmax", {"axis"}, {1, 1}, [](OpReader &o) { o.axis("axis", -1); }},
      {"log_softmax", {"axis"}, {1, 1},
       [](OpReader &o) { o.axis("axis", -1); }},
      {"attention",
       {"heads", "causal", "dropout", "bias", "key_padding_mask"},
       {1, 2},
       multiheadAttention},
      {"scaled_dot_product_attention",
       {"heads", "causal", "dropout", "scale"},
       {3, 3},
       [](OpReader &o) {
         o.integer("heads", std::nullopt, 1, limits::kMaxFeatures);
         o.boolean("causal", false);
         o.number("dropout", 0.0, Range::closedOpen(0, 1));
         // null: 1/sqrt(head_dim), known once the importer sees the width.
         const Json *scale = o.r.find("scale");
         o.node.attrs["scale"] = scale && !scale->is_null()
                                     ? Json(o.r.number("scale", std::nullopt))
                                     : Json(nullptr);
       }},
  };
  return table;
}

const OpDef *findOp(std::string_view name) {
  for (const OpDef &def : opTable())
    if (name == def.name)
      return &def;
  return nullptr;
}

} // namespace

const std::vector<std::string> &opNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const OpDef &def : opTable())
      out.push_back(def.name);
    return out;
  }();
  return names;
}

std::optional<OpArity> opArity(std::string_view op) {
  if (const OpDef *def = findOp(op))
    return def->arity;
  return std::nullopt;
}

const std::vector<std::string> &opFields(std::string_view op) {
  static const std::vector<std::string> none;
  const OpDef *def = findOp(op);
  return def ? def->fields : none;
}

void parseOpFields(const ObjectReader &r, NodeSpec &node,
                   const ModelSpec &spec) {
  const OpDef *def = findOp(node.op);
  if (!def)
    return;
  node.attrs = Json::object();
  OpReader reader{r, node, spec};
  def->parse(reader);
}

} // namespace tcc::frontend::detail
