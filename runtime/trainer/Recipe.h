//===- Recipe.h - What the trainer reads of the compiled recipe -*- C++ -*-===//
#ifndef TCC_RUNTIME_TRAINER_RECIPE_H
#define TCC_RUNTIME_TRAINER_RECIPE_H

#include "runtime/data/Dataset.h"

#include <cstdint>
#include <string>

namespace tcc::rt {

/// What the trainer reads from ModelInfo::recipeJson (sections train, data,
/// eval); missing fields keep these defaults.
struct Recipe {
  double epochs = 1;
  uint64_t seed = 0;
  bool dropLast = true;
  int64_t batchSize = 0; ///< train.batch_size (informational)
  std::string precision = "fp32"; ///< train.precision, for checkpoints
  std::string dataFormat, dataPath;
  AugmentConfig augment;
  NormalizeConfig normalize;
  int64_t evalBatchSize = 0;
};

/// Parses `json` (empty text counts as {}); false with `error` one line.
bool parseRecipe(const std::string &json, Recipe &out, std::string &error);

/// ceil(epochs * stepsPerEpoch), where a product within 1e-9 (relative) of
/// an integer counts as that integer (0.3 * 10 is 3 steps, not 4).
int64_t totalStepsFor(double epochs, int64_t stepsPerEpoch);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_RECIPE_H
