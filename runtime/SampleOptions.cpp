//===- SampleOptions.cpp - The sampler's command line ---------------------===//

#include "runtime/SampleOptions.h"
#include "runtime/trainer/Text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <vector>

namespace tcc::rt {

namespace {

const char *const kNames[] = {"--checkpoint", "--vocab", "--prompt", "--length",
                              "--temperature", "--top-k", "--seed", "--logits", "--help"};

std::string closest(const std::string &name) {
  return closestMatch(name, std::vector<std::string>(std::begin(kNames), std::end(kNames)));
}

/// A decimal integer >= `least` (no sign, no spaces).
bool parseCount(const std::string &text, int64_t least, int64_t &out) {
  uint64_t v;
  if (!parseUnsigned(text, v) || v > uint64_t(INT64_MAX) || int64_t(v) < least)
    return false;
  out = int64_t(v);
  return true;
}

std::string quoted(const std::string &text) { return "'" + oneLine(text) + "'"; }

} // namespace

bool parseSampleOptions(const std::vector<std::string> &args, SampleOptions &out,
                        std::string &error) {
  out = SampleOptions();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      error = "unexpected argument " + quoted(arg) + " (options start with '--'; see --help)";
      return false;
    }
    std::string name = arg;
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (std::find(std::begin(kNames), std::end(kNames), name) == std::end(kNames)) {
      error = "unknown option " + quoted(name) + "; did you mean '" + closest(name) + "'?";
      return false;
    }
    if (!value) {
      // A prompt may start with "--"; the other values never do.
      if (i + 1 >= args.size() ||
          (name != "--prompt" && args[i + 1].compare(0, 2, "--") == 0)) {
        error = name + " needs a value (" + name + " VALUE or " + name + "=VALUE)";
        return false;
      }
      value = args[++i];
    }
    const std::string &v = *value;
    if (name == "--checkpoint" || name == "--vocab" || name == "--logits") {
      if (v.empty()) {
        error = name + ": expected a path, got an empty value";
        return false;
      }
      (name == "--checkpoint" ? out.checkpoint : name == "--vocab" ? out.vocab : out.logits) = v;
    } else if (name == "--prompt") {
      out.prompt = v;
    } else if (name == "--length" || name == "--top-k") {
      bool length = name == "--length";
      int64_t n;
      if (!parseCount(v, length ? 1 : 0, n)) {
        error = name + ": expected " +
                (length ? "a positive integer" : "a non-negative integer (0: no limit)") +
                ", got " + quoted(v);
        return false;
      }
      (length ? out.length : out.topK) = n;
    } else if (name == "--temperature") {
      errno = 0;
      char *end = nullptr;
      double t = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || errno || !std::isfinite(t) || t < 0) {
        error = "--temperature: expected a number >= 0 (0: greedy), got " + quoted(v);
        return false;
      }
      out.temperature = t;
    } else if (name == "--seed") {
      errno = 0;
      char *end = nullptr;
      unsigned long long s = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || *end ||
          errno) {
        error = "--seed: expected a non-negative integer below 2^64, got " + quoted(v);
        return false;
      }
      out.seed = s;
    }
  }
  if (out.help)
    return true;
  if (out.checkpoint.empty() || out.vocab.empty()) {
    error = std::string("give ") +
            (out.checkpoint.empty() && out.vocab.empty() ? "--checkpoint FILE and --vocab FILE"
             : out.checkpoint.empty()                    ? "--checkpoint FILE"
                                                         : "--vocab FILE") +
            " (see --help)";
    return false;
  }
  return true;
}

std::string sampleHelp(const std::string &usage) {
  return "Usage: " + usage + R"( --checkpoint FILE --vocab VOCAB.json [options]

Continues a prompt with text sampled from a character-level language model
(a token input, loss.targets "sequence"): one character at a time, each
drawn from the model's next-character distribution over the last T
characters (T: the model's input length), evaluated as the trainer evaluates
(running statistics, no dropout, the EMA weights if the recipe keeps them).
Prints the prompt and the sample (docs/training.md, "Sampling from a
language model").

Options:
  --checkpoint FILE      the weights: a checkpoint of ./train --save, or a
                         PyTorch-style state_dict (as ./train --init takes)
  --vocab VOCAB.json     the id -> character list (scripts/text_to_npy.py
                         writes it beside the data)
  --prompt TEXT          the text to continue, every character in the
                         vocabulary (default: a newline)
  --length N             characters to generate (default 200)
  --temperature T        divides the logits before the softmax; 0 takes the
                         most likely character every time (default 1)
  --top-k K              draw among the K most likely characters only
                         (default 0: all of them)
  --seed S               seed of the draws: the same seed gives the same text
                         on any machine and thread count (default 0)
  --logits FILE.npy      also write the logits each character was drawn
                         from: float32 [length, vocabulary size], row i
                         those of generated character i (before the
                         temperature)
  -h, --help             show this help

Errors print one line 'error: ...' and exit with status 1.
)";
}

} // namespace tcc::rt
