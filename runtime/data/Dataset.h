//===- Dataset.h - Training data: loading, shuffling, augmentation -*- C++ -*-//
//
// The data sets as the trainer loads them. The compiled step gathers its
// batches itself from the resident data (runtime/common/Batch.h); the
// BatchLoader makes the same batches on the host for the trainer's own use
// (patch-whitening statistics) and for tests.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_DATA_DATASET_H
#define TCC_RUNTIME_DATA_DATASET_H

#include "runtime/common/Batch.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

/// Images [n, c, h, w], either raw bytes (scaled by 1/255 when batched) or
/// float32 (used as they are), and their class labels.
struct Dataset {
  int64_t n = 0, c = 0, h = 0, w = 0;
  std::vector<uint8_t> u8;  ///< used when !isFloat
  std::vector<float> f32;   ///< used when isFloat
  bool isFloat = false;
  /// Token ids [n, 1, 1, T] read from an integer array, as exact integers in
  /// f32 (with isFloat).
  bool tokens = false;
  /// Labels per sample: 1, or T of sequence targets ([n, T], read as they
  /// are: ignore_index may be negative; the trainer checks them).
  int64_t targets = 1;
  bool perToken = false; ///< labels were [n, T] (T may be 1)
  std::vector<int64_t> labels;
};

struct DataSplit {
  Dataset train, test;
};

/// Loads the train and test sets. `format`: "idx" (MNIST/Fashion-MNIST
/// files train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
/// t10k-...), "cifar10" (data_batch_1..5.bin and test_batch.bin),
/// "npy" (train_x.npy [N,C,H,W] uint8 or float32, train_y.npy int64,
/// test_x.npy, test_y.npy). On failure returns false with `error` one line
/// naming the file and the problem.
bool loadDataset(const std::string &format, const std::string &path,
                 DataSplit &out, std::string &error);

/// AugmentConfig and the augmentation's semantics: runtime/common/Batch.h.

/// out = (x - mean[c]) / std[c], computed in float32, where x = v / 255.0f
/// for uint8 data and x = v for float data. Empty: mean 0, std 1; one value:
/// used for every channel; otherwise one value per channel.
struct NormalizeConfig {
  std::vector<float> mean, std; ///< per channel, after scaling to [0, 1]
};

/// Produces batches of normalised float images [batch, c, h, w] and labels.
/// Shuffling and augmentation are a pure function of (seed, epoch, sample
/// index), so a resumed run sees exactly the batches of an uninterrupted one.
/// The shuffle is the per-position bijection of runtime/common/CounterRng.h
/// (identical on every platform and device); the samples are made by the
/// per-element functions of runtime/common/Batch.h, which the compiled
/// step's gather uses too.
/// A sample's position is index * batchSize + slot (its place in the epoch's
/// order), so the augmentation draws depend on the batch size as well.
/// Padding slots of a short last batch hold 0.0f (not a normalised zero).
/// The loader refers to `data`, which must outlive it. batch() is const and
/// touches no shared mutable state: any number of threads may call it at
/// once.
class BatchLoader {
public:
  BatchLoader(const Dataset &data, int64_t batchSize, bool shuffle,
              bool augment, bool dropLast, uint64_t seed,
              AugmentConfig augmentConfig, NormalizeConfig normalize);

  /// Batches per epoch: floor(n / batch) with dropLast, else ceil.
  int64_t batchesPerEpoch() const;

  /// Fills batch `index` of `epoch` (0-based). `images` holds batchSize
  /// samples and `labels` batchSize * Dataset::targets labels; a short last
  /// batch is padded with zeros and label 0, and `valid` says how many
  /// samples are real.
  void batch(int64_t epoch, int64_t index, float *images, int64_t *labels,
             int64_t &valid) const;

  /// Checks the dataset (sizes consistent with n, c, h, w) and the
  /// configuration (batch size > 0, non-negative augmentation sizes, mean/std
  /// sizes, std finite and > 0). On failure returns false with a one-line
  /// `error`; batch() of such a loader fills zeros and sets `valid` to 0, as
  /// it does for an `index` outside [0, batchesPerEpoch()).
  bool check(std::string &error) const;

  /// The dataset rows in the order epoch `epoch` visits them (the identity
  /// without shuffling): position p of the epoch is row epochOrder(epoch)[p].
  std::vector<int64_t> epochOrder(int64_t epoch) const;

private:
  const Dataset &data;
  int64_t batchSize;
  bool shuffle, augment, dropLast;
  uint64_t seed;
  AugmentConfig augmentConfig;
  NormalizeConfig normalize;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_DATA_DATASET_H
