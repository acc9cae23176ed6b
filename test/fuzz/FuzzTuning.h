//===- FuzzTuning.h - Mutated tuning files through --tuning-db --*- C++ -*-===//
//
// Private to tcc-fuzz-frontend: its --tuning mode (FuzzTuning.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TEST_FUZZ_FUZZTUNING_H
#define TCC_TEST_FUZZ_FUZZTUNING_H

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tcc::fuzz {

struct TuningFuzz {
  nlohmann::json tuning; ///< the tuning file the mutants start from
  /// A model's cuda step before planning (the convolutions are baked
  /// there) and after it (the matmuls), as tcc compile bakes them.
  mlir::ModuleOp step, planned;
  uint64_t cases = 0, seed = 1;
  std::optional<uint64_t> only; ///< --case
  bool print = false, verbose = false;
  unsigned timeout = 60; ///< seconds per case
};

/// Runs the cases; 0 when every one succeeded or gave one error line.
int fuzzTuning(const TuningFuzz &options);

} // namespace tcc::fuzz

#endif // TCC_TEST_FUZZ_FUZZTUNING_H
