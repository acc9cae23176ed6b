//===- DataCheck.cpp - The model's data, looked at when it is compiled ----===//
//
// The trainer checks its data when it starts (runtime/data). Where the data
// is already there at compile time, a missing folder or images of another
// shape are said now, as warnings: the data may be produced later, or come
// with ./train --data.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/DataCheck.h"

#include "runtime/InputFile.h"
#include "runtime/data/Readers.h"

#include "llvm/Support/FileSystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

bool exists(const std::string &path) { return llvm::sys::fs::exists(path); }

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The first `size` bytes of the regular file `path` (fewer if it is
/// shorter; none if it is not a regular file): checked before the open and
/// opened O_NONBLOCK, so that a FIFO cannot block the compile.
std::vector<uint8_t> readHead(const std::string &path, size_t size) {
  std::vector<uint8_t> head;
  if (!tcc::notRegularInput(path).empty())
    return head;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0)
    return head;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    head.resize(size);
    ssize_t n = pread(fd, head.data(), size, 0);
    head.resize(n > 0 ? size_t(n) : 0);
  }
  close(fd);
  return head;
}

/// The shape in an .npy file's header (the trainer's own parser), or empty
/// if it cannot be read.
std::vector<int64_t> npyShape(const std::string &path) {
  std::vector<uint8_t> head = readHead(path, 65536 + 12); // NumPy's headers are far shorter
  tcc::rt::data::NpyHeader header;
  std::string error;
  if (!tcc::rt::data::parseNpyHeader(head.data(), head.size(), header, error))
    return {};
  return header.shape;
}

/// The image shape of an uncompressed idx file ([H, W]), or empty.
std::vector<int64_t> idxImageShape(const std::string &path) {
  std::vector<uint8_t> h = readHead(path, 16);
  if (h.size() < 16 || h[2] != 0x08 || h[3] != 3)
    return {};
  auto be = [&](int at) { return int64_t(h[at]) << 24 | h[at + 1] << 16 | h[at + 2] << 8 | h[at + 3]; };
  return {be(8), be(12)};
}

} // namespace

std::vector<std::string> tcc::checkDataAtCompile(const ::tcc::frontend::ModelSpec &spec) {
  const std::string format = ::tcc::rt::DataRecipe::formatName(spec.recipe.data.format);
  const std::string &path = spec.recipe.data.path;
  std::vector<std::string> warnings;
  const std::string later =
      ": the trainer reads its data there when it starts (or from ./train --data PATH)";
  if (path.empty() || !exists(path))
    return {"data.path '" + path + "' does not exist (yet)" + later};
  std::vector<std::string> files;
  if (format == "idx")
    files = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte"};
  else if (format == "npy")
    files = {"train_x.npy", "train_y.npy", "test_x.npy", "test_y.npy"};
  else if (format == "cifar10" && !exists(path + "/cifar-10-batches-bin"))
    files = {"data_batch_1.bin", "test_batch.bin"};
  for (const std::string &file : files) {
    const std::string full = path + "/" + file;
    if (!exists(full) && !(format == "idx" && exists(full + ".gz")))
      return {"data.path '" + path + "' has no " + file + later};
    if (std::string why = tcc::notRegularInput(full); exists(full) && !why.empty())
      return {"data.path '" + path + "': " + file + ": " + why +
              "; the trainer reads regular files only"};
  }

  // The image shape, where the header says it without decompressing.
  const std::vector<int64_t> &input = spec.inputShape;
  std::vector<int64_t> images, expected;
  if (format == "npy") {
    std::vector<int64_t> shape = npyShape(path + "/train_x.npy");
    if (shape.size() >= 2) {
      images.assign(shape.begin() + 1, shape.end());
      expected = input;
      if (images.size() == 2 && input.size() == 3 && input[0] == 1)
        expected.erase(expected.begin()); // [N, H, W] is one channel
    }
  } else if (format == "idx" && exists(path + "/train-images-idx3-ubyte")) {
    images = idxImageShape(path + "/train-images-idx3-ubyte");
    expected.assign(input.begin() + 1, input.end());
  }
  if (!images.empty() && images != expected && spec.vocab > 0)
    warnings.push_back("data.path '" + path + "': train_x.npy holds token sequences " +
                       shapeText(images) + ", but input.shape is " + shapeText(input) +
                       ": the trainer will refuse them (docs/data.md)");
  else if (!images.empty() && images != expected)
    warnings.push_back("data.path '" + path + "' holds images " + shapeText(images) +
                       ", but input.shape is " + shapeText(input) +
                       ": the trainer will refuse them (docs/data.md)");
  return warnings;
}
