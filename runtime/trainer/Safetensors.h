//===- Safetensors.h - Read and write .safetensors files ------*- C++ -*-===//
//
// The format (https://github.com/huggingface/safetensors), as PyTorch's
// `safetensors.torch.save_file` writes it:
//
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  UTF-8 JSON object: for every tensor
//                "name": {"dtype": "F32", "shape": [2, 3],
//                         "data_offsets": [begin, end]}
//              and optionally "__metadata__": {"key": "string value", ...}
//   [rest]     the data section; offsets are relative to its start, the
//              tensors tile it exactly (no gaps, no overlap, no tail), each
//              row-major and little-endian.
//
// Writing pads the header with spaces so the data section starts on an
// 8-byte boundary and orders tensors by element size (largest first), then
// name, so every tensor is naturally aligned (as the Rust crate does). It
// goes through writeFileAtomically: a crash or a failed write leaves the old
// file (or none), never a partial one.
//
// Reading validates everything before trusting it; each failure is one line
// that starts with the file's path.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_SAFETENSORS_H
#define TCC_RUNTIME_TRAINER_SAFETENSORS_H

#include "runtime/CompiledModel.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::rt {

/// Largest header accepted when reading (the Rust crate's limit).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

/// A tensor to write; `data` points at `bytes` bytes owned by the caller,
/// which must equal the element count times the dtype's size.
struct TensorRef {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};

/// A tensor read back (owns its bytes).
struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
};

struct SafetensorsFile {
  std::vector<Tensor> tensors; ///< in the order of their data offsets
  std::map<std::string, std::string> metadata;

  /// The tensor named `name`, or nullptr.
  const Tensor *find(const std::string &name) const;
};

/// "F32" -> DType::F32 etc. False for a dtype tcc does not store (F64, I32,
/// BOOL, ...).
bool parseDType(std::string_view text, DType &out);

/// Serialises to `out`. Fails (false, `error` one line) on a duplicate or
/// reserved name ("__metadata__"), a negative dimension or a byte count that
/// does not match the shape.
bool encodeSafetensors(const std::vector<TensorRef> &tensors,
                       const std::map<std::string, std::string> &metadata,
                       std::string &out, std::string &error);

/// Validates and parses a whole file held in memory. `what` names it in
/// errors (usually its path).
bool decodeSafetensors(std::string_view bytes, const std::string &what,
                       SafetensorsFile &out, std::string &error);

/// encodeSafetensors + writeFileAtomically.
bool writeSafetensors(const std::string &path,
                      const std::vector<TensorRef> &tensors,
                      const std::map<std::string, std::string> &metadata,
                      std::string &error);

/// The largest checkpoint read when the model is not known (tests, tools).
constexpr uint64_t kMaxCheckpointBytes = 64ull << 30;

/// Reads and decodes `path`, refusing a file larger than `maxBytes`.
bool readSafetensors(const std::string &path, SafetensorsFile &out,
                     std::string &error, uint64_t maxBytes = kMaxCheckpointBytes);

/// Reads a whole regular file of at most `maxBytes` into `out` (a device or
/// FIFO is refused unopened: it might never end or block open());
/// false with "cannot read 'PATH' (checkpoint): reason".
bool readWholeFile(const std::string &path, std::string &out, uint64_t maxBytes,
                   std::string &error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_SAFETENSORS_H
