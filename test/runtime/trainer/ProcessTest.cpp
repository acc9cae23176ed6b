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
#include <csignal>
#include <sys/stat.h>
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

Result trainer(const std::vector<std::string> &args, const TempDir &dir,
               const std::string &env = "") {
  std::string command = env + " " + quote(TCC_TRAINER_FAKE);
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

/// Starts the fake trainer in the background, each step taking `stepMs`;
/// its output goes to `log`.
pid_t startTrainer(const std::vector<std::string> &args, const std::string &log, int stepMs) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("TCC_FAKE_STEP_MS", std::to_string(stepMs).c_str(), 1);
    freopen(log.c_str(), "w", stdout);
    dup2(fileno(stdout), 2);
    std::vector<char *> argv{const_cast<char *>(TCC_TRAINER_FAKE)};
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// Waits up to 30 s for `path` to exist.
bool waitForFile(const std::string &path) {
  for (int i = 0; i < 3000; ++i) {
    if (access(path.c_str(), F_OK) == 0)
      return true;
    usleep(10000);
  }
  return false;
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

// Two runs on one --save (or --metrics) path would overwrite each other's
// checkpoints and interleave their metrics: the second is refused at once,
// naming the first one's pid; once the first ends the path is free again.
TEST(Process, SecondRunOnOneSavePathIsRefused) {
  TempDir dir;
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  const std::string save = dir.file("c.safetensors"), metrics = dir.file("m.jsonl");
  pid_t first = startTrainer({"--data", dir.path(), "--epochs", "1000", "--save", save,
                              "--metrics", metrics},
                             dir.file("first.log"), 50);
  ASSERT_GT(first, 0);
  ASSERT_TRUE(waitForFile(save + ".lock")) << readFile(dir.file("first.log"));
  ASSERT_TRUE(waitForFile(metrics + ".lock"));
  const std::string pid = "(pid " + std::to_string(first) + ",";
  Result r = trainer({"--data", dir.path(), "--steps", "1", "--save", save}, dir);
  expectOneErrorLine(r, "--save " + save + " is in use by another run " + pid);
  r = trainer({"--data", dir.path(), "--steps", "1", "--save", dir.file("other.safetensors"),
               "--metrics", metrics},
              dir);
  expectOneErrorLine(r, "--metrics " + metrics + " is in use by another run " + pid);
  EXPECT_EQ(access(dir.file("other.safetensors").c_str(), F_OK), -1);
  // A symlink to the checkpoint is the same checkpoint.
  ASSERT_EQ(symlink(save.c_str(), dir.file("link").c_str()), 0);
  r = trainer({"--data", dir.path(), "--steps", "1", "--save", dir.file("link")}, dir);
  expectOneErrorLine(r, "is in use by another run " + pid);

  kill(first, SIGTERM);
  int status = 0;
  waitpid(first, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << readFile(dir.file("first.log"));
  EXPECT_EQ(access((save + ".lock").c_str(), F_OK), -1) << "the lock file is removed";
  EXPECT_EQ(access((metrics + ".lock").c_str(), F_OK), -1);
  r = trainer({"--data", dir.path(), "--resume", save, "--steps", "1", "--save", save,
               "--metrics", metrics, "--quiet"},
              dir);
  EXPECT_EQ(r.status, 0) << r.err;
}

// An input that is a FIFO, a device or far too large ends the run at once
// with one line: a FIFO once blocked open() for 608 s, deaf to SIGTERM.
TEST(Process, InputsThatCouldBlockEndAtOnce) {
  TempDir dir;
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string huge = dir.file("huge.safetensors");
  tcc::test::writeFile(huge, "");
  ASSERT_EQ(truncate(huge.c_str(), 300 << 20), 0);
  const std::string timeout = "timeout 20";
  for (const char *option : {"--init", "--resume"}) {
    expectOneErrorLine(trainer({"--data", dir.path(), option, fifo}, dir, timeout),
                       fifo + "' (checkpoint): it is a FIFO, not a regular file");
    expectOneErrorLine(trainer({"--data", dir.path(), option, "/dev/zero"}, dir, timeout),
                       "'/dev/zero' (checkpoint): it is a character device");
    expectOneErrorLine(trainer({"--data", dir.path(), option, huge}, dir, timeout),
                       huge + "' (checkpoint): it is larger than ");
  }
  // A data file.
  ASSERT_EQ(rename(fifo.c_str(), dir.file("train_x.npy").c_str()), 0);
  expectOneErrorLine(trainer({"--data", dir.path()}, dir, timeout), "FIFO");
}

// A resume that changes how the rest of the run computes says so.
TEST(Process, ResumeSaysWhatItChanges) {
  TempDir dir;
  tcc::test::writeNpyDataset(dir.path(), tcc::test::makeFakeData());
  const std::string save = dir.file("c.safetensors");
  ASSERT_EQ(trainer({"--data", dir.path(), "--steps", "2", "--quiet", "--save", save}, dir,
                    "TCC_FAKE_PRECISION=bf16-mixed")
                .status,
            0);
  Result r = trainer({"--data", dir.path(), "--resume", save, "--steps", "1", "--quiet"}, dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "warning: '" + save + "' was saved by a run in bf16-mixed; this trainer "
                   "computes in fp32, so the remaining steps do too (compile the model with "
                   "--precision bf16-mixed to continue the run as it was)\n");
  r = trainer({"--data", dir.path(), "--resume", save, "--steps", "1", "--quiet",
               "--no-shuffle"},
              dir, "TCC_FAKE_PRECISION=bf16-mixed");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "warning: --no-shuffle: '" + save + "' was saved by a run that shuffled; "
                   "the remaining epochs read the data in file order (omit --no-shuffle to "
                   "continue exactly)\n");
  r = trainer({"--data", dir.path(), "--resume", save, "--steps", "1", "--quiet"}, dir,
              "TCC_FAKE_PRECISION=bf16-mixed");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << "the same recipe continues without a word";
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
