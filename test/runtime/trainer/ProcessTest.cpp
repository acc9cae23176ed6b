//===- ProcessTest.cpp - The trainer program (real main) and Python -------===//
//
// Runs tcc-trainer-fake (FakeMain.cpp + TccTrainerMain) as a process, and
// checks the files it writes with Python (safetensors' own loader and
// PyTorch's strict load_state_dict) when they are installed.
//
//===----------------------------------------------------------------------===//

#include "FakeModel.h"

#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Safetensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

using namespace tcc::rt;
using tcc::test::readFile;
using tcc::test::TempDir;

namespace {

struct Result {
  int status;
  std::string out, err;
};

std::string quote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result runCommand(const std::string &command, const TempDir &dir) {
  std::string out = dir.file("stdout"), err = dir.file("stderr");
  int raw = std::system((command + " >" + quote(out) + " 2>" + quote(err) +
                         " </dev/null")
                            .c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = readFile(out);
  r.err = readFile(err);
  return r;
}

Result trainer(const std::vector<std::string> &args, const TempDir &dir) {
  std::string command = quote(TCC_TRAINER_FAKE);
  for (const std::string &a : args)
    command += " " + quote(a);
  return runCommand(command, dir);
}

void expectOneErrorLine(const Result &r, const std::string &contains) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find(contains), std::string::npos) << r.err;
}

const char *kPython = "/usr/bin/python3";

/// Runs the interop script; skips the test on exit status 77.
Result python(const std::string &mode, const std::string &file,
              const TempDir &dir) {
  return runCommand(std::string(kPython) + " " + quote(TCC_INTEROP_SCRIPT) +
                        " " + mode + " " + quote(file),
                    dir);
}

} // namespace

TEST(Process, TrainsFromNpyFiles) {
  TempDir dir;
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  Result r = trainer({"--data", dir.path(), "--steps", "7", "--metrics",
                      dir.file("m.jsonl"), "--save", dir.file("c.safetensors")},
                     dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << "no progress line when stderr is not a terminal";
  EXPECT_EQ(readFile(dir.file("m.jsonl")), r.out);
  std::istringstream in(r.out);
  int count = 0;
  for (std::string line; std::getline(in, line); ++count)
    EXPECT_NO_THROW(nlohmann::json::parse(line)) << line;
  EXPECT_EQ(count, 2);
  EXPECT_NE(r.out.find("\"final\":true"), std::string::npos);
}

TEST(Process, HelpAndErrors) {
  TempDir dir;
  Result r = trainer({"--help"}, dir);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: "), std::string::npos);
  EXPECT_NE(r.out.find("--metrics FILE.jsonl"), std::string::npos);
  expectOneErrorLine(trainer({"--bogus"}, dir), "unknown option '--bogus'");
  expectOneErrorLine(trainer({"--epochs", "many"}, dir), "--epochs:");
  expectOneErrorLine(trainer({"--data", dir.file("nothing")}, dir),
                     dir.file("nothing"));
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  tcc::test::writeFile(dir.file("junk"), std::string(100, '\xff'));
  expectOneErrorLine(trainer({"--data", dir.path(), "--resume",
                              dir.file("junk")},
                             dir),
                     dir.file("junk") + ": ");
  expectOneErrorLine(trainer({"--data", dir.path(), "--batch-size", "3"}, dir),
                     "recompile with `tcc compile MODEL.json --batch-size 3`");
}

TEST(Python, SafetensorsModuleLoadsOurCheckpoint) {
  if (access(kPython, X_OK) != 0)
    GTEST_SKIP() << kPython << " not found";
  TempDir dir;
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  ASSERT_EQ(trainer({"--data", dir.path(), "--steps", "3", "--quiet", "--save",
                     dir.file("c.safetensors")},
                    dir)
                .status,
            0);
  Result r = python("check-module", dir.file("c.safetensors"), dir);
  if (r.status == 77)
    GTEST_SKIP() << "the safetensors module is not installed for " << kPython;
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(Python, SafetensorsModuleReadsEveryDtype) {
  if (access(kPython, X_OK) != 0)
    GTEST_SKIP() << kPython << " not found";
  TempDir dir;
  std::vector<float> f32 = {1.5f, -2.25f, 3.0f, 0.0f, 1e-3f, 7.0f};
  std::vector<uint16_t> f16 = {floatToHalf(1.0f), floatToHalf(-2.5f)};
  std::vector<uint16_t> bf16 = {floatToBFloat16(1.0f), floatToBFloat16(3.0f),
                                floatToBFloat16(-0.5f)};
  std::vector<int64_t> i64 = {-42};
  std::vector<uint8_t> u8 = {1, 2, 255};
  std::vector<TensorRef> refs = {
      {"layer.weight", DType::F32, {2, 3}, f32.data(), 24},
      {"half", DType::F16, {2}, f16.data(), 4},
      {"brain", DType::BF16, {3, 1}, bf16.data(), 6},
      {"scalar", DType::I64, {}, i64.data(), 8},
      {"bytes", DType::U8, {3}, u8.data(), 3},
      {"empty", DType::F32, {0, 4}, nullptr, 0}};
  std::string error, path = dir.file("all.safetensors");
  ASSERT_TRUE(writeSafetensors(path, refs, {{"format", "pt"}}, error)) << error;
  Result r = python("dump", path, dir);
  if (r.status == 77)
    GTEST_SKIP() << "safetensors or torch is not installed for " << kPython;
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["__metadata__"]["format"], "pt");
  EXPECT_EQ(j["layer.weight"], nlohmann::json::parse(
      R"(["float32", [2, 3], [1.5, -2.25, 3.0, 0.0, 0.0010000000474974513, 7.0]])"));
  EXPECT_EQ(j["half"], nlohmann::json::parse(R"(["float16", [2], [1.0, -2.5]])"));
  EXPECT_EQ(j["brain"],
            nlohmann::json::parse(R"(["bfloat16", [3, 1], [1.0, 3.0, -0.5]])"));
  EXPECT_EQ(j["scalar"], nlohmann::json::parse(R"(["int64", [], [-42.0]])"));
  EXPECT_EQ(j["bytes"], nlohmann::json::parse(R"(["uint8", [3], [1.0, 2.0, 255.0]])"));
  EXPECT_EQ(j["empty"], nlohmann::json::parse(R"(["float32", [0, 4], []])"));
}

TEST(Python, PyTorchLoadsOurCheckpointStrictly) {
  if (access(kPython, X_OK) != 0)
    GTEST_SKIP() << kPython << " not found";
  TempDir dir;
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  ASSERT_EQ(trainer({"--data", dir.path(), "--steps", "3", "--quiet", "--save",
                     dir.file("c.safetensors")},
                    dir)
                .status,
            0);
  Result r = python("torch-load", dir.file("c.safetensors"), dir);
  if (r.status == 77)
    GTEST_SKIP() << "torch is not installed for " << kPython;
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(Python, PyTorchStateDictInitialisesTheModel) {
  if (access(kPython, X_OK) != 0)
    GTEST_SKIP() << kPython << " not found";
  TempDir dir;
  std::string path = dir.file("torch.safetensors");
  Result r = python("torch-write", path, dir);
  if (r.status == 77)
    GTEST_SKIP() << "torch is not installed for " << kPython;
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  tcc::test::FakeModel model;
  const ModelInfo &info = model.info();
  std::vector<uint8_t> state(info.stateBytes);
  std::string error;
  ASSERT_TRUE(initializeState(info, state.data(), 0, nullptr, error)) << error;
  ASSERT_TRUE(loadStateDict(path, info, state.data(), nullptr, error)) << error;
  auto value = [&](const std::string &name, int i) {
    for (const StateTensor &t : info.state)
      if (t.name == name)
        return loadValue(t.dtype, state.data() + t.offset + i * 4);
    return -999.0;
  };
  EXPECT_FLOAT_EQ(value("fc.weight", 17), 0.17f);
  EXPECT_EQ(value("fc.bias", 2), -1.5);
  EXPECT_EQ(value("norm.running_mean", 5), 0.25);
  EXPECT_EQ(value("norm.running_var", 5), 1.0);
  // And the trainer runs from it.
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  r = trainer({"--data", dir.path(), "--init", path, "--eval-only"}, dir);
  EXPECT_EQ(r.status, 0) << r.err;
}
