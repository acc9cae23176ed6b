//===- Sample.h - ./train sample: text from a language model ----*- C++ -*-===//
//
// The trainer's `sample` command (what `tcc sample` runs): the weights of a
// checkpoint in the state arena, then one predictStep() per generated
// character over the last T characters (docs/training.md, "Sampling from a
// language model").
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_SAMPLE_H
#define TCC_RUNTIME_TRAINER_SAMPLE_H

#include "runtime/CompiledModel.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tcc::rt {

/// The id drawn from `logits` (`count` of them): the largest (the lowest id
/// among equals) at temperature 0; else softmax(logits / temperature) over
/// the `topK` largest (0: all; the lower id first among equals), drawn with
/// the uniform number of counterRandom(streamKey(seed, kSampleStream, 0),
/// `index`, 0) (runtime/common/CounterRng.h) in double precision.
int64_t drawToken(const float *logits, int64_t count, double temperature, int64_t topK,
                  uint64_t seed, uint64_t index);

/// `./train sample ARGS` (args after "sample"): prints the prompt and the
/// sample on `out`; throws the trainer's UserError (one line) on a mistake.
/// `program` names the trainer in --help.
int runSample(CompiledModel &model, const std::vector<std::string> &args, std::ostream &out,
              std::ostream &err, const std::string &program);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_SAMPLE_H
