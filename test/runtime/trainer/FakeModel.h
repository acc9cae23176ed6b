//===- FakeModel.h - A hand-written CompiledModel for the trainer tests ---===//
//
// A linear softmax classifier on flattened inputs (fc.weight [K, D],
// fc.bias [K]) trained by SGD with momentum (optimizer.fc.*.momentum_buffer)
// and a linearly decaying learning rate over RunConstants::totalSteps, plus
// an EMA of the weight (ema.fc.weight, a copy init), a batch-norm-like
// buffer pair that tracks the input statistics (norm.running_mean,
// norm.running_var; with norm.weight / norm.bias parameters, so the state
// looks like a PyTorch BatchNorm1d), and the step counter "step".
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TEST_RUNTIME_TRAINER_FAKEMODEL_H
#define TCC_TEST_RUNTIME_TRAINER_FAKEMODEL_H

#include "runtime/CompiledModel.h"
#include "runtime/cpu/CpuModel.h"
#include "runtime/data/Dataset.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tcc::test {

/// The default recipe: 2 epochs, seed 7, drop_last, batch 8, flip and
/// translate augmentation, normalisation mean 0.5 std 0.25, eval batch 5;
/// train.precision when `precision` is given.
rt::Recipe fakeRecipe(const std::string &dataPath = "/nonexistent", double epochs = 2,
                      const std::string &precision = "");

/// Follows the step contract as generated code does: it gathers its own
/// batches from the bound data (runtime/cpu/Batch.h) and keeps its totals in
/// the bound control block.
class FakeModel : public rt::CpuModel {
public:
  /// Input [1, side, side] (D = side*side), `classes` classes.
  explicit FakeModel(rt::Recipe recipe = fakeRecipe(), int64_t side = 4,
                     int64_t classes = 3, int64_t batch = 8,
                     int64_t evalBatch = 5);

  const rt::ModelInfo &info() const override { return mi; }
  void trainStep() override;
  void evalStep() override;

  rt::ModelInfo mi;
  int64_t trainCalls = 0, evalCalls = 0;
  /// The base learning rate; 1e38 makes the weights overflow and the loss
  /// NaN within a few steps (a diverging run).
  float learningRate = 0.1f;
  /// Called at the end of every train step with the new step count (tests
  /// interrupt the run, or take its save directory away, from here).
  std::function<void(int64_t step)> afterStep;
  /// The batch the last step gathered.
  std::vector<float> images;
  std::vector<int64_t> labels;

private:
  template <typename T> T *at(void *state, const char *name);
  int64_t d, k;
};

/// A learnable in-memory data set: `train` and `test` samples of
/// [1, side, side] u8 images, label i % classes.
rt::DataSplit makeFakeData(int64_t train = 40, int64_t test = 13,
                           int64_t side = 4, int64_t classes = 3);

/// Writes `data` as the "npy" format of runtime/data (train_x.npy, ...)
/// into directory `dir`.
void writeNpyDataset(const std::string &dir, const rt::DataSplit &data);

/// A fresh temporary directory, removed with its contents on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &contents);

} // namespace tcc::test

#endif // TCC_TEST_RUNTIME_TRAINER_FAKEMODEL_H
