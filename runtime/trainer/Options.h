//===- Options.h - The trainer's command line -----------------*- C++ -*-===//
//
//   train [--data PATH] [--epochs N] [--steps N] [--batch-size N] [--seed S]
//         [--init FILE.safetensors] [--save FILE.safetensors]
//         [--resume FILE] [--metrics FILE.jsonl] [--log-every N]
//         [--checkpoint-every N|Nm] [--eval ema|raw|both] [--tta on|off]
//         [--profile FILE.json] [--comm-timeout SECONDS] [--no-shuffle]
//         [--no-augment] [--eval-only] [--quiet] [--help]
//
// `train sample ...` is another command: runtime/trainer/Sample.h.
//
// Values are given as "--opt value" or "--opt=value". Parsing checks only
// the command line itself; checks against the model (batch size) are the
// trainer's.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_OPTIONS_H
#define TCC_RUNTIME_TRAINER_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcc::rt {

struct TrainOptions {
  std::optional<std::string> data;   ///< overrides the recipe's data.path
  std::optional<double> epochs;      ///< > 0, may be fractional
  std::optional<int64_t> steps;      ///< >= 1: stop after this many steps
  std::optional<int64_t> batchSize;  ///< must equal the compiled one
  std::optional<uint64_t> seed;
  std::string init, save, resume, metrics; ///< empty: not given
  std::string profile;               ///< --profile FILE.json; empty: not given
  std::optional<int64_t> logEvery;   ///< a step record every N steps
  /// --checkpoint-every: a checkpoint to --save every N epochs, or every N
  /// minutes ("10m").
  std::optional<int64_t> checkpointEpochs;
  std::optional<double> checkpointMinutes;
  std::string eval;                  ///< ema | raw | both; "": the default
  std::optional<bool> tta;           ///< --tta on|off; unset: as compiled
  /// --comm-timeout: seconds a rank of a distributed run waits for the
  /// others in a collective (> 0); unset: kDefaultCommTimeoutSeconds.
  std::optional<double> commTimeout;
  bool noShuffle = false, noAugment = false, evalOnly = false, quiet = false;
  bool help = false;
};

/// What --help shows as defaults (from the compiled model and its recipe).
struct OptionDefaults {
  std::string model;
  std::string dataFormat, dataPath;
  double epochs = 1;
  int64_t batchSize = 0;
  uint64_t seed = 0;
  bool hasEma = false; ///< the model keeps EMA weights (--eval's default)
  bool hasTta = false; ///< the evaluation averages TTA views (--tta's default)
  int64_t ranks = 1;   ///< the processes it was compiled for (--comm-timeout)
  bool samples = false; ///< the model has a predict step (`sample`)
};

/// The option names, "--data" ... "--help".
const std::vector<std::string> &optionNames();

/// Parses `args` (without the program name). On failure returns false with
/// `error` one line (without the "error: " prefix), e.g.
///   unknown option '--epoch'; did you mean '--epochs'?
///   --epochs: expected a positive number, got 'x'
bool parseOptions(const std::vector<std::string> &args, TrainOptions &out,
                  std::string &error);

/// The --help text (several lines, ends with a newline).
std::string helpText(const std::string &program, const OptionDefaults &d);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_OPTIONS_H
