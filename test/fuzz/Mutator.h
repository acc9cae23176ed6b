//===- Mutator.h - Structured mutations of a model.json ---------*- C++ -*-===//
//
// Private to tcc-fuzz-frontend. A mutation edits the parsed document the way
// a user (or a broken generator) would get a model wrong: numbers at the edge
// of every range, fields dropped, duplicated or of another type, ops swapped,
// nodes deleted, renamed or rewired, deep nesting, damaged text.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TEST_FUZZ_MUTATOR_H
#define TCC_TEST_FUZZ_MUTATOR_H

#include <nlohmann/json.hpp>

#include <random>
#include <string>

namespace tcc::fuzz {

struct Mutant {
  std::string text; ///< the model.json to compile
  std::string what; ///< the mutations applied, one phrase each, for reports
};

/// One to three mutations of `model`, drawn from `rng` alone (so a case is
/// reproduced by its seed).
Mutant mutate(const nlohmann::json &model, std::mt19937_64 &rng);

} // namespace tcc::fuzz

#endif // TCC_TEST_FUZZ_MUTATOR_H
