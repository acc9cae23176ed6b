//===- SizeLimitsTest.cpp - Size fields, names and files at their limits ---===//
//
// docs/model-format.md, "Limits": every size field is accepted up to its
// limit and refused one past it with a message that names the field; the
// model name must be a plain file name; model.json is read only from a
// regular file of bounded size.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/ModelSpec.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

using namespace tcc::frontend;
using nlohmann::json;

namespace {

json base() {
  return json::parse(R"({
    "format": "tcc-model/1", "name": "tiny",
    "input": {"shape": [1, 28, 28], "classes": 10},
    "graph": [
      {"name": "conv1", "op": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1},
      {"name": "pool", "op": "global_avg_pool"},
      {"name": "fc", "op": "linear", "out_features": 10}
    ],
    "loss": {"op": "cross_entropy"},
    "train": {"batch_size": 64, "epochs": 1, "optimizer": {"type": "sgd", "lr": 0.1}}
  })");
}

/// "" if the edited base model parses, else its one-line error.
std::string errorAfter(const std::function<void(json &)> &edit) {
  json model = base();
  edit(model);
  ModelSpec spec;
  std::string error;
  if (parseModelSpec(model.dump(), "model.json", spec, error))
    return "";
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.rfind("model.json: ", 0), 0u) << error;
  EXPECT_EQ(error.find("internal error"), std::string::npos) << error;
  return error;
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "  text: " << (text) << "\n  part: " << (part)

const std::string kNote = limits::kLimitNote;

TEST(SizeLimits, BatchAndAccumulate) {
  const int64_t maxBatch = limits::kMaxBatch;
  EXPECT_EQ(errorAfter([&](json &m) { m["train"]["batch_size"] = maxBatch; }), "");
  EXPECT_EQ(errorAfter([&](json &m) { m["train"]["batch_size"] = maxBatch + 1; }),
            "model.json: train.batch_size must be at most 1048576" + kNote +
                ", got 1048577");
  EXPECT_EQ(errorAfter([&](json &m) {
              m["train"]["batch_size"] = 1024;
              m["train"]["accumulate"] = limits::kMaxAccumulate;
            }),
            "");
  // 2^62 and 2^57 once overflowed batch * accumulate and aborted in the passes.
  for (int64_t accumulate : {int64_t(1) << 62, int64_t(1) << 57, int64_t(1025)})
    EXPECT_CONTAINS(errorAfter([&](json &m) { m["train"]["accumulate"] = accumulate; }),
                    "train.accumulate must be at most 1024" + kNote + ", got " +
                        std::to_string(accumulate));
  EXPECT_CONTAINS(errorAfter([&](json &m) {
                    m["train"]["batch_size"] = 2048;
                    m["train"]["accumulate"] = 1024;
                  }),
                  "train.accumulate 1024 times train.batch_size 2048 is an "
                  "effective batch of 2097152 samples, more than 1048576");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["eval"] = {{"batch_size", int64_t(1) << 62}}; }),
                  "eval.batch_size must be at most 1048576");
  // Beyond int64 it is still "too large", not "not an integer".
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["batch_size"] = 1e30; }),
                  "train.batch_size must be at most 1048576");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["batch_size"] = 0; }),
                  "train.batch_size must be a positive integer, got 0");
}

TEST(SizeLimits, InputBatchFitsOneTensor) {
  auto big = [](json &m) {
    m["input"]["shape"] = {3, 256, 256};
    m["data"] = {{"format", "npy"}, {"path", "d"}};
  };
  // 10922 * 196608 < 2^31 - 1 < 10923 * 196608.
  EXPECT_EQ(errorAfter([&](json &m) { big(m); m["train"]["batch_size"] = 10922; }), "");
  EXPECT_EQ(errorAfter([&](json &m) { big(m); m["train"]["batch_size"] = 10923; }),
            "model.json: train.batch_size 10923 samples of input.shape [3, 256, "
            "256] hold 2147549184 values, more than the 2147483647 of one "
            "tensor" + kNote + "; lower train.batch_size");
  EXPECT_CONTAINS(errorAfter([&](json &m) {
                    big(m);
                    m["train"]["batch_size"] = 8192;
                    m["train"]["accumulate"] = 2;
                  }),
                  "train.batch_size 8192 * train.accumulate 2 = 16384 samples");
  EXPECT_CONTAINS(errorAfter([&](json &m) { big(m); m["eval"] = {{"batch_size", 20000}}; }),
                  "eval.batch_size 20000 samples of input.shape");
  // One normalize value per channel is allocated from the shape.
  EXPECT_EQ(errorAfter([](json &m) {
              m["input"]["shape"] = {int64_t(1) << 30, 1, 1};
              m["data"] = {{"format", "npy"}, {"path", "d"}};
            }),
            "model.json: input.shape has 1073741824 channels, more than "
            "65536" + kNote);
  EXPECT_CONTAINS(errorAfter([](json &m) { m["input"]["shape"] = {1, 65536, 65536}; }),
                  "input.shape must be [C, H, W] or [F] with positive integers "
                  "(per sample, without the batch dim) and at most 2147483647");
}

TEST(SizeLimits, EpochsAndClasses) {
  EXPECT_EQ(errorAfter([](json &m) { m["train"]["epochs"] = 1e6; }), "");
  EXPECT_EQ(errorAfter([](json &m) { m["train"]["epochs"] = 1e308; }),
            "model.json: train.epochs must be at most 1000000" + kNote +
                ", got 1e+308");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["train"]["epochs"] = 1000000.5; }),
                  "train.epochs must be at most 1000000");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["input"]["classes"] = int64_t(1) << 31; }),
                  "input.classes must be at most 16777216");
}

TEST(SizeLimits, NodeFields) {
  const int64_t window = limits::kMaxWindow;
  EXPECT_EQ(errorAfter([&](json &m) { m["graph"][0]["stride"] = window; }), "");
  for (const char *key : {"kernel", "stride", "padding", "dilation"}) {
    std::string error = errorAfter([&](json &m) { m["graph"][0][key] = window + 1; });
    EXPECT_EQ(error, "model.json: node 'conv1' (graph[0]): field '" + std::string(key) +
                         "' must be at most 16777216" + kNote + ", got 16777217");
  }
  // 3e9 once overflowed kernel[0] * kernel[1] in the importer; 2^63 - 1
  // and a pair are refused the same way.
  for (json kernel : {json(3e9), json(INT64_MAX), json({3, int64_t(1) << 40})})
    EXPECT_CONTAINS(errorAfter([&](json &m) { m["graph"][0]["kernel"] = kernel; }),
                    "field 'kernel' must be at most 16777216");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][2]["out_features"] = int64_t(1) << 31; }),
                  "node 'fc' (graph[2]): field 'out_features' must be at most 16777216");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["graph"][0]["out_channels"] = 1e20; }),
                  "field 'out_channels' must be at most 16777216");
}

TEST(SizeLimits, PatchWhiteningProductDoesNotOverflow) {
  // 2 * C * kh * kw with C = 2^16 and kh = kw = 2^24 exceeds int64.
  std::string error = errorAfter([](json &m) {
    m["input"]["shape"] = {limits::kMaxInputChannels, 1, 1};
    m["data"] = {{"format", "npy"}, {"path", "d"}};
    m["graph"][0] = {{"name", "conv1"}, {"op", "conv2d"}, {"out_channels", 8},
                     {"kernel", limits::kMaxWindow}, {"bias", false},
                     {"weight", {{"init", "patch_whitening"}, {"trainable", false}}},
                     {"inputs", "input"}};
  });
  EXPECT_CONTAINS(error, "init 'patch_whitening' needs out_channels = "
                         "in_channels * kh * kw = 65536 * 16777216 * "
                         "16777216, got 8");
}

TEST(SizeLimits, Augmentation) {
  for (const char *key : {"random_crop_padding", "translate", "cutout"}) {
    EXPECT_EQ(errorAfter([&](json &m) { m["data"] = {{"augment", {{key, 28}}}}; }), "");
    EXPECT_EQ(errorAfter([&](json &m) { m["data"] = {{"augment", {{key, int64_t(1) << 62}}}}; }),
              "model.json: data.augment." + std::string(key) +
                  " must be at most the image's smaller side 28 (input.shape "
                  "[1, 28, 28]), got 4611686018427387904");
  }
  EXPECT_EQ(errorAfter([](json &m) { m["eval"] = {{"tta", {"translate"}}, {"translate", 27}}; }), "");
  EXPECT_EQ(errorAfter([](json &m) { m["eval"] = {{"tta", {"translate"}}, {"translate", 28}}; }),
            "model.json: eval.translate must be smaller than the image's "
            "smaller side 28 (input.shape [1, 28, 28]), got 28");
}

TEST(ModelName, PlainFileNamesOnly) {
  for (const char *ok : {"a", "a.b-c_1", "..x", "x-"})
    EXPECT_EQ(errorAfter([&](json &m) { m["name"] = ok; }), "") << ok;
  EXPECT_EQ(errorAfter([](json &m) { m["name"] = std::string(100, 'n'); }), "");
  EXPECT_EQ(errorAfter([](json &m) { m["name"] = std::string(101, 'n'); }),
            "model.json: name must be at most 100 characters (it names the "
            "trainer file ./NAME), got 101 characters");
  for (const char *dots : {".", ".."})
    EXPECT_CONTAINS(errorAfter([&](json &m) { m["name"] = dots; }),
                    "name must not be '.' or '..'");
  EXPECT_CONTAINS(errorAfter([](json &m) { m["name"] = "-o"; }),
                  "name must not start with '-'");
  for (std::string bad : {std::string("a/b"), std::string("a\0b", 3),
                          std::string("a\x1b[2J"), std::string(""), std::string("a b")})
    EXPECT_CONTAINS(errorAfter([&](json &m) { m["name"] = bad; }),
                    "name must hold only letters, digits, '_', '.' and '-'");
}

class ModelFile : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("tcc-size-limits-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string load(const std::string &path) {
    ModelSpec spec;
    std::string error;
    EXPECT_FALSE(loadModelSpec(path, spec, error)) << path;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    return error;
  }
  std::filesystem::path dir;
};

TEST_F(ModelFile, DevicesFifosAndDirectories) {
  const std::string notRegular =
      ": cannot read the model: it is not a regular file (a device, FIFO or "
      "socket); give the path of a model.json file";
  EXPECT_EQ(load("/dev/zero"), "/dev/zero" + notRegular);
  EXPECT_EQ(load("/dev/urandom"), "/dev/urandom" + notRegular);
  std::string fifo = (dir / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(load(fifo), fifo + notRegular); // returns at once: no writer needed
  EXPECT_EQ(load(dir.string()), dir.string() + ": cannot read the model: it is a directory");
}

TEST_F(ModelFile, SizeLimit) {
  std::string big = (dir / "big.json").string();
  { std::ofstream create(big); }
  std::filesystem::resize_file(big, limits::kMaxModelBytes + 1); // sparse
  EXPECT_EQ(load(big), big + ": cannot read the model: it is larger than 64 "
                             "MiB, the largest model.json tcc reads");
  // A regular file that is fine is read as before.
  std::string ok = (dir / "ok.json").string();
  std::ofstream(ok) << base().dump();
  ModelSpec spec;
  std::string error;
  EXPECT_TRUE(loadModelSpec(ok, spec, error)) << error;
  EXPECT_EQ(spec.name, "tiny");
}

} // namespace
