//===- CommTest.cpp - The launcher's world and the TCP bootstrap ----------===//
#include "runtime/comm/DeviceWait.h"
#include "runtime/comm/Launcher.h"
#include "runtime/comm/TcpBootstrap.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tcc::rt;

namespace {

const char *const kVariables[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "SLURM_PROCID",
    "SLURM_NTASKS", "SLURM_LOCALID", "MASTER_ADDR", "MASTER_PORT", "TCC_BOOTSTRAP_PORT"};

/// Each test starts from an environment without any launcher.
class Comm : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kVariables)
      unsetenv(name);
  }
};

TEST_F(Comm, NoLauncherIsOneProcess) {
  LaunchedWorld world;
  std::string error;
  ASSERT_TRUE(launchedWorld(world, error)) << error;
  EXPECT_EQ(world.size, 1);
  EXPECT_EQ(world.rank, 0);
  EXPECT_EQ(world.launcher, "");
}

TEST_F(Comm, TorchrunMpirunAndSrunWorlds) {
  LaunchedWorld world;
  std::string error;
  setenv("SLURM_PROCID", "5", 1);
  setenv("SLURM_NTASKS", "8", 1);
  setenv("SLURM_LOCALID", "1", 1);
  ASSERT_TRUE(launchedWorld(world, error)) << error;
  EXPECT_EQ(world.launcher, "srun");
  EXPECT_EQ(world.rank, 5);
  EXPECT_EQ(world.size, 8);
  EXPECT_EQ(world.localRank, 1);
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ASSERT_TRUE(launchedWorld(world, error)) << error;
  EXPECT_EQ(world.launcher, "mpirun");
  EXPECT_EQ(world.localRank, 0); // no local rank: one process per node
  // torchrun started under srun or mpirun is the one that started us.
  setenv("RANK", "3", 1);
  setenv("WORLD_SIZE", "6", 1);
  setenv("LOCAL_RANK", "3", 1);
  ASSERT_TRUE(launchedWorld(world, error)) << error;
  EXPECT_EQ(world.launcher, "torchrun");
  EXPECT_EQ(world.rank, 3);
  EXPECT_EQ(world.size, 6);
  EXPECT_EQ(world.localRank, 3);
}

TEST_F(Comm, AWorldThatDoesNotAddUpIsAnError) {
  LaunchedWorld world;
  std::string error;
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "2", 1);
  EXPECT_FALSE(launchedWorld(world, error));
  EXPECT_NE(error.find("RANK=2"), std::string::npos) << error;
  setenv("WORLD_SIZE", "two", 1);
  EXPECT_FALSE(launchedWorld(world, error));
  EXPECT_NE(error.find("WORLD_SIZE='two'"), std::string::npos) << error;
}

TEST_F(Comm, WrongWorldSaysHowToStart) {
  LaunchedWorld alone;
  std::string e = wrongWorldError(4, alone);
  EXPECT_NE(e.find("compiled for 4 ranks"), std::string::npos) << e;
  EXPECT_NE(e.find("torchrun --nproc-per-node=4"), std::string::npos) << e;
  EXPECT_NE(e.find("--ranks=1"), std::string::npos) << e;
}

TEST_F(Comm, BootstrapPortAfterTorchrunsStore) {
  BootstrapAddress a;
  std::string error;
  ASSERT_TRUE(bootstrapAddress(a, error)) << error;
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 29501);
  setenv("MASTER_ADDR", "node0", 1);
  setenv("MASTER_PORT", "12000", 1);
  ASSERT_TRUE(bootstrapAddress(a, error)) << error;
  EXPECT_EQ(a.host, "node0");
  EXPECT_EQ(a.port, 12001);
  setenv("TCC_BOOTSTRAP_PORT", "23456", 1);
  ASSERT_TRUE(bootstrapAddress(a, error)) << error;
  EXPECT_EQ(a.port, 23456);
  setenv("TCC_BOOTSTRAP_PORT", "99999", 1);
  EXPECT_FALSE(bootstrapAddress(a, error));
  EXPECT_NE(error.find("TCC_BOOTSTRAP_PORT='99999'"), std::string::npos) << error;
}

/// A port no one listens on right now.
int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

TEST_F(Comm, RankZerosBytesReachEveryRank) {
  BootstrapAddress address;
  address.port = freePort();
  const int size = 4;
  // Ranks 1..3 in child processes, started before rank 0 listens: they
  // retry until it does.
  std::vector<pid_t> children;
  for (int rank = 1; rank < size; ++rank) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      char id[128] = {};
      std::string error;
      bool ok = tcpBroadcast(rank, size, address, id, sizeof id, 30, error);
      for (int i = 0; i < 128; ++i)
        ok = ok && id[i] == char(i * 7 + 1);
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  usleep(200 * 1000);
  char id[128];
  for (int i = 0; i < 128; ++i)
    id[i] = char(i * 7 + 1);
  std::string error;
  EXPECT_TRUE(tcpBroadcast(0, size, address, id, sizeof id, 30, error)) << error;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

TEST_F(Comm, NoRankZeroIsAnErrorInBoundedTime) {
  BootstrapAddress address;
  address.port = freePort();
  char id[16];
  std::string error;
  EXPECT_FALSE(tcpBroadcast(1, 2, address, id, sizeof id, 1, error));
  EXPECT_NE(error.find("no rank 0 answered at 127.0.0.1:"), std::string::npos) << error;
  EXPECT_FALSE(tcpBroadcast(0, 2, address, id, sizeof id, 1, error));
  EXPECT_NE(error.find("waited for 1 of the 1 other ranks"), std::string::npos) << error;
}

// A cuda trainer's wait for its GPU (DeviceWait.h): done as soon as the
// work is, broken as soon as NCCL says so, and never past the timeout.
TEST(DeviceWait, EndsWhenTheWorkIsDone) {
  int polls = 0;
  EXPECT_EQ(awaitWithin(60, [&] { return ++polls == 3; }, [] { return false; }),
            WaitEnd::Done);
  EXPECT_EQ(polls, 3);
}

TEST(DeviceWait, EndsWhenTheCommunicatorBreaks) {
  int polls = 0;
  EXPECT_EQ(awaitWithin(60, [] { return false; }, [&] { return ++polls == 2; }),
            WaitEnd::Broken);
}

TEST(DeviceWait, WaitsNoLongerThanTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(awaitWithin(0.2, [] { return false; }, [] { return false; }),
            WaitEnd::TimedOut);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.2);
}

} // namespace
