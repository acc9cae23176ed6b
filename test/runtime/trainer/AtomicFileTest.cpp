//===- AtomicFileTest.cpp - Temporary files of atomic writes --------------===//

#include "FakeModel.h"

#include "runtime/AtomicFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <csignal>
#include <set>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using tcc::test::readFile;
using tcc::test::TempDir;
using tcc::test::writeFile;

namespace {

/// The pid of a process that has exited (and been reaped).
pid_t deadPid() {
  pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  int status;
  waitpid(pid, &status, 0);
  return pid;
}

std::set<std::string> names(const std::string &dir) {
  std::set<std::string> out;
  for (auto &entry : std::filesystem::directory_iterator(dir))
    out.insert(entry.path().filename().string());
  return out;
}

} // namespace

TEST(AtomicFile, StaleTemporariesOfDeadWritersAreRemovedAtTheNextWrite) {
  TempDir dir;
  const std::string target = dir.file("c.safetensors");
  const std::string dead = std::to_string(deadPid());
  const std::string live = std::to_string(getppid());
  // What kill -9 during a save leaves behind, and files that look alike but
  // are not ours to remove.
  const std::set<std::string> kept = {
      "c.safetensors.tmp." + live + ".AbC123",      // its writer still runs
      "c.safetensors.tmp.Xy12Zq",                   // not our pattern
      "c.safetensors.tmp." + dead + ".AbC1234",     // not our pattern
      "c.safetensors.tmp." + dead + ".AbC12",       // not our pattern
      "other.safetensors.tmp." + dead + ".AbC123",  // another target's
      "c.safetensors.tmp." + dead + "x.AbC123",     // not our pattern
  };
  for (const std::string &name : kept)
    writeFile(dir.file(name), "x");
  writeFile(dir.file("c.safetensors.tmp." + dead + ".AbC123"), "stale");
  writeFile(dir.file("c.safetensors.tmp." + dead + ".q9Z8y7"), "stale");

  std::string error;
  ASSERT_TRUE(tcc::writeFileAtomically(target, "new", error)) << error;
  EXPECT_EQ(readFile(target), "new");
  std::set<std::string> expected = kept;
  expected.insert("c.safetensors");
  EXPECT_EQ(names(dir.path()), expected);
  EXPECT_EQ(tcc::removeStaleTemporaries(target), 0);
}

TEST(AtomicFile, AWriterKilledMidWriteLeavesTheOldFileAndACleanableTemp) {
  // The child is killed in the middle of its write, deterministically: past
  // RLIMIT_FSIZE the kernel sends SIGXFSZ, whose default action kills.
  TempDir dir;
  const std::string target = dir.file("t.bin");
  writeFile(target, "old");
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit none = {0, 0}, small = {4096, 4096};
    setrlimit(RLIMIT_CORE, &none);
    setrlimit(RLIMIT_FSIZE, &small);
    std::string error;
    tcc::writeFileAtomically(target, std::string(1 << 20, 'n'), error);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) << status;
  EXPECT_EQ(readFile(target), "old");
  std::set<std::string> left = names(dir.path());
  ASSERT_EQ(left.size(), 2u);
  const std::string prefix = "t.bin.tmp." + std::to_string(pid) + ".";
  const std::string temp = *left.rbegin();
  EXPECT_EQ(temp.rfind(prefix, 0), 0u) << temp;
  EXPECT_EQ(temp.size(), prefix.size() + 6) << temp;
  // The next write to the target removes it.
  std::string error;
  ASSERT_TRUE(tcc::writeFileAtomically(target, "new", error)) << error;
  EXPECT_EQ(names(dir.path()), std::set<std::string>{"t.bin"});
  EXPECT_EQ(readFile(target), "new");
}
