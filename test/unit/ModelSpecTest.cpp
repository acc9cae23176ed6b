//===- ModelSpecTest.cpp - Unit tests of the model.json parser ------------===//
//
// The examples must parse with the right defaults; every class of user error
// must produce one line that names the place, the rule and the fix; and no
// input may crash the parser.
//
//===----------------------------------------------------------------------===//

#include "frontend/ModelSpec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

using namespace tcc::frontend;
using nlohmann::json;
namespace rt = tcc::rt;

namespace {

const char *kPath = "model.json";

/// A small valid model that the error tests mutate.
const char *kBase = R"({
  "format": "tcc-model/1",
  "name": "tiny",
  "input": {"shape": [1, 28, 28], "classes": 10},
  "graph": [
    {"name": "conv1", "op": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1},
    {"name": "bn1", "op": "batch_norm"},
    {"name": "act1", "op": "relu"},
    {"name": "pool", "op": "global_avg_pool"},
    {"name": "fc", "op": "linear", "out_features": 10}
  ],
  "loss": {"op": "cross_entropy"},
  "train": {"batch_size": 64, "epochs": 1, "optimizer": {"type": "sgd", "lr": 0.1}}
})";

std::string example(const std::string &name) {
  return std::string(TCC_SOURCE_DIR) + "/examples/" + name;
}

ModelSpec parseOk(const std::string &text) {
  ModelSpec spec;
  std::string error;
  EXPECT_TRUE(parseModelSpec(text, kPath, spec, error)) << error;
  return spec;
}

ModelSpec loadOk(const std::string &path) {
  ModelSpec spec;
  std::string error;
  EXPECT_TRUE(loadModelSpec(path, spec, error)) << error;
  return spec;
}

/// The error for `text`, checked to be one line that starts with the path.
std::string parseError(const std::string &text) {
  ModelSpec spec;
  std::string error;
  EXPECT_FALSE(parseModelSpec(text, kPath, spec, error))
      << "expected an error for:\n"
      << text;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.rfind(std::string(kPath) + ":", 0), 0u) << error;
  EXPECT_EQ(error.find("error:"), std::string::npos) << error;
  EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
  return error;
}

json base() { return json::parse(kBase); }

/// The error after `edit` changes the base model.
std::string errorAfter(const std::function<void(json &)> &edit) {
  json model = base();
  edit(model);
  return parseError(model.dump(2));
}

ModelSpec specAfter(const std::function<void(json &)> &edit) {
  json model = base();
  edit(model);
  return parseOk(model.dump(2));
}

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "  in: " << (haystack) << "\n  missing: " << (needle)

/// Every node's producers come before it in topoOrder.
void expectTopological(const ModelSpec &spec) {
  ASSERT_EQ(spec.topoOrder.size(), spec.nodes.size());
  std::vector<int> position(spec.nodes.size(), -1);
  for (size_t i = 0; i < spec.topoOrder.size(); ++i)
    position[spec.topoOrder[i]] = static_cast<int>(i);
  for (const NodeSpec &node : spec.nodes)
    for (const std::string &in : node.inputs) {
      if (in == "input")
        continue;
      const NodeSpec *producer = spec.findNode(in);
      ASSERT_NE(producer, nullptr) << in;
      EXPECT_LT(position[producer->index], position[node.index])
          << in << " must come before " << node.name;
    }
}

//===----------------------------------------------------------------------===//
// The examples
//===----------------------------------------------------------------------===//

TEST(Examples, FashionMlp) {
  ModelSpec spec = loadOk(example("fashion_mlp.json"));
  ASSERT_EQ(spec.nodes.size(), 4u);
  EXPECT_EQ(spec.name, "fashion_mlp");
  EXPECT_FALSE(spec.description.empty());
  EXPECT_EQ(spec.inputShape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(spec.output, "fc2"); // default: the last node
  EXPECT_EQ(spec.nodes[0].inputs, std::vector<std::string>{"input"});
  EXPECT_EQ(spec.nodes[1].inputs, std::vector<std::string>{"flatten"});
  EXPECT_EQ(spec.nodes[1].attrs["out_features"], 256);
  const ParamSpec &bias = spec.nodes[1].params.at("bias");
  EXPECT_TRUE(bias.present);
  EXPECT_EQ(bias.init.kind, "default");
  EXPECT_TRUE(bias.trainable);
  EXPECT_EQ(spec.topoOrder, (std::vector<size_t>{0, 1, 2, 3}));

  const rt::TrainRecipe &train = spec.recipe.train;
  EXPECT_EQ(spec.batchSize(), 64);
  EXPECT_EQ(train.seed, 0u);
  EXPECT_TRUE(train.dropLast);
  EXPECT_EQ(train.precision.name(), "fp32");
  EXPECT_FALSE(train.ema);
  EXPECT_FALSE(train.memoryBudget);
  EXPECT_EQ(train.accumulate, 1);
  EXPECT_EQ(train.optimizer.type, rt::Optimizer::AdamW);
  EXPECT_EQ(train.optimizer.beta1, 0.9);
  EXPECT_EQ(train.optimizer.beta2, 0.999);
  EXPECT_DOUBLE_EQ(train.optimizer.eps, 1e-8);
  EXPECT_TRUE(train.optimizer.groups.empty());
  EXPECT_EQ(train.optimizer.momentum, 0.0);
  EXPECT_EQ(train.schedule.type, rt::ScheduleDesc::Cosine);
  EXPECT_EQ(train.schedule.minFactor, 0.0);

  EXPECT_EQ(spec.recipe.data.format, rt::DataRecipe::Idx);
  EXPECT_FALSE(spec.recipe.data.augment.flip);
  EXPECT_EQ(spec.recipe.data.augment.cutout, 0);
  EXPECT_FALSE(spec.recipe.eval.flipViews || spec.recipe.eval.translateViews);
  EXPECT_EQ(spec.recipe.eval.translate, 2);
  EXPECT_EQ(spec.recipe.eval.batchSize, 64); // defaults to train.batch_size
}

TEST(Examples, FashionCnn) {
  ModelSpec spec = loadOk(example("fashion_cnn.json"));
  expectTopological(spec);
  const NodeSpec *conv = spec.findNode("prep.conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs["kernel"], json({3, 3}));
  EXPECT_EQ(conv->attrs["padding"], json({1, 1}));
  EXPECT_EQ(conv->attrs["stride"], json({1, 1}));
  EXPECT_FALSE(conv->params.at("bias").present);
  const NodeSpec *bn = spec.findNode("layer1.bn");
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->attrs["ghost_batch"], 32);
  EXPECT_DOUBLE_EQ(bn->attrs["momentum"].get<double>(), 0.1);
  EXPECT_EQ(bn->params.at("weight").init.kind, "constant");
  EXPECT_EQ(bn->params.at("weight").init.value, 1.0);
  EXPECT_FALSE(bn->params.at("weight").trainable);
  const NodeSpec *add = spec.findNode("layer1.add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->inputs,
            (std::vector<std::string>{"layer1.act", "layer1.res2.act"}));
  EXPECT_EQ(spec.loss.labelSmoothing, 0.2);
  EXPECT_EQ(spec.recipe.train.optimizer.groups[0].match, std::vector<std::string>{"*.bias"});
  EXPECT_EQ(spec.recipe.train.ema->every, 5);
  EXPECT_EQ(spec.recipe.train.precision.name(), "fp32");
  EXPECT_TRUE(spec.recipe.eval.flipViews);
  EXPECT_FALSE(spec.recipe.eval.translateViews);
}

TEST(Examples, Resnet9) {
  ModelSpec spec = loadOk(example("resnet9.json"));
  expectTopological(spec);
  EXPECT_EQ(spec.loss.reduction, "sum");
  EXPECT_EQ(spec.output, "logits");
  const NodeSpec *pool = spec.findNode("pool");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->attrs["stride"], json({4, 4})); // defaults to the kernel
  EXPECT_EQ(spec.findNode("linear")->params.at("bias").present, false);
  EXPECT_TRUE(spec.recipe.train.optimizer.nesterov);
  EXPECT_EQ(spec.recipe.data.format, rt::DataRecipe::Cifar10);
  EXPECT_EQ(spec.recipe.data.augment.cropPadding, 4);
  EXPECT_EQ(spec.recipe.data.augment.cutout, 0); // not in the final recipe
  EXPECT_EQ(spec.recipe.data.std.size(), 3u);
  // Every ghost batch splits the batch of 512 into 16 strided groups.
  for (const NodeSpec &node : spec.nodes) {
    if (node.op == "batch_norm") {
      EXPECT_EQ(spec.batchSize() / node.attrs["ghost_batch"].get<int64_t>(), 16);
      EXPECT_EQ(node.attrs["ghost_grouping"], "strided");
    }
  }
  const NodeSpec *whiten = spec.findNode("prep.whiten");
  ASSERT_NE(whiten, nullptr);
  EXPECT_EQ(whiten->params.at("weight").init.whiteningImages, 10000);
  EXPECT_TRUE(whiten->params.at("weight").init.whiteningUnbiased);
  EXPECT_TRUE(spec.recipe.train.ema->perEpoch);
  EXPECT_EQ(spec.recipe.train.schedule.countFrom, 1);
}

TEST(Examples, Airbench94) {
  ModelSpec spec = loadOk(example("airbench94.json"));
  expectTopological(spec);
  const NodeSpec *whiten = spec.findNode("whiten");
  ASSERT_NE(whiten, nullptr);
  EXPECT_EQ(whiten->params.at("weight").init.kind, "patch_whitening");
  EXPECT_FALSE(whiten->params.at("weight").trainable);
  EXPECT_EQ(whiten->params.at("bias").init.kind, "zeros");
  EXPECT_EQ(whiten->params.at("bias").trainEpochs, 3);
  const NodeSpec *conv = spec.findNode("block2.conv1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs["padding"], json({1, 1})); // "same" resolved
  EXPECT_EQ(conv->params.at("weight").init.kind, "dirac");
  const NodeSpec *bn = spec.findNode("block3.norm2");
  ASSERT_NE(bn, nullptr);
  EXPECT_DOUBLE_EQ(bn->attrs["momentum"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(bn->attrs["eps"].get<double>(), 1e-12);
  EXPECT_EQ(bn->attrs["ghost_batch"], 0); // null is stored as 0
  const rt::Optimizer &opt = spec.recipe.train.optimizer;
  EXPECT_DOUBLE_EQ(opt.lr, 11.5 / (1024 * (1 + 1 / (1 - 0.85))));
  EXPECT_NEAR(opt.weightDecay, 0.0153 * 1024 / 11.5, 1e-12);
  EXPECT_EQ(opt.lookahead->alphaSchedule, rt::Lookahead::Cubic);
  EXPECT_NEAR(opt.lookahead->alpha, 0.7737809375, 1e-12);
  EXPECT_DOUBLE_EQ(spec.recipe.train.epochs, 9.9);
  EXPECT_EQ(spec.recipe.train.precision.name(), "fp16"); // net.half(), as airbench
  EXPECT_TRUE(spec.recipe.eval.flipViews && spec.recipe.eval.translateViews);
  EXPECT_EQ(spec.recipe.eval.translate, 1);
}

//===----------------------------------------------------------------------===//
// Normalization and defaults
//===----------------------------------------------------------------------===//

TEST(Normalize, InputsMayReferToLaterNodes) {
  ModelSpec spec = specAfter([](json &m) {
    // fc first, reading pool, which comes last.
    json fc = m["graph"][4];
    fc["inputs"] = "pool";
    m["graph"].erase(4);
    m["graph"].insert(m["graph"].begin(), fc);
    m["graph"][1]["inputs"] = "input"; // conv1
    m["output"] = "fc";
  });
  EXPECT_EQ(spec.nodes[0].name, "fc");
  EXPECT_EQ(spec.topoOrder, (std::vector<size_t>{1, 2, 3, 4, 0}));
  expectTopological(spec);
}

TEST(Normalize, PairsAndConvDefaults) {
  ModelSpec spec = specAfter([](json &m) {
    m["graph"][0]["stride"] = json({2, 1});
  });
  const NodeSpec &conv = spec.nodes[0];
  EXPECT_EQ(conv.attrs["kernel"], json({3, 3}));
  EXPECT_EQ(conv.attrs["stride"], json({2, 1}));
  EXPECT_EQ(conv.attrs["dilation"], json({1, 1}));
  EXPECT_EQ(conv.attrs["groups"], 1);
  EXPECT_FALSE(conv.attrs.contains("bias")); // parameters are not attrs
  EXPECT_TRUE(conv.params.at("weight").present);
  EXPECT_TRUE(conv.params.at("bias").present);
  EXPECT_EQ(conv.params.at("weight").init.kind, "default");
}

TEST(Normalize, SamePaddingResolves) {
  ModelSpec spec = specAfter([](json &m) {
    m["graph"][0]["kernel"] = json({3, 5});
    m["graph"][0]["dilation"] = 2;
    m["graph"][0]["padding"] = "same";
  });
  EXPECT_EQ(spec.nodes[0].attrs["padding"], json({2, 4}));
}

TEST(Normalize, NormsAndInits) {
  ModelSpec spec = specAfter([](json &m) {
    m["graph"][1]["bias"] = false;
    m["graph"][1]["ghost_batch"] = nullptr;
    m["graph"][4]["weight"] = {{"init", {{"type", "normal"}, {"std", 0.02}}}};
    m["graph"][4]["bias"] = {{"init", 0.25}, {"trainable", false}};
    m["graph"].insert(m["graph"].begin() + 4,
                      json{{"name", "ln"}, {"op", "layer_norm"}});
  });
  ASSERT_NE(spec.findNode("bn1"), nullptr);
  const NodeSpec &bn = *spec.findNode("bn1");
  EXPECT_FALSE(bn.params.at("bias").present);
  EXPECT_TRUE(bn.params.at("weight").present);
  EXPECT_EQ(bn.attrs["ghost_batch"], 0);
  EXPECT_TRUE(spec.findNode("ln")->attrs["normalized_dims"].is_null());
  const NodeSpec &fc = *spec.findNode("fc");
  EXPECT_EQ(fc.params.at("weight").init.kind, "normal");
  EXPECT_EQ(fc.params.at("weight").init.std, 0.02);
  EXPECT_EQ(fc.params.at("weight").init.mean, 0.0);
  EXPECT_EQ(fc.params.at("bias").init.kind, "constant");
  EXPECT_EQ(fc.params.at("bias").init.value, 0.25);
  EXPECT_FALSE(fc.params.at("bias").trainable);
}

TEST(Normalize, TrainDefaults) {
  ModelSpec spec = specAfter([](json &m) {
    m["train"]["optimizer"] = {{"type", "lamb"}, {"lr", 0.01}};
    m["train"]["memory_budget"] = "8GiB";
    m["train"]["optimizer"]["groups"] = {{{"match", "*.bias"}}};
  });
  const rt::TrainRecipe &train = spec.recipe.train;
  EXPECT_EQ(train.memoryBudget, int64_t(8) << 30);
  EXPECT_DOUBLE_EQ(train.optimizer.eps, 1e-6);
  EXPECT_EQ(train.optimizer.groups[0].match, std::vector<std::string>{"*.bias"});
  EXPECT_EQ(train.optimizer.groups[0].lrScale, 1.0);
  EXPECT_FALSE(train.optimizer.lookahead);
  EXPECT_EQ(train.schedule.type, rt::ScheduleDesc::Constant);
  EXPECT_TRUE(train.schedule.perEpoch);
  EXPECT_EQ(train.schedule.countFrom, 0);
  EXPECT_FALSE(train.deterministic);
  EXPECT_FALSE(train.gradClipNorm);

  EXPECT_EQ(specAfter([](json &m) { m["train"]["memory_budget"] = "2GB"; })
                .recipe.train.memoryBudget,
            2000000000);
  EXPECT_EQ(specAfter([](json &m) { m["train"]["memory_budget"] = 4096; })
                .recipe.train.memoryBudget,
            4096);
}

TEST(Normalize, DataDefaultsFollowTheInput) {
  ModelSpec spec = specAfter([](json &m) {
    m["input"]["shape"] = json({3, 32, 32});
    m["graph"][0].erase("padding");
  });
  EXPECT_EQ(spec.recipe.data.format, rt::DataRecipe::Cifar10);
  EXPECT_EQ(spec.recipe.data.path, "data/cifar-10-batches-bin");
  EXPECT_EQ(spec.recipe.data.mean, std::vector<float>({0, 0, 0}));
  EXPECT_EQ(spec.recipe.data.std, std::vector<float>({1, 1, 1}));
}

TEST(ClosestMatch, Typos) {
  std::vector<std::string> fields = {"out_channels", "kernel", "stride",
                                     "padding"};
  EXPECT_EQ(closestMatch("strid", fields), "stride");
  EXPECT_EQ(closestMatch("kernal", fields), "kernel");
  EXPECT_EQ(closestMatch("Stride", fields), "stride");
  EXPECT_EQ(closestMatch("sdirte", fields), "");
  EXPECT_EQ(closestMatch("xyz", fields), "");
  EXPECT_EQ(closestMatch("channels", fields), "out_channels");
  EXPECT_EQ(closestMatch("nestrov", {"momentum", "nesterov"}), "nesterov");
  EXPECT_EQ(closestMatch("", fields), "");
}

TEST(Load, MissingFile) {
  ModelSpec spec;
  std::string error;
  EXPECT_FALSE(loadModelSpec("/nonexistent/model.json", spec, error));
  EXPECT_CONTAINS(error, "/nonexistent/model.json: cannot read the model");
}

//===----------------------------------------------------------------------===//
// Errors in the text
//===----------------------------------------------------------------------===//

TEST(SyntaxError, LineAndColumn) {
  std::string error = parseError("{\n  \"format\": \"tcc-model/1\",\n"
                                 "  \"name\": \"x\"\n  \"input\": {}\n}\n");
  EXPECT_EQ(error, "model.json:4:3: malformed JSON: expected ',' or '}' after "
                   "object member, got a string");
}

TEST(SyntaxError, TrailingComma) {
  std::string error = parseError("{\n  \"a\": 1,\n}");
  EXPECT_CONTAINS(error, "model.json:3:1: malformed JSON:");
  EXPECT_CONTAINS(error, "trailing comma");
  EXPECT_CONTAINS(parseError("[1, 2,]"), "model.json:1:7:");
}

TEST(SyntaxError, CommentsAndLiterals) {
  EXPECT_CONTAINS(parseError("// note\n{}"), "model.json:1:1: malformed JSON");
  EXPECT_CONTAINS(parseError("// note\n{}"), "no comments");
  EXPECT_CONTAINS(parseError("{\"a\": tru}"), "model.json:1:7:");
  EXPECT_CONTAINS(parseError("{\"a\": 1e999}"), "'1e999' is out of range");
}

TEST(SyntaxError, EndOfFile) {
  EXPECT_CONTAINS(parseError("{\n  \"a\": [1, 2,\n"),
                  "model.json:2:14: malformed JSON: unexpected end of the file");
  EXPECT_CONTAINS(parseError(""), "model.json:1:1: malformed JSON: the file is "
                                  "empty");
}

TEST(SyntaxError, ColumnsCountCharacters) {
  // "é" is two bytes but one column.
  EXPECT_CONTAINS(parseError("{\"d\": \"\xc3\xa9\" \"x\": 1}"), "model.json:1:11:");
}

TEST(SyntaxError, DuplicateKey) {
  std::string text = base().dump(2);
  size_t at = text.find("\"kernel\": 3");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"kernel\": 5, ");
  std::string error = parseError(text);
  EXPECT_CONTAINS(error, "duplicate key 'kernel'");
  // Line and column of the second "kernel".
  size_t second = text.find("\"kernel\"", at + 1);
  size_t lineStart = text.rfind('\n', second) + 1;
  size_t line = 1 + std::count(text.begin(), text.begin() + second, '\n');
  EXPECT_CONTAINS(error, "model.json:" + std::to_string(line) + ":" +
                             std::to_string(second - lineStart + 1) + ": ");
}

TEST(SyntaxError, TopLevelMustBeAnObject) {
  EXPECT_CONTAINS(parseError("[1]"), "the top level must be a JSON object");
}

//===----------------------------------------------------------------------===//
// Errors in fields
//===----------------------------------------------------------------------===//

TEST(FieldError, UnknownOpField) {
  EXPECT_EQ(errorAfter([](json &m) { m["graph"][0]["strid"] = 2; }),
            "model.json: node 'conv1' (graph[0]): unknown field 'strid' for op "
            "conv2d; did you mean 'stride'?");
  std::string error = errorAfter([](json &m) { m["graph"][2]["zzz"] = 1; });
  EXPECT_CONTAINS(error, "node 'act1' (graph[2]): unknown field 'zzz' for op "
                         "relu");
  EXPECT_EQ(error.find("did you mean"), std::string::npos);
}

TEST(FieldError, UnknownSectionField) {
  EXPECT_EQ(errorAfter([](json &m) {
              m["train"]["optimizer"]["nestrov"] = true;
            }),
            "model.json: train.optimizer: unknown field 'nestrov'; did you "
            "mean 'nesterov'?");
  EXPECT_EQ(errorAfter([](json &m) { m["traim"] = json::object(); }),
            "model.json: unknown top-level field 'traim'; did you mean "
            "'train'?");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][4]["weight"] = {{"inti", "zeros"}};
                  }),
                  "node 'fc' (graph[4]): unknown field 'inti' in 'weight'; "
                  "did you mean 'init'?");
}

TEST(FieldError, UnknownOp) {
  EXPECT_EQ(errorAfter([](json &m) { m["graph"][2]["op"] = "conv2"; }),
            "model.json: node 'act1' (graph[2]): unknown op 'conv2'; did you "
            "mean 'conv2d'?");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][2]["op"] = "zzzz"; }),
                  "unknown op 'zzzz'; the ops are conv2d linear");
}

TEST(FieldError, WrongType) {
  EXPECT_EQ(errorAfter([](json &m) { m["graph"][0]["stride"] = "two"; }),
            "model.json: node 'conv1' (graph[0]): field 'stride' must be a "
            "positive integer or a pair of them, got \"two\"");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["kernel"] = 2.5; }),
                  "field 'kernel' must be a positive integer or a pair of "
                  "them, got 2.5");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["drop_last"] = 1; }),
                  "train.drop_last must be true or false, got 1");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["loss"]["op"] = "nll"; }),
                  "loss.op must be one of \"cross_entropy\", \"mse_loss\", got "
                  "\"nll\"");
}

TEST(FieldError, BadValues) {
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["stride"] = -1; }),
                  "field 'stride' must be a positive integer or a pair of "
                  "them, got -1");
  EXPECT_CONTAINS(
      errorAfter([](json &m) { m["graph"][0]["out_channels"] = 0; }),
      "node 'conv1' (graph[0]): field 'out_channels' must be a positive "
      "integer, got 0");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][1]["momentum"] = 1.5; }),
                  "node 'bn1' (graph[1]): field 'momentum' must be in [0, 1], "
                  "got 1.5");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][1]["eps"] = 0; }),
                  "field 'eps' must be > 0, got 0");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"].insert(m["graph"].begin() + 3,
                                      json{{"name", "drop"}, {"op", "dropout"},
                                       {"p", 1}});
                  }),
                  "node 'drop' (graph[3]): field 'p' must be in [0, 1), got 1");
  EXPECT_EQ(errorAfter([](json &m) { m["train"]["optimizer"]["lr"] = -0.1; }),
            "model.json: train.optimizer.lr must be > 0, got -0.1");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"]["momentum"] = 1;
                  }),
                  "train.optimizer.momentum must be in [0, 1), got 1");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][2]["op"] = "celu";
                                           m["graph"][2]["alpha"] = 0; }),
                  "field 'alpha' must not be 0");
}

TEST(FieldError, MissingField) {
  EXPECT_EQ(errorAfter([](json &m) { m["graph"][4].erase("out_features"); }),
            "model.json: node 'fc' (graph[4]): missing field 'out_features'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m.erase("loss"); }),
                  "missing top-level field 'loss'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["optimizer"].erase("lr"); }),
                  "train.optimizer: missing field 'lr'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][3].erase("name"); }),
                  "graph[3]: missing field 'name'");
}

TEST(FieldError, FormatAndNames) {
  EXPECT_CONTAINS(errorAfter([](json &m) { m["format"] = "tcc-model/2"; }),
                  "format \"tcc-model/2\" is not supported");
  EXPECT_CONTAINS(errorAfter([](json &m) { m.erase("format"); }),
                  "missing top-level field 'format'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["name"] = "my model"; }),
                  "name must hold only letters");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["name"] = ".conv"; }),
                  "graph[0]: field 'name' must start with a letter, a digit");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["name"] = "input"; }),
                  "graph[0]: field 'name' must not be \"input\"");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["input"]["shape"] = {3, 32}; }),
                  "input.shape must be [C, H, W] or [F]");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["input"]["classes"] = 1; }),
                  "input.classes must be an integer >= 2, got 1");
}

//===----------------------------------------------------------------------===//
// Errors in the graph
//===----------------------------------------------------------------------===//

TEST(GraphError, UnknownInput) {
  EXPECT_EQ(errorAfter([](json &m) {
              m["graph"][2]["name"] = "act3";
              m["graph"][3]["inputs"] = "act9";
            }),
            "model.json: node 'pool' (graph[3]): input 'act9' does not exist; "
            "did you mean 'act3'?");
}

TEST(GraphError, DuplicateName) {
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][4]["name"] = "conv1"; }),
                  "model.json: node 'conv1' (graph[4]): name already used by "
                  "graph[0]");
}

TEST(GraphError, Cycle) {
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][1]["inputs"] = "act1"; }),
                  "model.json: graph: cycle through nodes 'bn1' -> 'act1' -> "
                  "'bn1'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][1]["inputs"] = "bn1"; }),
                  "graph: cycle through nodes 'bn1' -> 'bn1'");
}

TEST(GraphError, UnusedNode) {
  EXPECT_EQ(errorAfter([](json &m) {
              m["graph"].insert(m["graph"].begin() + 3,
                                json{{"name", "x"}, {"op", "sigmoid"}});
              m["graph"][4]["inputs"] = "act1";
              m["output"] = "fc";
            }),
            "model.json: node 'x' (graph[3]) is not used by the output 'fc'; "
            "remove it or feed it into the graph");
}

TEST(GraphError, Arity) {
  std::string error = errorAfter([](json &m) {
    m["graph"].insert(m["graph"].begin() + 3, json{{"name", "res"}, {"op", "add"}});
  });
  EXPECT_CONTAINS(error, "node 'res' (graph[3]): op add needs exactly 2 inputs, "
                         "but 'inputs' is not given");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][2]["inputs"] = {"bn1", "conv1"};
                  }),
                  "node 'act1' (graph[2]): op relu takes exactly 1 input, got 2");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][2] = {{"name", "cat"}, {"op", "concat"},
                                     {"inputs", {"bn1"}}};
                  }),
                  "op concat takes at least 2 inputs, got 1");
}

TEST(GraphError, Output) {
  EXPECT_CONTAINS(errorAfter([](json &m) { m["output"] = "fcc"; }),
                  "output 'fcc' is not a node in graph; did you mean 'fc'?");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"] = json::array(); }),
                  "graph must be a non-empty array");
}

//===----------------------------------------------------------------------===//
// Errors specific to ops and parameters
//===----------------------------------------------------------------------===//

TEST(OpError, ConvPadding) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["padding"] = "same";
                    m["graph"][0]["stride"] = 2;
                  }),
                  "field 'padding' \"same\" needs stride 1");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["padding"] = "same";
                    m["graph"][0]["kernel"] = 2;
                  }),
                  "\"same\" needs an odd kernel");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["padding"] = "valid"; }),
                  "a non-negative integer, a pair of them, or \"same\"");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["groups"] = 3; }),
                  "field 'groups' must divide out_channels 8, got 3");
}

TEST(OpError, Pooling) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][3] = {{"name", "pool"}, {"op", "max_pool2d"},
                                     {"kernel", 2}, {"padding", 2}};
                    m["graph"].insert(m["graph"].begin() + 4,
                                      json{{"name", "f"}, {"op", "flatten"}});
                  }),
                  "must be at most half the kernel");
}

TEST(OpError, ShapesAndAxes) {
  auto withOp = [](json node) {
    return errorAfter([&](json &m) {
      m["graph"].insert(m["graph"].begin() + 4, node);
    });
  };
  EXPECT_CONTAINS(withOp({{"name", "r"}, {"op", "reshape"}, {"shape", {-1, -1}}}),
                  "field 'shape' may hold -1 only once");
  EXPECT_CONTAINS(withOp({{"name", "t"}, {"op", "transpose"}, {"perm", {1, 0}}}),
                  "must keep the batch first");
  EXPECT_CONTAINS(withOp({{"name", "t"}, {"op", "transpose"}, {"perm", {0, 0}}}),
                  "must be a permutation");
  EXPECT_CONTAINS(withOp({{"name", "s"}, {"op", "softmax"}, {"axis", 0}}),
                  "field 'axis' must not be 0");
}

TEST(OpError, RecipeItemRules) {
  // Strided ghost batches need ghost batches.
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][1]["ghost_grouping"] = "strided"; }),
                  "node 'bn1' (graph[1]): field 'ghost_grouping' applies only with a "
                  "ghost_batch");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][1]["ghost_batch"] = 16;
                    m["graph"][1]["ghost_grouping"] = "every_other";
                  }),
                  "ghost_grouping");
  // train_epochs: a trainable parameter, a whole number of epochs, no clipping.
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][4]["bias"] = {{"trainable", false}, {"train_epochs", 2}};
                  }),
                  "field 'bias.train_epochs' needs \"trainable\": true");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][4]["bias"] = {{"train_epochs", 0}}; }),
                  "train_epochs");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][4]["bias"] = {{"train_epochs", 2}};
                    m["train"]["grad_clip_norm"] = 1.0;
                  }),
                  "node 'fc' (graph[4]): bias.train_epochs cannot be combined with "
                  "train.grad_clip_norm");
  // Patch whitening's settings.
  auto whiten = [](json init) {
    return [init](json &m) {
      m["graph"][0] = {{"name", "conv1"}, {"op", "conv2d"}, {"out_channels", 9}, {"kernel", 3},
                       {"padding", 1}, {"bias", false},
                       {"weight", {{"init", init}, {"trainable", false}}}};
    };
  };
  EXPECT_EQ(specAfter(whiten({{"type", "patch_whitening"}, {"eps", 0.01}, {"images", 100},
                              {"unbiased", true}}))
                .nodes[0]
                .params.at("weight")
                .init.whiteningImages,
            100);
  EXPECT_CONTAINS(errorAfter(whiten({{"type", "patch_whitening"}, {"images", 1}})), "images");
  EXPECT_CONTAINS(errorAfter(whiten({{"type", "patch_whitening"}, {"eps", 0}})), "eps");
  EXPECT_CONTAINS(errorAfter(whiten({{"type", "patch_whitening"}, {"value", 1}})), "value");
  // Alternating flips and reflect padding (airbench, myrtle.ai).
  ModelSpec alternating = specAfter([](json &m) {
    m["data"] = {{"augment", {{"flip", "alternating"}, {"padding_mode", "reflect"},
                              {"random_crop_padding", 27}}}};
  });
  EXPECT_TRUE(alternating.recipe.data.augment.flip && alternating.recipe.data.augment.alternateFlip);
  EXPECT_TRUE(alternating.recipe.data.augment.reflect);
  EXPECT_FALSE(specAfter([](json &) {}).recipe.data.augment.reflect);
  // Balanced augmentation draws (myrtle.ai).
  EXPECT_EQ(specAfter([](json &m) {
              m["data"] = {{"augment", {{"flip", true}, {"draws", "balanced"}}}};
            }).recipe.data.augment.balanced,
            true);
  EXPECT_FALSE(specAfter([](json &) {}).recipe.data.augment.balanced);
  EXPECT_CONTAINS(errorAfter([](json &m) { m["data"] = {{"augment", {{"draws", "fair"}}}}; }),
                  "data.augment.draws");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["data"] = {{"augment", {{"flip", "sometimes"}}}}; }),
                  "data.augment.flip must be true, false or \"alternating\", got \"sometimes\"");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["data"] = {{"augment", {{"translate", 28}, {"padding_mode", "reflect"}}}};
                  }),
                  "data.augment.translate must be smaller than the image's smaller side 28 with "
                  "padding_mode \"reflect\", got 28");
  // count_from is 0 or 1.
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["schedule"] = {{"type", "constant"}, {"count_from", 2}};
                  }),
                  "count_from");
}

TEST(OpError, InitRules) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["weight"] = {{"init", "patch_whitening"}};
                  }),
                  "init 'patch_whitening' needs \"trainable\": false");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["weight"] = {{"init", "patch_whitening"},
                                               {"trainable", false}};
                  }),
                  "needs out_channels = in_channels * kh * kw = 9 (or twice that for the negated "
                 "filters too), got 8");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][4]["weight"] = {{"init", "dirac"}};
                  }),
                  "node 'fc' (graph[4]): field 'weight.init' is 'dirac', which "
                  "applies only to a conv2d weight");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][1]["weight"] = {{"init", "kaiming_normal"}};
                  }),
                  "needs a conv2d or linear weight");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["weight"] = {{"init", "kaiming"}};
                  }),
                  "unknown init 'kaiming'; did you mean 'kaiming_uniform'?");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["weight"] = {
                        {"init", {{"type", "uniform"}, {"std", 1}}}};
                  }),
                  "field 'weight.init.std' does not apply to init type "
                  "'uniform'");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][0]["weight"] = {
                        {"init", {{"type", "uniform"}, {"low", 1}, {"high", 0}}}};
                  }),
                  "must be greater than low 1");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["weight"] = true; }),
                  "field 'weight' must be a parameter object");
}

//===----------------------------------------------------------------------===//
// Errors in the recipe sections
//===----------------------------------------------------------------------===//

TEST(RecipeError, Optimizer) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"]["betas"] = {0.9, 0.99};
                  }),
                  "train.optimizer.betas does not apply to sgd");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"]["nesterov"] = true;
                  }),
                  "train.optimizer.nesterov needs momentum > 0");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"] = {{"type", "adamw"}, {"lr", 1e-3},
                                               {"betas", {0.9, 1.0}}};
                  }),
                  "train.optimizer.betas must be a pair of numbers in [0, 1)");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"]["groups"] = {{{"lr_scale", 2}}};
                  }),
                  "train.optimizer.groups[0]: missing field 'match'");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"]["lookahead"] = {{"alpha", 1.5}};
                  }),
                  "train.optimizer.lookahead.alpha must be in (0, 1), got 1.5");
}

TEST(RecipeError, Schedule) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["schedule"] = {{"type", "cosine"}, {"gamma", 0.5}};
                  }),
                  "train.schedule.gamma does not apply to schedule type "
                  "'cosine' (only to 'step')");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["schedule"] = {{"type", "piecewise_linear"},
                                              {"points", {{1, 0}, {2, 1}}}};
                  }),
                  "train.schedule.points[0] must start at t = 0, got t = 1");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["schedule"] = {
                        {"type", "piecewise_linear"},
                        {"points", {{0, 0}, {2, 1}, {2, 0}}}};
                  }),
                  "train.schedule.points[2]: t must increase");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["schedule"] = {{"type", "step"}};
                  }),
                  "train.schedule: missing field 'step_size'");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["schedule"] = {{"type", "one_cyle"}};
                  }),
                  "did you mean 'one_cycle'?");
}

TEST(RecipeError, TrainFields) {
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["memory_budget"] = "8 gigs"; }),
                  "train.memory_budget must be null, a positive number of "
                  "bytes, or a size such as \"8GiB\"");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["ema"] = {{"every", 2}}; }),
                  "train.ema: missing field 'decay'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["ema"] = {{"decay", 1}}; }),
                  "train.ema.decay must be in (0, 1), got 1");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["accumulate"] = 0; }),
                  "train.accumulate must be a positive integer, got 0");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["epochs"] = 0; }),
                  "train.epochs must be > 0, got 0");
}

TEST(Normalize, LossScaleDefaultsUnderFp16Only) {
  ModelSpec fp16 = specAfter([](json &m) { m["train"]["precision"] = "fp16-mixed"; });
  // torch.amp.GradScaler's defaults.
  const rt::LossScale &scale = *fp16.recipe.train.lossScale;
  EXPECT_EQ(scale.initScale, 65536.0);
  EXPECT_EQ(scale.growthFactor, 2.0);
  EXPECT_EQ(scale.backoffFactor, 0.5);
  EXPECT_EQ(scale.growthInterval, 2000);
  ModelSpec given = specAfter([](json &m) {
    m["train"]["precision"] = "fp16-mixed";
    m["train"]["loss_scale"] = {{"init_scale", 1024}, {"growth_interval", 10}};
  });
  EXPECT_EQ(given.recipe.train.lossScale->initScale, 1024.0);
  EXPECT_EQ(given.recipe.train.lossScale->growthInterval, 10);
  EXPECT_EQ(given.recipe.train.lossScale->backoffFactor, 0.5);
  EXPECT_FALSE(specAfter([](json &m) { m["train"]["precision"] = "bf16-mixed"; })
                   .recipe.train.lossScale);
}

TEST(RecipeError, LossScale) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["precision"] = "bf16-mixed";
                    m["train"]["loss_scale"] = {{"init_scale", 1024}};
                  }),
                  "train.loss_scale applies only to train.precision \"fp16-mixed\"");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["loss_scale"] = json::object(); }),
                  "not \"fp32\"; remove it");
  // Pure fp16 trains without loss scaling, as model.half() does.
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["precision"] = "fp16";
                    m["train"]["loss_scale"] = {{"init_scale", 1024}};
                  }),
                  "and pure fp16 train without loss scaling), not \"fp16\"; remove it");
  EXPECT_FALSE(specAfter([](json &m) { m["train"]["precision"] = "fp16"; })
                   .recipe.train.lossScale);
  auto fp16With = [](const char *key, json value) {
    return errorAfter([&](json &m) {
      m["train"]["precision"] = "fp16-mixed";
      m["train"]["loss_scale"] = {{key, value}};
    });
  };
  EXPECT_CONTAINS(fp16With("backoff_factor", 1), "train.loss_scale.backoff_factor must be in (0, 1)");
  EXPECT_CONTAINS(fp16With("growth_factor", 1), "train.loss_scale.growth_factor must be in (1, ");
  EXPECT_CONTAINS(fp16With("init_scale", 1e39), "train.loss_scale.init_scale must be in (0, ");
  EXPECT_CONTAINS(fp16With("growth_interval", 0), "train.loss_scale.growth_interval must be");
  EXPECT_CONTAINS(fp16With("dynamic", true), "loss_scale");
}

TEST(RecipeError, MomentumOf) {
  auto sgdWith = [](json fields) {
    return errorAfter([&](json &m) {
      m["train"]["optimizer"] = {{"type", "sgd"}, {"lr", 0.1}};
      m["train"]["optimizer"].update(fields);
    });
  };
  EXPECT_CONTAINS(sgdWith({{"momentum_of", "update"}}),
                  "train.optimizer.momentum_of \"update\" needs momentum > 0");
  EXPECT_CONTAINS(sgdWith({{"momentum_of", "update"}, {"momentum", 0.9}, {"dampening", 0.1}}),
                  "train.optimizer.momentum_of \"update\" has no dampening");
  EXPECT_CONTAINS(sgdWith({{"momentum_of", "steps"}}), "train.optimizer.momentum_of");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["train"]["optimizer"] = {{"type", "adamw"}, {"lr", 0.1},
                                               {"momentum_of", "update"}};
                  }),
                  "momentum_of");
  ModelSpec spec = specAfter([](json &m) {
    m["train"]["optimizer"] = {{"type", "sgd"}, {"lr", 0.1}, {"momentum", 0.9}};
  });
  EXPECT_EQ(spec.recipe.train.optimizer.momentumOf, rt::Optimizer::Gradient);
}

TEST(RecipeError, GhostBatch) {
  EXPECT_EQ(errorAfter([](json &m) { m["graph"][1]["ghost_batch"] = 48; }),
            "model.json: node 'bn1' (graph[1]): ghost_batch 48 does not divide "
            "train.batch_size 64");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["graph"][1]["ghost_batch"] = 32;
                    m["train"]["drop_last"] = false;
                  }),
                  "ghost_batch needs train.drop_last true");
}

TEST(RecipeError, Loss) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["loss"] = {{"op", "mse_loss"}, {"label_smoothing", 0.1}};
                  }),
                  "loss.label_smoothing applies only to cross_entropy");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["loss"]["label_smoothing"] = 1; }),
                  "loss.label_smoothing must be in [0, 1), got 1");
}

TEST(RecipeError, Data) {
  EXPECT_EQ(errorAfter([](json &m) {
              m["data"] = {{"normalize", {{"mean", {0.5, 0.5, 0.5}}}}};
            }),
            "model.json: data.normalize.mean has 3 values but the input has 1 "
            "channel (input.shape [1, 28, 28])");
  EXPECT_EQ(errorAfter([](json &m) { m["data"] = {{"format", "cifar10"}}; }),
            "model.json: data.format 'cifar10' needs input shape [3, 32, 32], "
            "got [1, 28, 28]");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["data"] = {{"normalize", {{"std", {0}}}}};
                  }),
                  "data.normalize.std[0] must be > 0, got 0");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["input"]["shape"] = {3, 64, 64};
                  }),
                  "missing top-level field 'data': input.shape [3, 64, 64] "
                  "matches no default data set");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["input"]["shape"] = {3, 32, 32};
                    m["input"]["classes"] = 100;
                  }),
                  "'cifar10' has 10 classes, but input.classes is 100");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["input"]["shape"] = {784};
                    m["graph"] = {{{"name", "fc"}, {"op", "linear"},
                                   {"out_features", 10}}};
                    m["data"] = {{"format", "npy"}, {"path", "d"},
                                 {"augment", {{"flip", true}}}};
                  }),
                  "data.augment.flip needs an image input [C, H, W], but "
                  "input.shape is [784]");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["data"] = {{"format", "npy"}}; }),
                  "data: missing field 'path'");
}

TEST(RecipeError, Eval) {
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["eval"] = {{"tta", {"flip", "flip"}}};
                  }),
                  "eval.tta lists \"flip\" twice");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["eval"] = {{"tta", {"flipp"}}}; }),
                  "did you mean 'flip'?");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    m["eval"] = {{"tta", {"translate"}}, {"translate", 0}};
                  }),
                  "eval.translate must be > 0 when eval.tta has \"translate\"");
}

//===----------------------------------------------------------------------===//
// Robustness: no input crashes the parser
//===----------------------------------------------------------------------===//

TEST(Robustness, DeepNesting) {
  std::string deep(100000, '[');
  EXPECT_CONTAINS(parseError(deep), "nested deeper than 64 levels");
  EXPECT_CONTAINS(errorAfter([](json &m) {
                    json v = 1;
                    for (int i = 0; i < 50; ++i)
                      v = json::array({v});
                    m["graph"][0]["stride"] = v;
                  }),
                  "got [[[...]]]");
}

TEST(Robustness, OddText) {
  for (std::string text : {std::string("\xff\xfe{}"), std::string("{\"a\":\"\xff\"}"),
                           std::string("\0", 1), std::string("{\"\": null}"),
                           std::string("nul"), std::string("{\"format\": 1e308}"),
                           std::string("{\"format\": \"tcc-model/1\", \"name\": "
                                       "18446744073709551616}")}) {
    ModelSpec spec;
    std::string error;
    EXPECT_FALSE(parseModelSpec(text, kPath, spec, error));
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

/// Replaces every field of every node and section of each example with
/// values of every JSON type; each result must parse or fail cleanly.
TEST(Robustness, EveryFieldEveryType) {
  const std::vector<json> values = {
      nullptr, true, 0, -1, 2, 1e300, -0.5, "x", "same", json::array(),
      json::array({1, 2}), json::array({"a"}), json::object(),
      json::object({{"init", "zeros"}})};
  for (const char *name : {"fashion_cnn.json", "airbench94.json"}) {
    std::ifstream in(example(name));
    std::stringstream text;
    text << in.rdbuf();
    json model = json::parse(text.str());
    size_t tried = 0;
    auto tryEach = [&](json &object) {
      std::vector<std::string> keys;
      for (auto &item : object.items())
        keys.push_back(item.key());
      for (const std::string &key : keys) {
        json saved = object[key];
        for (const json &v : values) {
          object[key] = v;
          ModelSpec spec;
          std::string error;
          if (!parseModelSpec(model.dump(), kPath, spec, error)) {
            EXPECT_EQ(error.find('\n'), std::string::npos) << error;
            EXPECT_EQ(error.rfind("model.json: ", 0), 0u) << error;
          }
          ++tried;
        }
        object[key] = saved;
      }
    };
    for (json &node : model["graph"])
      tryEach(node);
    tryEach(model["train"]);
    tryEach(model["train"]["optimizer"]);
    tryEach(model["data"]);
    tryEach(model);
    EXPECT_GT(tried, 100u);
  }
}

} // namespace
