//===- Temporaries.cpp - What a killed tcc must not leave behind ----------===//

#include "tools/tcc/Temporaries.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous[3];
bool installed = false;
/// Read by the handler; changed only with the signals blocked.
std::vector<std::string> *paths = nullptr;
volatile pid_t childGroup = 0;

/// Blocks tcc's signals for a scope: the handler never sees a half-changed
/// list, and a child never runs unprotected.
struct BlockSignals {
  sigset_t old;
  BlockSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kSignals)
      sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, &old);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
};

/// rm -rf, with only system calls and readdir: it runs in a signal handler.
void removeTree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return;
  if (S_ISDIR(st.st_mode)) {
    if (DIR *d = opendir(path)) {
      while (dirent *e = readdir(d)) {
        if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, ".."))
          continue;
        char child[4096];
        if (std::snprintf(child, sizeof child, "%s/%s", path, e->d_name) < int(sizeof child))
          removeTree(child);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

extern "C" void onSignal(int signal) {
  if (childGroup > 0)
    kill(-childGroup, SIGTERM);
  if (paths)
    for (const std::string &p : *paths)
      removeTree(p.c_str());
  // Die of the signal through whatever handled it before (LLVM's removes
  // its own files): it is delivered again once this handler returns.
  for (size_t i = 0; i < std::size(kSignals); ++i)
    if (kSignals[i] == signal)
      sigaction(signal, &previous[i], nullptr);
  raise(signal);
}

void install() {
  if (installed)
    return;
  installed = true;
  paths = new std::vector<std::string>();
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    sigaction(kSignals[i], nullptr, &previous[i]);
    // An ignored signal (nohup's SIGHUP) stays ignored.
    if (previous[i].sa_handler != SIG_IGN)
      sigaction(kSignals[i], &action, nullptr);
  }
}

/// The pid that starts `rest` ("<pid>-..." or "<pid>" at its end), or -1.
long leadingPid(const char *rest, char end) {
  char *after = nullptr;
  errno = 0;
  long pid = std::strtol(rest, &after, 10);
  if (after == rest || *after != end || errno || pid <= 0 || *rest < '0' || *rest > '9')
    return -1;
  return pid;
}

/// Its process is gone (ESRCH only: a live process we may not signal keeps
/// its files), it is not ours, and this user owns the path.
bool staleAndMine(long pid, const std::string &path, struct stat &st) {
  return pid > 0 && pid != getpid() && kill(static_cast<pid_t>(pid), 0) != 0 &&
         errno == ESRCH && lstat(path.c_str(), &st) == 0 && st.st_uid == getuid();
}

std::string temporaryDirectory() {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  return dir.str().str();
}

} // namespace

void tcc::removeOnSignal(const std::string &path) {
  BlockSignals block;
  install();
  paths->push_back(path);
}

void tcc::dontRemoveOnSignal(const std::string &path) {
  BlockSignals block;
  if (paths)
    paths->erase(std::remove(paths->begin(), paths->end(), path), paths->end());
}

int tcc::runChildProcess(const std::vector<std::string> &args, const std::string &log,
                         const std::string &tmpdir, std::string &error) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  // The environment, made before fork: tcc has threads, so the child may
  // only make system calls until it execs.
  std::vector<std::string> environment;
  for (char **e = environ; *e; ++e)
    if (tmpdir.empty() || std::strncmp(*e, "TMPDIR=", 7) != 0)
      environment.push_back(*e);
  if (!tmpdir.empty())
    environment.push_back("TMPDIR=" + tmpdir);
  std::vector<char *> envp;
  for (std::string &e : environment)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t parent = getpid(), pid;
  {
    // The child is in childGroup before any signal can look for it.
    BlockSignals block;
    install();
    pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      // A tcc killed with SIGKILL stops its compiler too.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      int out = open(log.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (getppid() != parent || out < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
          dup2(out, 2) < 0)
        _exit(127);
      // tcc's handler must not run here (it would remove tcc's files).
      for (size_t i = 0; i < std::size(kSignals); ++i)
        if (previous[i].sa_handler != SIG_IGN)
          signal(kSignals[i], SIG_DFL);
      pthread_sigmask(SIG_SETMASK, &block.old, nullptr);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    if (pid < 0) {
      error = std::string("cannot start ") + args[0] + ": " + std::strerror(errno);
      return -1;
    }
    setpgid(pid, pid); // whichever of the two runs first
    childGroup = pid;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  childGroup = 0;
  if (WIFSIGNALED(status)) {
    error = args[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
    return -1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    error = "cannot run " + args[0];
    return -1;
  }
  return WEXITSTATUS(status);
}

bool tcc::createBuildTemporary(const std::string &suffix, std::string &path,
                               std::string &error) {
  std::string name = temporaryDirectory() + "/tcc-build-" + std::to_string(getpid()) +
                     "-XXXXXX." + suffix;
  int fd = mkstemps(name.data(), static_cast<int>(suffix.size() + 1));
  if (fd < 0) {
    error = "cannot create a temporary file to build the trainer in " + temporaryDirectory() +
            ": " + std::strerror(errno);
    return false;
  }
  close(fd);
  path = name;
  return true;
}

bool tcc::createBuildFolder(std::string &path, std::string &error) {
  std::string name = temporaryDirectory() + "/tcc-build-" + std::to_string(getpid()) + "-XXXXXX";
  if (!mkdtemp(name.data())) {
    error = "cannot create a temporary folder to build the trainer in " + temporaryDirectory() +
            ": " + std::strerror(errno);
    return false;
  }
  path = name;
  return true;
}

int tcc::removeStaleBuildTemporaries(const std::string &dir) {
  int removed = 0;
  // `folders`: only folders; else files and folders.
  auto sweep = [&](const std::string &folder, const std::string &prefix, char end,
                   bool folders) {
    DIR *d = opendir(folder.c_str());
    if (!d)
      return;
    while (dirent *e = readdir(d)) {
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0)
        continue;
      std::string path = folder + "/" + e->d_name;
      struct stat st;
      if (!staleAndMine(leadingPid(e->d_name + prefix.size(), end), path, st) ||
          (folders && !S_ISDIR(st.st_mode)) ||
          (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)))
        continue;
      removeTree(path.c_str());
      ++removed;
    }
    closedir(d);
  };
  sweep(temporaryDirectory(), "tcc-build-", '-', false);
  if (!dir.empty()) {
    std::string parent = llvm::sys::path::parent_path(dir).str();
    sweep(parent.empty() ? "." : parent, llvm::sys::path::filename(dir).str() + ".tmp.", '\0',
          true);
  }
  return removed;
}

tcc::TempFile::TempFile(std::string path) : path(std::move(path)) {
  removeOnSignal(this->path);
}

tcc::TempFile::~TempFile() {
  if (!kept && llvm::sys::fs::is_directory(path))
    llvm::sys::fs::remove_directories(path);
  else if (!kept)
    llvm::sys::fs::remove(path);
  dontRemoveOnSignal(path);
}

std::string tcc::temporaryBeside(const std::string &path) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string name = path + ".tmp." + std::to_string(getpid()) + ".";
  for (int i = 0; i < 6; ++i)
    name += kChars[llvm::sys::Process::GetRandomNumber() % (sizeof kChars - 1)];
  return name;
}
