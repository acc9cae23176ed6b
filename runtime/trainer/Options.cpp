//===- Options.cpp - The trainer's command line ----------------------------===//

#include "runtime/trainer/Options.h"

#include "runtime/comm/Communicator.h"
#include "runtime/trainer/Text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace tcc::rt {

namespace {

struct OptionSpec {
  const char *name;
  const char *metavar; ///< nullptr: a flag without a value
};

const OptionSpec kOptions[] = {
    {"--data", "PATH"},       {"--epochs", "N"},
    {"--steps", "N"},         {"--batch-size", "N"},
    {"--seed", "S"},          {"--init", "FILE.safetensors"},
    {"--save", "FILE.safetensors"}, {"--resume", "FILE"},
    {"--metrics", "FILE.jsonl"},    {"--log-every", "N"},
    {"--checkpoint-every", "N|Nm"}, {"--eval", "ema|raw|both"},
    {"--tta", "on|off"},              {"--profile", "FILE.json"},
    {"--comm-timeout", "SECONDS"},
    {"--no-shuffle", nullptr},
    {"--no-augment", nullptr}, {"--eval-only", nullptr},
    {"--quiet", nullptr},     {"--help", nullptr},
};

const OptionSpec *findOption(const std::string &name) {
  for (const OptionSpec &o : kOptions)
    if (name == o.name)
      return &o;
  return nullptr;
}

bool parsePositiveInt(const std::string &text, int64_t &out) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ')
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || v < 1)
    return false;
  out = v;
  return true;
}

bool parsePositiveNumber(const std::string &text, double &out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno || *end || !std::isfinite(v) || !(v > 0))
    return false;
  out = v;
  return true;
}

std::string quoteArg(const std::string &s) { return "'" + oneLine(s) + "'"; }

} // namespace

const std::vector<std::string> &optionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const OptionSpec &o : kOptions)
      v.push_back(o.name);
    return v;
  }();
  return names;
}

bool parseOptions(const std::vector<std::string> &args, TrainOptions &out,
                  std::string &error) {
  out = TrainOptions();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "-h") {
      out.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      error = "unexpected argument " + quoteArg(arg) +
              " (options start with '--'; see --help)";
      return false;
    }
    std::string name = arg;
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    const OptionSpec *spec = findOption(name);
    if (!spec) {
      error = "unknown option " + quoteArg(name) + "; did you mean '" +
              closestMatch(name, optionNames()) + "'?";
      return false;
    }
    if (!spec->metavar) {
      if (value) {
        error = name + " takes no value, got " + quoteArg(arg);
        return false;
      }
      if (name == "--no-shuffle")
        out.noShuffle = true;
      else if (name == "--no-augment")
        out.noAugment = true;
      else if (name == "--eval-only")
        out.evalOnly = true;
      else if (name == "--quiet")
        out.quiet = true;
      else if (name == "--help")
        out.help = true;
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size() ||
          (args[i + 1].size() > 2 && args[i + 1].compare(0, 2, "--") == 0)) {
        error = name + " needs a value (" + name + " " + spec->metavar +
                " or " + name + "=" + spec->metavar + ")";
        return false;
      }
      value = args[++i];
    }
    const std::string &v = *value;
    if (name == "--epochs") {
      double e;
      if (!parsePositiveNumber(v, e)) {
        error = "--epochs: expected a positive number, got " + quoteArg(v);
        errno = 0;
        if (std::strtod(v.c_str(), nullptr) > 0 && errno == ERANGE)
          error += " (out of range)";
        return false;
      }
      out.epochs = e;
    } else if (name == "--comm-timeout") {
      double seconds;
      if (!parsePositiveNumber(v, seconds)) {
        error = "--comm-timeout: expected a positive number of seconds (300, 2.5), got " +
                quoteArg(v);
        return false;
      }
      out.commTimeout = seconds;
    } else if (name == "--checkpoint-every") {
      const bool minutes = !v.empty() && v.back() == 'm';
      const std::string number = minutes ? v.substr(0, v.size() - 1) : v;
      double m;
      int64_t n;
      if (minutes && parsePositiveNumber(number, m)) {
        out.checkpointMinutes = m;
      } else if (!minutes && parsePositiveInt(number, n)) {
        out.checkpointEpochs = n;
      } else {
        error = "--checkpoint-every: expected a number of epochs (2) or of "
                "minutes (30m), got " + quoteArg(v);
        return false;
      }
    } else if (name == "--tta") {
      if (v != "on" && v != "off") {
        error = "--tta: expected on or off, got " + quoteArg(v);
        return false;
      }
      out.tta = v == "on";
    } else if (name == "--eval") {
      if (v != "ema" && v != "raw" && v != "both") {
        error = "--eval: expected ema, raw or both, got " + quoteArg(v);
        return false;
      }
      out.eval = v;
    } else if (name == "--steps" || name == "--batch-size" || name == "--log-every") {
      int64_t n;
      if (!parsePositiveInt(v, n)) {
        // Only digits, not zero, and still refused: beyond int64.
        const bool digits =
            !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
        if (digits && v.find_first_not_of('0') != std::string::npos)
          error = name + ": " + v + " is more than the trainer can count "
                  "(at most 9223372036854775807)";
        else
          error = name + ": expected a positive integer, got " + quoteArg(v);
        return false;
      }
      (name == "--steps" ? out.steps : name == "--log-every" ? out.logEvery : out.batchSize) = n;
    } else if (name == "--seed") {
      uint64_t s;
      if (!parseUnsigned(v, s)) {
        error = "--seed: expected a non-negative integer below 2^64, got " +
                quoteArg(v);
        return false;
      }
      out.seed = s;
    } else {
      if (v.empty()) {
        error = name + ": expected a path, got an empty value";
        return false;
      }
      if (name == "--data")
        out.data = v;
      else if (name == "--init")
        out.init = v;
      else if (name == "--save")
        out.save = v;
      else if (name == "--resume")
        out.resume = v;
      else if (name == "--metrics")
        out.metrics = v;
      else if (name == "--profile")
        out.profile = v;
    }
  }
  if ((out.checkpointEpochs || out.checkpointMinutes) && out.save.empty()) {
    error = "--checkpoint-every writes the checkpoint to --save FILE; give "
            "--save too";
    return false;
  }
  if (!out.profile.empty() && out.evalOnly) {
    error = "--profile times the training step; --eval-only runs none";
    return false;
  }
  if (!out.init.empty() && !out.resume.empty()) {
    error = "--init and --resume exclude each other (--resume restores the "
            "whole state, weights included)";
    return false;
  }
  return true;
}

std::string helpText(const std::string &program, const OptionDefaults &d) {
  std::string epochs = nlohmann::json(d.epochs).dump();
  std::string out;
  out += "usage: " + program + " [options]\n";
  out += "\nTrains the model '" + d.model +
         "' (compiled by tcc) and evaluates it on the test set after every "
         "epoch.\n";
  out += "\noptions:\n";
  auto line = [&](const std::string &left, const std::string &right) {
    std::string l = "  " + left;
    if (l.size() < 30)
      l += std::string(30 - l.size(), ' ');
    else
      l += "\n" + std::string(30, ' ');
    out += l + right + "\n";
  };
  line("--data PATH", "data set directory (default: " + d.dataPath +
                          ", format " + d.dataFormat + ")");
  line("--epochs N", "epochs to train, may be fractional; sets the schedule "
                     "(default: " + epochs + ")");
  line("--steps N", "stop after N optimizer steps in this run (the schedule "
                    "still spans --epochs; default: no limit)");
  line("--batch-size N", "must equal the compiled batch size (default: " +
                             std::to_string(d.batchSize) +
                             "; to change it, recompile with `tcc compile "
                             "MODEL.json --batch-size N`)");
  line("--seed S", "seed of initialisation, shuffling and augmentation "
                   "(default: " + std::to_string(d.seed) +
                       "; with --resume: the checkpoint's)");
  line("--init FILE.safetensors", "start from these weights (a PyTorch-style "
                                  "state_dict) instead of the model's init");
  line("--save FILE.safetensors", "write a checkpoint at the end of the run "
                                  "(also when --steps stops it)");
  line("--resume FILE", "continue the run saved in this checkpoint, exactly "
                        "as if never interrupted");
  line("--metrics FILE.jsonl", "append one JSON line of metrics per epoch "
                               "(a fresh run truncates the file first)");
  line("--log-every N", "also a step record of the training metrics every N "
                        "steps (docs/training.md#metrics)");
  line("--checkpoint-every N|Nm",
       "also write the checkpoint to --save every N epochs, or every N "
       "minutes (30m), each atomically over the last");
  line("--eval ema|raw|both",
       std::string("evaluate the EMA weights, the raw weights, or both (") +
           (d.hasEma ? "default: ema" : "this model keeps no EMA: raw only") + ")");
  line("--tta on|off",
       std::string("average the recipe's test-time-augmentation views in the "
                   "evaluation, or not (") +
           (d.hasTta ? "default: on" : "this model has no TTA (eval.tta): off only") + ")");
  line("--profile FILE.json",
       "time every op of the training steps (after the first) and write the "
       "times per op to FILE.json; steps then run one by one (a cuda trainer "
       "without its CUDA graph), slower than a normal run "
       "(docs/training.md#profiling-a-step)");
  line("--comm-timeout SECONDS",
       "how long a rank waits for the others in a collective before it stops "
       "the job (naming the ranks that did not come, died or hang, where MPI "
       "carries the collectives); raise it "
       "if --save writes take longer (default: " +
           std::to_string(static_cast<int>(kDefaultCommTimeoutSeconds)) +
           (d.ranks > 1 ? "; docs/distributed.md#faults)"
                        : "; this trainer runs as one process: no effect)"));
  line("--no-shuffle", "keep the training set in file order");
  line("--no-augment", "turn the recipe's data augmentation off");
  line("--eval-only", "evaluate on the test set without training");
  line("--quiet", "print nothing but errors (metrics still go to --metrics)");
  line("--help", "show this help");
  out += "\nValues may also be given as --opt=value. Errors print one line "
         "'error: ...' and exit with status 1.\n";
  if (d.samples)
    out += "\n" + program + " sample --help: text sampled from this language model.\n";
  return out;
}

} // namespace tcc::rt
