//===- ModelFile.cpp - Reading model.json from disk -----------------------===//
//
// Only a regular file of bounded size is read: a path such as /dev/zero, a
// FIFO or a directory would otherwise be read until memory runs out, block
// forever, or fail with a confusing message.
//
//===----------------------------------------------------------------------===//

#include "frontend/Limits.h"
#include "frontend/ModelSpec.h"

#include <filesystem>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::frontend {
namespace {

std::string sizeText(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

/// Closes the descriptor on every path out of loadModelSpec.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

bool readAll(const std::string &path, std::string &text, std::string &error) {
  auto failWith = [&](const std::string &why) {
    error = path + ": cannot read the model: " + why;
    return false;
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then
  // refuses it. For a regular file the flag changes nothing.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0)
    return failWith(std::strerror(errno));
  struct stat st;
  if (::fstat(file.fd, &st) != 0)
    return failWith(std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return failWith("it is a directory");
  if (!S_ISREG(st.st_mode))
    return failWith("it is not a regular file (a device, FIFO or socket); "
                    "give the path of a model.json file");
  const uint64_t limit = limits::kMaxModelBytes;
  std::string tooLarge = "it is larger than " + sizeText(limit) +
                         ", the largest model.json tcc reads";
  if (static_cast<uint64_t>(st.st_size) > limit)
    return failWith(tooLarge);
  // The size may change while reading (a file being written): read at most
  // one byte past the limit, whatever fstat said.
  text.clear();
  char buffer[1 << 16];
  while (text.size() <= limit) {
    ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return failWith(std::strerror(errno));
    if (n == 0)
      return true;
    text.append(buffer, static_cast<size_t>(n));
  }
  return failWith(tooLarge);
}

} // namespace

bool loadModelSpec(const std::string &path, ModelSpec &spec,
                   std::string &error) {
  std::string text;
  if (!readAll(path, text, error) || !parseModelSpec(text, path, spec, error))
    return false;
  // A relative data.path (given or default) names a place next to the
  // model file, wherever tcc runs; the trainer gets it absolute.
  std::filesystem::path data = spec.recipe.data.path;
  if (data.is_relative()) {
    std::error_code ec;
    std::filesystem::path dir =
        std::filesystem::absolute(std::filesystem::path(path), ec).parent_path();
    if (!ec)
      spec.recipe.data.path = (dir / data).lexically_normal().string();
  }
  return true;
}

} // namespace tcc::frontend
