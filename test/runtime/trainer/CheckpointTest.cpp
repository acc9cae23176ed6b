//===- CheckpointTest.cpp - Checkpoints, --resume and --init loading ------===//

#include "FakeModel.h"

#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Safetensors.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <limits>

using namespace tcc::rt;
using tcc::test::FakeModel;
using tcc::test::TempDir;

namespace {

struct Arena {
  explicit Arena(const ModelInfo &info) : bytes(info.stateBytes, 0) {}
  std::vector<uint8_t> bytes;
  void *data() { return bytes.data(); }
};

std::vector<uint8_t> initialised(const ModelInfo &info, uint64_t seed) {
  Arena a(info);
  std::string error;
  EXPECT_TRUE(initializeState(info, a.data(), seed, nullptr, error)) << error;
  return a.bytes;
}

const StateTensor &tensor(const ModelInfo &info, const std::string &name) {
  for (const StateTensor &t : info.state)
    if (t.name == name)
      return t;
  throw std::logic_error("no tensor " + name);
}

/// Writes a state_dict file of the given tensors (all F32 unless stated).
void writeStateDict(const std::string &path,
                    const std::vector<std::pair<std::string, std::vector<int64_t>>> &shapes,
                    DType dtype = DType::F32) {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<TensorRef> refs;
  storage.reserve(shapes.size());
  for (const auto &[name, shape] : shapes) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    storage.emplace_back(n * dtypeSize(dtype));
    for (int64_t i = 0; i < n; ++i)
      storeValue(dtype, storage.back().data() + i * dtypeSize(dtype),
                 0.01 * (i + 1));
    refs.push_back({name, dtype, shape, storage.back().data(),
                    storage.back().size()});
  }
  std::string error;
  ASSERT_TRUE(writeSafetensors(path, refs, {}, error)) << error;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> fullStateDict() {
  return {{"fc.weight", {3, 16}},        {"fc.bias", {3}},
          {"norm.weight", {16}},         {"norm.bias", {16}},
          {"norm.running_mean", {16}},   {"norm.running_var", {16}}};
}

} // namespace

TEST(Checkpoint, SaveThenResumeRestoresEveryByte) {
  TempDir dir;
  FakeModel model;
  const ModelInfo &info = model.info();
  std::vector<uint8_t> state = initialised(info, 3);
  int64_t step = 17;
  std::memcpy(state.data() + tensor(info, "step").offset, &step, 8);
  CheckpointMeta meta;
  meta.step = 17;
  meta.epoch = 3;
  meta.seed = 12345678901234ull;
  meta.epochs = 9.9;
  meta.totalSteps = 50;
  meta.precision = "bf16-mixed";
  meta.shuffle = false;
  std::string error, path = dir.file("c.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, info, state.data(), meta, error)) << error;

  Arena back(info);
  CheckpointMeta got;
  ASSERT_TRUE(loadCheckpoint(path, info, back.data(), got, error)) << error;
  EXPECT_EQ(back.bytes, state);
  EXPECT_EQ(got.model, "fake_linear");
  EXPECT_EQ(got.fingerprint, info.fingerprint);
  EXPECT_EQ(got.step, 17);
  EXPECT_EQ(got.epoch, 3);
  EXPECT_EQ(got.seed, 12345678901234ull);
  EXPECT_DOUBLE_EQ(got.epochs, 9.9);
  EXPECT_EQ(got.totalSteps, 50);
  EXPECT_EQ(got.precision, "bf16-mixed");
  EXPECT_FALSE(got.shuffle);

  SafetensorsFile f;
  ASSERT_TRUE(readSafetensors(path, f, error));
  EXPECT_EQ(f.metadata.at("fingerprint").size(), 16u);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(f.metadata.at("epochs"), "9.9");
  // Every state tensor under its own name, plus num_batches_tracked.
  EXPECT_EQ(f.tensors.size(), info.state.size() + 1);
  const Tensor *tracked = f.find("norm.num_batches_tracked");
  ASSERT_TRUE(tracked);
  EXPECT_EQ(tracked->dtype, DType::I64);
  EXPECT_TRUE(tracked->shape.empty());
  int64_t v;
  std::memcpy(&v, tracked->data.data(), 8);
  EXPECT_EQ(v, 17);
  EXPECT_TRUE(f.find("optimizer.fc.weight.momentum_buffer"));
  EXPECT_TRUE(f.find("ema.fc.weight"));
  EXPECT_TRUE(f.find("step"));
}

TEST(Checkpoint, ResumeRefusesAnotherModel) {
  TempDir dir;
  FakeModel small;                      // input 4x4
  FakeModel big(tcc::test::fakeRecipe(), 5); // input 5x5
  big.mi.name = "bigger";
  std::vector<uint8_t> state = initialised(small.info(), 1);
  std::string error, path = dir.file("c.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, small.info(), state.data(), CheckpointMeta{},
                             error));
  Arena arena(big.info());
  std::vector<uint8_t> before = arena.bytes;
  CheckpointMeta meta;
  EXPECT_FALSE(loadCheckpoint(path, big.info(), arena.data(), meta, error));
  EXPECT_EQ(error, path + ": checkpoint of model 'fake_linear' does not match "
                          "this trainer's model 'bigger' (tensor fc.weight "
                          "has shape [3, 25] here, [3, 16] in the file)");
  EXPECT_EQ(arena.bytes, before) << "state must stay untouched";
}

TEST(Checkpoint, ResumeMismatchDetails) {
  TempDir dir;
  FakeModel model;
  std::vector<uint8_t> state = initialised(model.info(), 1);
  std::string error, path = dir.file("c.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, model.info(), state.data(), {}, error));
  CheckpointMeta meta;

  FakeModel renamed; // a tensor missing from the file
  renamed.mi.state[1].name = "fc.bias2";
  Arena a(renamed.info());
  EXPECT_FALSE(loadCheckpoint(path, renamed.info(), a.data(), meta, error));
  EXPECT_NE(error.find("(tensor fc.bias2 is missing from the file)"),
            std::string::npos)
      << error;

  FakeModel fewer; // the file has a tensor the model lacks
  fewer.mi.state.erase(fewer.mi.state.begin() + 8); // ema.fc.weight
  EXPECT_FALSE(loadCheckpoint(path, fewer.info(), a.data(), meta, error));
  EXPECT_NE(error.find("(the file has tensor ema.fc.weight, which this model "
                       "does not)"),
            std::string::npos)
      << error;

  FakeModel half; // dtype differs
  half.mi.state[0].dtype = DType::BF16;
  Arena h(half.info());
  EXPECT_FALSE(loadCheckpoint(path, half.info(), h.data(), meta, error));
  EXPECT_NE(error.find("(tensor fc.weight is BF16 here, F32 in the file)"),
            std::string::npos)
      << error;

  FakeModel other; // same tensors, other fingerprint
  other.mi.fingerprint ^= 1;
  EXPECT_FALSE(loadCheckpoint(path, other.info(), a.data(), meta, error));
  EXPECT_NE(error.find("fingerprint"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

// A recompile with another --precision keeps the model's name: the message
// says which precisions differ, not "model 'X' does not match model 'X'".
TEST(Checkpoint, ResumeMismatchNamesThePrecisions) {
  TempDir dir;
  FakeModel model;
  std::vector<uint8_t> state = initialised(model.info(), 1);
  CheckpointMeta saved;
  saved.precision = "fp32";
  std::string error, path = dir.file("c.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, model.info(), state.data(), saved, error));
  FakeModel half(tcc::test::fakeRecipe("/nonexistent", 2, "bf16"));
  half.mi.state[0].dtype = DType::BF16;
  Arena h(half.info());
  CheckpointMeta meta;
  EXPECT_FALSE(loadCheckpoint(path, half.info(), h.data(), meta, error));
  EXPECT_EQ(error, path + ": checkpoint of model 'fake_linear' in fp32 does not match "
                          "this trainer's model 'fake_linear' in bf16 (tensor fc.weight "
                          "is BF16 here, F32 in the file)");
}

// Only a file that could be a checkpoint of this model is read whole.
TEST(Checkpoint, ResumeRefusesAFileLargerThanAnyCheckpoint) {
  TempDir dir;
  FakeModel model;
  std::string path = dir.file("huge.safetensors");
  tcc::test::writeFile(path, "");
  ASSERT_EQ(truncate(path.c_str(), 300 << 20), 0); // sparse: no disk used
  Arena a(model.info());
  CheckpointMeta meta;
  std::string error;
  EXPECT_FALSE(loadCheckpoint(path, model.info(), a.data(), meta, error));
  EXPECT_NE(error.find("(checkpoint): it is larger than "), std::string::npos) << error;
  EXPECT_FALSE(loadStateDict(path, model.info(), a.data(), nullptr, error));
  EXPECT_NE(error.find("it is larger than"), std::string::npos) << error;
}

TEST(Checkpoint, ResumeNeedsATccCheckpoint) {
  TempDir dir;
  FakeModel model;
  std::string path = dir.file("torch.safetensors");
  writeStateDict(path, fullStateDict());
  Arena a(model.info());
  CheckpointMeta meta;
  std::string error;
  EXPECT_FALSE(loadCheckpoint(path, model.info(), a.data(), meta, error));
  EXPECT_NE(error.find("not a tcc checkpoint"), std::string::npos) << error;
  EXPECT_NE(error.find("--init"), std::string::npos) << error;
}

TEST(Checkpoint, InitLoadsAStateDict) {
  TempDir dir;
  FakeModel model;
  const ModelInfo &info = model.info();
  std::string path = dir.file("init.safetensors");
  auto sd = fullStateDict();
  sd.push_back({"norm.num_batches_tracked", {}}); // ignored
  writeStateDict(path, sd);
  std::vector<uint8_t> state = initialised(info, 5);
  std::vector<uint8_t> before = state;
  std::vector<std::string> loaded;
  std::string error;
  ASSERT_TRUE(loadStateDict(path, info, state.data(), &loaded, error)) << error;
  EXPECT_EQ(loaded.size(), 6u);
  float w0;
  std::memcpy(&w0, state.data() + tensor(info, "fc.weight").offset, 4);
  EXPECT_FLOAT_EQ(w0, 0.01f);
  // Optimizer state and the counter keep their initialisation.
  const StateTensor &m = tensor(info, "optimizer.fc.weight.momentum_buffer");
  EXPECT_EQ(std::memcmp(state.data() + m.offset, before.data() + m.offset,
                        m.numBytes()),
            0);
}

TEST(Checkpoint, InitAcceptsATccCheckpoint) {
  TempDir dir;
  FakeModel model;
  std::vector<uint8_t> state = initialised(model.info(), 9);
  std::string error, path = dir.file("c.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, model.info(), state.data(), {}, error));
  std::vector<uint8_t> fresh = initialised(model.info(), 10);
  ASSERT_TRUE(loadStateDict(path, model.info(), fresh.data(), nullptr, error))
      << error;
  const StateTensor &w = tensor(model.info(), "fc.weight");
  EXPECT_EQ(std::memcmp(fresh.data() + w.offset, state.data() + w.offset,
                        w.numBytes()),
            0);
}

TEST(Checkpoint, InitRejectsUnknownNames) {
  TempDir dir;
  FakeModel model;
  std::string path = dir.file("init.safetensors");
  auto sd = fullStateDict();
  sd.push_back({"fc.wieght", {3, 16}});
  writeStateDict(path, sd);
  std::vector<uint8_t> state = initialised(model.info(), 5), before = state;
  std::string error;
  EXPECT_FALSE(loadStateDict(path, model.info(), state.data(), nullptr, error));
  EXPECT_EQ(error, path + ": tensor 'fc.wieght' is not a parameter or buffer "
                          "of model 'fake_linear'; the closest is 'fc.weight'");
  EXPECT_EQ(state, before);
}

TEST(Checkpoint, InitRejectsMissingParameters) {
  TempDir dir;
  FakeModel model;
  std::string path = dir.file("init.safetensors");
  auto sd = fullStateDict();
  sd.erase(sd.begin() + 1); // fc.bias
  writeStateDict(path, sd);
  std::vector<uint8_t> state = initialised(model.info(), 5), before = state;
  std::string error;
  EXPECT_FALSE(loadStateDict(path, model.info(), state.data(), nullptr, error));
  EXPECT_EQ(error, path + ": parameter 'fc.bias' of model 'fake_linear' is "
                          "missing from the file (5 of 6 parameters and "
                          "buffers found)");
  EXPECT_EQ(state, before);
  // A missing buffer too.
  sd = fullStateDict();
  sd.pop_back();
  writeStateDict(path, sd);
  EXPECT_FALSE(loadStateDict(path, model.info(), state.data(), nullptr, error));
  EXPECT_NE(error.find("buffer 'norm.running_var'"), std::string::npos)
      << error;
}

TEST(Checkpoint, InitRejectsWrongShapesAndDtypes) {
  TempDir dir;
  FakeModel model;
  std::string path = dir.file("init.safetensors");
  auto sd = fullStateDict();
  sd[0].second = {16, 3};
  writeStateDict(path, sd);
  std::vector<uint8_t> state = initialised(model.info(), 5), before = state;
  std::string error;
  EXPECT_FALSE(loadStateDict(path, model.info(), state.data(), nullptr, error));
  EXPECT_EQ(error, path + ": tensor 'fc.weight' has shape [16, 3] in the "
                          "file, but model 'fake_linear' needs [3, 16]");
  writeStateDict(path, fullStateDict(), DType::I64);
  EXPECT_FALSE(loadStateDict(path, model.info(), state.data(), nullptr, error));
  EXPECT_NE(error.find("'fc.weight' is I64 in the file, but model "
                       "'fake_linear' stores it as F32"),
            std::string::npos)
      << error;
  EXPECT_EQ(state, before);
}

// A model that stores a parameter in 16 bits (pure fp16) starts from f32
// weights: each value rounded to nearest (ties to even), listed as
// converted; a value beyond fp16's range is an error, and nothing is loaded.
TEST(Checkpoint, InitRoundsFloatTensorsToTheModelsType) {
  TempDir dir;
  FakeModel model;
  ModelInfo half = model.info();
  for (StateTensor &t : half.state)
    if (t.name == "fc.weight")
      t.dtype = DType::F16; // half its bytes, at the same offset
  std::string path = dir.file("init.safetensors"), error;
  std::vector<uint8_t> f32 = initialised(model.info(), 5);
  const float values[] = {1.0f + 0x1p-11f,     // a tie: to even, 1
                          1.0f + 3 * 0x1p-11f, // a tie: to even, 1 + 2^-9
                          0.1f, -2.5f};
  std::memcpy(f32.data() + tensor(model.info(), "fc.weight").offset, values,
              sizeof values);
  ASSERT_TRUE(saveCheckpoint(path, model.info(), f32.data(), {}, error)) << error;

  std::vector<uint8_t> state = initialised(half, 5);
  std::vector<std::string> converted;
  ASSERT_TRUE(loadStateDict(path, half, state.data(), nullptr, error, &converted)) << error;
  EXPECT_EQ(converted, std::vector<std::string>{"fc.weight (F32 to F16)"});
  uint16_t bits[4];
  std::memcpy(bits, state.data() + tensor(half, "fc.weight").offset, sizeof bits);
  EXPECT_EQ(bits[0], 0x3c00); // 1
  EXPECT_EQ(bits[1], 0x3c02); // 1 + 2^-9
  EXPECT_EQ(bits[2], 0x2e66); // 0.0999755859375, the nearest to 0.1f
  EXPECT_EQ(bits[3], 0xc100); // -2.5
  // The other tensors are copied as they are.
  const StateTensor &bias = tensor(half, "fc.bias");
  EXPECT_EQ(0, std::memcmp(state.data() + bias.offset, f32.data() + bias.offset,
                           bias.numBytes()));

  const float tooLarge = 70000.0f; // fp16's largest is 65504
  std::memcpy(f32.data() + tensor(model.info(), "fc.weight").offset + 8, &tooLarge, 4);
  ASSERT_TRUE(saveCheckpoint(path, model.info(), f32.data(), {}, error)) << error;
  std::vector<uint8_t> before = state;
  EXPECT_FALSE(loadStateDict(path, half, state.data(), nullptr, error));
  EXPECT_EQ(error, path + ": tensor fc.weight holds inf (element 2) once rounded to F16, "
                          "the type model 'fake_linear' stores it in: its F32 value is out "
                          "of that range; scale the weights down or compile the model with "
                          "another train.precision");
  EXPECT_EQ(state, before);
}

TEST(Checkpoint, NonFiniteValuesAreFoundInEveryFloatDtype) {
  std::vector<float> f32 = {1, 2, std::numeric_limits<float>::infinity(), 4};
  EXPECT_EQ(firstNonFinite(DType::F32, f32.data(), 4), 2);
  EXPECT_EQ(firstNonFinite(DType::F32, f32.data(), 2), -1);
  f32[1] = -std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(firstNonFinite(DType::F32, f32.data(), 4), 1);
  std::vector<uint16_t> f16 = {floatToHalf(65504.0f), 0x7c00, 0xfe00};
  EXPECT_EQ(firstNonFinite(DType::F16, f16.data(), 1), -1) << "largest half";
  EXPECT_EQ(firstNonFinite(DType::F16, f16.data(), 3), 1);
  std::vector<uint16_t> bf16 = {floatToBFloat16(3e38f), 0xff80};
  EXPECT_EQ(firstNonFinite(DType::BF16, bf16.data(), 2), 1);
  std::vector<int64_t> i64 = {-1, INT64_MAX};
  EXPECT_EQ(firstNonFinite(DType::I64, i64.data(), 2), -1);
}

namespace {
/// A saved state of `model` whose `name` element `index` is `value`.
std::string saveWith(const TempDir &dir, FakeModel &model,
                     const std::string &name, int index, float value) {
  const ModelInfo &info = model.info();
  std::vector<uint8_t> state = initialised(info, 1);
  std::string error, path = dir.file("c.safetensors");
  EXPECT_TRUE(saveCheckpoint(path, info, state.data(), {}, error)) << error;
  // Poke the value into the file (saveCheckpoint itself refuses it).
  SafetensorsFile f;
  EXPECT_TRUE(readSafetensors(path, f, error)) << error;
  std::vector<TensorRef> refs;
  for (Tensor &t : f.tensors) {
    if (t.name == name)
      std::memcpy(t.data.data() + 4 * index, &value, 4);
    refs.push_back({t.name, t.dtype, t.shape, t.data.data(), t.data.size()});
  }
  EXPECT_TRUE(writeSafetensors(path, refs, f.metadata, error)) << error;
  return path;
}
} // namespace

TEST(Checkpoint, NonFiniteStateIsNeverSavedNorLoaded) {
  TempDir dir;
  FakeModel model;
  const ModelInfo &info = model.info();
  std::string error, path = dir.file("c.safetensors");
  std::vector<uint8_t> state = initialised(info, 1);
  ASSERT_TRUE(saveCheckpoint(path, info, state.data(), {}, error)) << error;
  const std::string good = tcc::test::readFile(path);
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(state.data() + tensor(info, "ema.fc.weight").offset + 12, &nan,
              4);
  EXPECT_EQ(nonFiniteStateTensor(info, state.data()),
            "ema.fc.weight holds nan (element 3)");
  EXPECT_FALSE(saveCheckpoint(path, info, state.data(), {}, error));
  EXPECT_EQ(error, "not writing '" + path +
                       "': state tensor ema.fc.weight holds nan (element 3); "
                       "a checkpoint never holds NaN or infinity (the file "
                       "keeps its previous contents)");
  EXPECT_EQ(tcc::test::readFile(path), good);

  // --resume and --init refuse such files, naming the tensor.
  path = saveWith(dir, model, "fc.bias", 2,
                  -std::numeric_limits<float>::infinity());
  Arena a(info);
  std::vector<uint8_t> before = a.bytes;
  CheckpointMeta meta;
  EXPECT_FALSE(loadCheckpoint(path, info, a.data(), meta, error));
  EXPECT_EQ(error, path + ": tensor fc.bias holds -inf (element 2): the "
                          "checkpoint comes from a diverged run; resume from "
                          "an earlier checkpoint");
  EXPECT_FALSE(loadStateDict(path, info, a.data(), nullptr, error));
  EXPECT_EQ(error, path + ": tensor fc.bias holds -inf (element 2): these "
                          "weights come from a diverged run; start from other "
                          "weights");
  EXPECT_EQ(a.bytes, before);
  // --init ignores the optimizer state: NaN there does not matter to it.
  path = saveWith(dir, model, "optimizer.fc.bias.momentum_buffer", 0, nan);
  EXPECT_TRUE(loadStateDict(path, info, a.data(), nullptr, error)) << error;
  EXPECT_FALSE(loadCheckpoint(path, info, a.data(), meta, error));
  EXPECT_NE(error.find("optimizer.fc.bias.momentum_buffer holds nan"),
            std::string::npos)
      << error;
}

TEST(Checkpoint, ResumeRefusesAnotherModelsNameAndAnEditedStep) {
  TempDir dir;
  FakeModel model;
  std::vector<uint8_t> state = initialised(model.info(), 1);
  std::string error, path = dir.file("c.safetensors");
  ASSERT_TRUE(saveCheckpoint(path, model.info(), state.data(), {}, error));
  // The same architecture under another name: another model's run.
  FakeModel twin;
  twin.mi.name = "twin";
  Arena a(twin.info());
  CheckpointMeta meta;
  EXPECT_FALSE(loadCheckpoint(path, twin.info(), a.data(), meta, error));
  EXPECT_EQ(error, path + ": checkpoint of model 'fake_linear' does not match "
                          "this trainer's model 'twin' (the same tensors, but "
                          "its metadata names another model; to start from "
                          "its weights use --init)");
  EXPECT_TRUE(loadStateDict(path, twin.info(), a.data(), nullptr, error))
      << error;
  // Metadata step and the counter disagree.
  SafetensorsFile f;
  ASSERT_TRUE(readSafetensors(path, f, error));
  f.metadata["step"] = "12";
  std::vector<TensorRef> refs;
  for (const Tensor &t : f.tensors)
    refs.push_back({t.name, t.dtype, t.shape, t.data.data(), t.data.size()});
  ASSERT_TRUE(writeSafetensors(path, refs, f.metadata, error)) << error;
  EXPECT_FALSE(loadCheckpoint(path, model.info(), a.data(), meta, error));
  EXPECT_EQ(error, path + ": its metadata says step 12 but tensor 'step' "
                          "holds 0 (an edited or corrupt checkpoint)");
}
