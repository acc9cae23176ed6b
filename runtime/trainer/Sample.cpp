//===- Sample.cpp - ./train sample: text from a language model ------------===//
//
// The window: the model reads T characters. A sequence shorter than T sits
// at positions 0..L-1 (the positions it was trained at) and the rest is
// padded with id 0; a causal model's logits at L-1 do not see the padding.
// A longer sequence gives its last T characters, and the logits at T-1.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Sample.h"

#include "runtime/AtomicFile.h"
#include "runtime/SampleOptions.h"
#include "runtime/common/CounterRng.h"
#include "runtime/trainer/Checkpoint.h"
#include "runtime/trainer/Init.h"
#include "runtime/trainer/Memory.h"
#include "runtime/trainer/Run.h"
#include "runtime/trainer/Text.h"
#include "runtime/trainer/Vocabulary.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

namespace tcc::rt {

using detail::fail;

int64_t drawToken(const float *logits, int64_t count, double temperature, int64_t topK,
                  uint64_t seed, uint64_t index) {
  // Largest first, the lower id first among equals: the same order anywhere.
  std::vector<int64_t> ids(static_cast<size_t>(count));
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  if (temperature == 0)
    return ids.front();
  if (topK > 0 && topK < count)
    ids.resize(static_cast<size_t>(topK));
  std::sort(ids.begin(), ids.end()); // the cumulative sum in id order
  double top = logits[ids.front()];
  for (int64_t id : ids)
    top = std::max(top, double(logits[id]));
  std::vector<double> weights;
  double total = 0;
  for (int64_t id : ids) {
    weights.push_back(std::exp((double(logits[id]) - top) / temperature));
    total += weights.back();
  }
  uint64_t r = rng::counterRandom(rng::streamKey(seed, rng::kSampleStream, 0), index, 0);
  double u = double(r >> 11) * 0x1.0p-53 * total;
  double sum = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    sum += weights[i];
    if (u < sum)
      return ids[i];
  }
  return ids.back(); // u within rounding of the total
}

namespace {

/// What the model must be for the sampler: a next-token model with a
/// predict step (a token model compiled for the cpu target).
void checkModel(const ModelInfo &info) {
  const std::string model = "the model '" + oneLine(info.name) + "'";
  if (info.vocab == 0)
    fail(model + " has no token input (input.type \"tokens\"): sample needs a language model");
  if (info.sequenceTargets == 0 || info.classes != info.vocab)
    fail(model + " does not predict the next token at every position (loss.targets "
                 "\"sequence\" with classes equal to the vocabulary): sample needs one that does");
  if (info.predictBatch == 0)
    fail(model + " has no predict step in this " + info.target +
         " trainer (the cpu target builds one for a model whose parameters are not "
         "sharded): tcc sample builds a cpu trainer of one rank");
}

/// The weights of `path`: a tcc checkpoint of this model whole (the EMA
/// weights the evaluation reads among them), else a state_dict as --init
/// takes it, whose checks give the error.
void loadWeights(const ModelInfo &info, const std::string &path, void *state,
                 std::ostream &err) {
  std::string error;
  if (!initializeState(info, state, info.recipe.train.seed, nullptr, error))
    fail(error);
  CheckpointMeta meta;
  std::vector<std::string> notes;
  if (loadCheckpoint(path, info, state, meta, error)) {
    notes = foldRemovedBiases(info, state);
  } else {
    error.clear();
    std::vector<std::string> converted;
    if (!loadStateDict(path, info, state, nullptr, error, &converted))
      fail(error);
    if (!converted.empty())
      notes.push_back(std::to_string(converted.size()) +
                      " tensor(s) rounded to the type the model stores them in: " +
                      converted.front() + (converted.size() > 1 ? ", ..." : ""));
    for (const std::string &note : foldRemovedBiases(info, state))
      notes.push_back(note);
    if (!applyCopyInits(info, state, error))
      fail(error);
    if (std::any_of(info.state.begin(), info.state.end(),
                    [](const StateTensor &t) { return t.role == StateRole::Ema; }))
      notes.push_back("a state_dict, not a checkpoint of this model: the sample uses its "
                      "parameters where the evaluation would use the EMA weights");
  }
  for (const std::string &note : notes)
    err << "note: '" << oneLine(path) << "': " << note << "\n";
}

/// An NPY file (format 1.0) of float32 `values` of shape [rows, columns].
std::string npyText(const std::vector<float> &values, int64_t rows, int64_t columns) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(columns) + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  std::string text = std::string("\x93NUMPY\x01\x00", 8);
  text += static_cast<char>(header.size() & 0xff);
  text += static_cast<char>(header.size() >> 8);
  text += header;
  text.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
  return text;
}

} // namespace

int runSample(CompiledModel &model, const std::vector<std::string> &args, std::ostream &out,
              std::ostream &err, const std::string &program) {
  SampleOptions opts;
  std::string error;
  if (!parseSampleOptions(args, opts, error))
    fail(error);
  if (opts.help) {
    out << sampleHelp(program + " sample");
    return 0;
  }
  const ModelInfo &info = model.info();
  checkModel(info);
  Vocabulary vocab;
  if (!vocab.load(opts.vocab, error))
    fail(error);
  if (vocab.size() != info.vocab)
    fail("--vocab '" + oneLine(opts.vocab) + "' lists " + std::to_string(vocab.size()) +
         " characters; the model's vocabulary has " + std::to_string(info.vocab));
  std::vector<int64_t> sequence;
  if (!opts.prompt) {
    if (vocab.find("\n") < 0)
      fail("give --prompt TEXT: the vocabulary has no newline to start from");
    sequence.push_back(vocab.find("\n"));
  } else if (!vocab.encode(*opts.prompt, sequence, error)) {
    fail(error);
  } else if (sequence.empty()) {
    fail("--prompt: give at least one character to continue");
  }

  // predictBatch > 0: a cpu model, whose arenas are host memory.
  detail::Buffer state(hostMemory(), info.stateBytes, "state arena");
  detail::Buffer scratch(hostMemory(), info.scratchBytes, "scratch arena");
  loadWeights(info, opts.checkpoint, state.get(), err);
  const int64_t window = info.sequenceTargets, classes = info.classes;
  std::vector<int64_t> tokens(static_cast<size_t>(info.predictBatch * window), 0);
  std::vector<float> logits(static_cast<size_t>(info.predictBatch * window * classes));
  StepControl control;
  control.run.seed = info.recipe.train.seed;
  StepBuffers b;
  b.state = state.get();
  b.scratch = scratch.get();
  b.control = &control;
  b.predict.tokens = tokens.data();
  b.predict.logits = logits.data();
  model.bind(b);

  std::vector<float> drawnFrom; // --logits: the rows drawn from
  for (int64_t i = 0; i < opts.length; ++i) {
    const size_t start = sequence.size() > size_t(window) ? sequence.size() - window : 0;
    const int64_t used = static_cast<int64_t>(sequence.size() - start);
    std::fill(tokens.begin(), tokens.end(), 0);
    std::copy(sequence.begin() + start, sequence.end(), tokens.begin());
    model.predictStep();
    const float *row = logits.data() + (used - 1) * classes;
    if (!opts.logits.empty())
      drawnFrom.insert(drawnFrom.end(), row, row + classes);
    sequence.push_back(drawToken(row, classes, opts.temperature, opts.topK, opts.seed, uint64_t(i)));
  }
  if (!opts.logits.empty() &&
      !writeFileAtomically(opts.logits, npyText(drawnFrom, opts.length, classes), error))
    fail("--logits: " + error);
  out << vocab.decode(sequence) << "\n";
  out.flush();
  return 0;
}

} // namespace tcc::rt
