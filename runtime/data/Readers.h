//===- Readers.h - The dataset format readers -------------------*- C++ -*-===//
//
// Internal to the data path: loadDataset() dispatches to these. Each returns
// false with `error` one line naming the file and the problem.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_DATA_READERS_H
#define TCC_RUNTIME_DATA_READERS_H

#include "runtime/data/Dataset.h"

#include <string>

namespace tcc::rt::data {

/// MNIST-style IDX: `dir`/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz].
bool loadIdx(const std::string &dir, DataSplit &out, std::string &error);

/// Reads one IDX images file and one IDX labels file into `out`.
bool loadIdxPair(const std::string &imagesPath, const std::string &labelsPath,
                 Dataset &out, std::string &error);

/// CIFAR-10 binary: `dir`/data_batch_{1..5}.bin and test_batch.bin.
bool loadCifar10(const std::string &dir, DataSplit &out, std::string &error);

/// Reads CIFAR-10 binary batch files, in order, into `out`.
bool loadCifar10Files(const std::vector<std::string> &paths, Dataset &out,
                      std::string &error);

/// NumPy: `dir`/{train,test}_{x,y}.npy.
bool loadNpy(const std::string &dir, DataSplit &out, std::string &error);

/// Reads one images .npy and one labels .npy into `out`.
bool loadNpyPair(const std::string &imagesPath, const std::string &labelsPath,
                 Dataset &out, std::string &error);

/// Parsed .npy header.
struct NpyHeader {
  std::string descr; ///< e.g. "<f4"
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  size_t dataOffset = 0; ///< bytes before the array data
};

/// Parses the header of the .npy bytes `bytes` (size `size`). On failure
/// returns false with `error` describing the problem (without the path).
bool parseNpyHeader(const uint8_t *bytes, size_t size, NpyHeader &header,
                    std::string &error);

} // namespace tcc::rt::data

#endif // TCC_RUNTIME_DATA_READERS_H
