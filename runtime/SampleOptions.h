//===- SampleOptions.h - The sampler's command line ------------*- C++ -*-===//
//
//   tcc sample MODEL.json  --checkpoint FILE --vocab VOCAB.json [--prompt TEXT]
//   ./train sample         [--length N] [--temperature T] [--top-k K] [--seed S]
//                          [--logits FILE.npy]
//
// One parser for both: `tcc sample` checks the command line before it
// builds the trainer, whose `sample` command parses it again and samples
// (runtime/trainer/Sample.cpp; docs/training.md "Sampling from a language
// model"). Plain C++ without exceptions: tcc links it too.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_SAMPLEOPTIONS_H
#define TCC_RUNTIME_SAMPLEOPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcc::rt {

struct SampleOptions {
  std::string checkpoint; ///< weights: a tcc checkpoint or a state_dict
  std::string vocab;      ///< the id -> character list (scripts/text_to_npy.py)
  /// The text the sample continues; unset: a newline.
  std::optional<std::string> prompt;
  int64_t length = 200;     ///< characters to generate (>= 1)
  double temperature = 1.0; ///< >= 0; 0: the most likely character (greedy)
  int64_t topK = 0;         ///< >= 0; 0: every character of the vocabulary
  uint64_t seed = 0;        ///< the draws' (counter-based, CounterRng.h)
  /// Where to write the logits each character was drawn from, an NPY
  /// array [length, vocab] of float32; empty: not written.
  std::string logits;
  bool help = false;
};

/// Parses `args` (after "sample", and after MODEL.json for tcc). On failure
/// returns false with `error` one line without "error: ".
bool parseSampleOptions(const std::vector<std::string> &args, SampleOptions &out,
                        std::string &error);

/// The --help text; `usage` is the command before the options, e.g.
/// "tcc sample MODEL.json" or "./train sample".
std::string sampleHelp(const std::string &usage);

} // namespace tcc::rt

#endif // TCC_RUNTIME_SAMPLEOPTIONS_H
