//===- CompileOptions.cpp - The command line of `tcc compile` -------------===//

#include "tools/tcc/CompileOptions.h"
#include "tools/tcc/BuildTrainer.h"
#include "tools/tcc/DefaultTarget.h"
#include "runtime/InputFile.h"

#include "target/TargetBackend.h"
#include "frontend/ModelSpec.h"
#include "passes/InitAll.h"
#ifdef TCC_HAVE_CUDA
#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/TuningFile.h"
#endif

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace tcc;

namespace {

const std::vector<std::string> kOptions = {
    "-o",          "--output",        "--emit",       "--target", "--march",
    "--precision", "--memory-budget", "--tuning-db",  "--report", "--help",
    "--disable-pass", "--enable-pass", "--explain", "--batch-size", "--ranks", "--bucket-size", "--gpu", "--allow-fallback",
    "--ignore-tuning-mismatch", "--time-phases", "--mlir-print-debuginfo"};

/// A -march value for the C++ compiler: a plain word, so that it cannot
/// smuggle another option in.
bool isMarchName(const std::string &value) {
  if (value.empty() || value.size() > 64 || value[0] == '-')
    return false;
  for (char c : value)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' &&
        c != '.')
      return false;
  return true;
}

std::string join(const std::vector<std::string> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + values[i];
  return out;
}

bool oneOf(const std::string &option, const std::string &value,
           const std::vector<std::string> &allowed, std::string &error) {
  for (const std::string &a : allowed)
    if (value == a)
      return true;
  std::string hint = frontend::closestMatch(value, allowed);
  error = option + "=" + value + ": expected one of " + join(allowed) +
          (hint.empty() ? "" : "; did you mean '" + hint + "'?");
  return false;
}

using mlir::tcc::TargetBackend;

/// The names of the registered targets that take the option `takes` reads.
std::vector<std::string> targetNames(bool (*takes)(const TargetBackend::Takes &)) {
  std::vector<std::string> names;
  for (const TargetBackend *target : mlir::tcc::registeredTargetBackends())
    if (takes(target->takes()))
      names.push_back(target->name().str());
  return names;
}

/// The first registered target that takes the option `takes` reads.
std::string targetTaking(bool (*takes)(const TargetBackend::Takes &)) {
  std::vector<std::string> names = targetNames(takes);
  return names.empty() ? "" : names.front();
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string parentOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Whether a file can be created in `dir`, found by creating one (access()
/// is wrong for root, read-only mounts and immutable folders); named as
/// AtomicFile's temporaries of `path`, so a killed tcc's is swept later.
bool checkWritableIn(const std::string &option, const std::string &path,
                     const std::string &dir, std::string &error) {
  std::string probe = dir + "/" + llvm::sys::path::filename(path).str() + ".tmp." +
                      std::to_string(getpid()) + ".XXXXXX";
  int fd = mkstemp(probe.data());
  if (fd < 0) {
    error = option + " " + path + ": cannot write in directory '" + dir + "': " +
            std::strerror(errno);
    return false;
  }
  close(fd);
  unlink(probe.c_str());
  return true;
}

/// An output path is usable if its directory exists and takes new files,
/// and it is not a directory itself; checked before compiling, so that a
/// typo or a read-only folder costs nothing and no output is written
/// before another turns out unwritable.
bool checkOutputPath(const std::string &option, const std::string &path,
                     std::string &error) {
  if (isDirectory(path)) {
    error = option + " " + path + ": is a directory; give a file name";
    return false;
  }
  if (!isDirectory(parentOf(path))) {
    error = option + " " + path + ": directory '" + parentOf(path) +
            "' does not exist";
    return false;
  }
  // An existing device or FIFO (/dev/null) is written in place.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return true;
  return checkWritableIn(option, path, parentOf(path), error);
}

/// -o DIR of --emit=source-tree: the tree is built beside DIR and moved
/// into it (SourceTree.cpp checks what an earlier DIR holds).
bool checkTreePath(const std::string &path, std::string &error) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (!isDirectory(parentOf(dir))) {
    error = "-o " + path + ": directory '" + parentOf(dir) + "' does not exist";
    return false;
  }
  return checkWritableIn("-o", dir, parentOf(dir), error) &&
         (!isDirectory(dir) || checkWritableIn("-o", dir, dir, error));
}

/// Two paths that name one file (through links, `./`, ...). Only existing
/// files can be the same file.
bool sameFile(const std::string &a, const std::string &b) {
  if (a == b)
    return true;
  bool same = false;
  return !llvm::sys::fs::equivalent(a, b, same) && same;
}

/// The file of --tuning-db reads as a tuning file (into `text`), before any
/// work; whether it fits --gpu and this cuDNN is checked where the plans are
/// baked (tcc-cuda-select-algorithms, which reads it the same way). Only a regular file of at most
/// kMaxTuningFileBytes is read.
bool checkTuningDb(const std::string &path, std::string &text, std::string &error) {
  if (!llvm::sys::fs::exists(path)) {
    error = "--tuning-db " + path + ": cannot read the file; run 'tcc tune' "
            "on the target GPU to create it, or leave the option out";
    return false;
  }
  if (!tcc::readInputFile(path, "tuning file", tcc::kMaxTuningFileBytes, text, error)) {
    error = "--tuning-db: " + error;
    return false;
  }
#ifdef TCC_HAVE_CUDA
  tcc::cuda::TuningFile file;
  if (!tcc::cuda::parseTuningFile(text, path, file, error)) {
    error = "--tuning-db " + error;
    return false;
  }
  return true;
#else
  error = "--tuning-db " + path + ": this tcc was built without CUDA and cannot bake "
          "cuDNN engines; run scripts/setup.sh and rebuild";
  return false;
#endif
}

} // namespace

namespace {
/// The optimization passes' names, for the help.
std::string passNames() {
  std::string names;
  for (llvm::StringRef pass : mlir::tcc::optimizationPassNames())
    names += (names.empty() ? "" : ", ") + pass.str();
  return names;
}

std::string offPassNames() {
  std::string names;
  for (llvm::StringRef pass : mlir::tcc::offByDefaultPassNames())
    names += (names.empty() ? "" : ", ") + pass.str();
  return names.empty() ? "none" : names;
}

/// The --gpu choices of the help.
std::string gpuHelp() {
#ifdef TCC_HAVE_CUDA
  return tcc::cuda::gpuChoices();
#else
  return "none: this tcc was built without CUDA";
#endif
}

/// The --target lines of the help, from the target registry.
std::string targetHelp() {
  std::string names, lines;
  for (const TargetBackend *target : mlir::tcc::registeredTargetBackends()) {
    names += (names.empty() ? "" : " | ") + target->name().str();
    lines += "\n                         " + target->name().str() + ": " +
             target->summary().str();
  }
  return names + " (default: cuda where this tcc has nvcc and the NVIDIA driver\n"
                 "                         shows a GPU, else cpu; here: " +
         tcc::chooseDefaultTarget().name + ")" + lines;
}
} // namespace

std::string tcc::compileHelp() {
  return std::string(R"(Usage: tcc compile MODEL.json [options]

Compiles a model and its training recipe (docs/model-format.md) into a
standalone trainer, or into an intermediate form.

Options:
  -o, --output=FILE      where to write the result ('-' = stdout); default:
                         stdout, and ./NAME (the model's name) for --emit=exe
  --emit=KIND            mlir          the frontend's tcc IR (@forward, @loss)
                         planned-mlir  the IR after autodiff and memory
                                       planning (@train_step, @eval_step)
                         source        the generated C++/CUDA source
                         source-tree   a folder (-o DIR) with the source,
                                       the runtime and a CMake project
                                       that builds the trainer without
                                       tcc or MLIR (on a GPU machine)
                         exe           a trainer executable (default)
                         conv-plans    the cuDNN engine chosen for each
                                       convolution of the step on --gpu,
                                       as JSON (implies --target=cuda;
                                       docs/cuda.md)
  --target=TARGET        )") + targetHelp() + R"(
  --march=ARCH           instruction set of a cpu trainer, as the C++
                         compiler's -march (default: native, the machine
                         that compiles it; x86-64 or x86-64-v3 for a
                         trainer that runs on other machines)
  --precision=P          fp32 | fp16-mixed | bf16-mixed | fp16 | bf16;
                         overrides train.precision of the model (the -mixed
                         modes run conv and linear in 16 bits with f32
                         master weights; fp16-mixed adds dynamic loss
                         scaling, train.loss_scale; fp16 and bf16 also store
                         those layers' parameters, gradients and optimizer
                         state in 16 bits, as model.half())
  --batch-size=N         samples per training step; overrides
                         train.batch_size of the model (the step is compiled
                         for one batch size)
  --ranks=N              processes that share each step's batch (mpirun -np
                         N ./train); overrides train.distributed.ranks
                         (docs/distributed.md)
  --bucket-size=SIZE     gradients a step of several ranks sums over them in
                         one message, at most (default 25MiB, as PyTorch
                         DDP's bucket_cap_mb; the first bucket at most
                         1MiB); each bucket starts as soon as the backward
                         has computed its gradients (docs/passes.md)
  --memory-budget=SIZE   memory the step may use, e.g. 8GiB, 512MiB, 2GB or
                         a byte count; overrides train.memory_budget: forward
                         values are recomputed in the backward until the
                         planned step fits, or the compile fails with the
                         smallest size it can plan
  --gpu=GPU              the GPU the cuda target plans for and builds the
                         trainer for (sm_90a for h100/h200, sm_80 for
                         a100; default: h100): )" + gpuHelp() + R"(
  --allow-fallback       let a cuda trainer use cuDNN's heuristic choice,
                         with a warning, for a convolution whose baked
                         engine cannot run on its GPU or cuDNN (without
                         it, the trainer stops and says to recompile)
  --tuning-db=FILE       the cuDNN engines measured by 'tcc tune' on the
                         GPU of --gpu (docs/tuning.md): baked instead of
                         the heuristics' for every convolution it lists; a
                         file of another GPU or cuDNN is refused
  --ignore-tuning-mismatch
                         ignore such a file with a warning instead
  --disable-pass=NAME    leave out an optimization pass (repeatable): )" +
         passNames() + R"(
                         (docs/passes.md)
  --enable-pass=NAME     add an optimization pass that is off by default
                         (repeatable): )" + offPassNames() + R"( (docs/passes.md)
  --report=FILE          write a JSON report of the compilation
                         (docs/report.md)
  --mlir-print-debuginfo with --emit=mlir or planned-mlir: print each op's
                         location (its model node), which tcc-opt keeps
                         (docs/targets.md)
  --time-phases          print on stderr how long each phase took: the
                         frontend, the passes, code generation, the C++ build
  --explain              print what the compilation did, for a reader: the
                         passes and their results, the kernels of the
                         training step and its fused groups, the memory
                         plan (on stderr, after the outputs are written)
  -h, --help             show this help

Outputs are written only when compilation succeeds, and atomically.
)";
}

ParseResult tcc::parseCompileOptions(const std::vector<std::string> &args,
                                     CompileOptions &options,
                                     std::string &error) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "-h" || arg == "--help")
      return ParseResult::Help;
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (name == "--explain" || name == "--allow-fallback" ||
        name == "--ignore-tuning-mismatch" || name == "--time-phases" ||
        name == "--mlir-print-debuginfo") {
      if (hasValue) {
        error = name + " takes no value; remove '=" + value + "'";
        return ParseResult::Error;
      }
      (name == "--explain"          ? options.explain
       : name == "--allow-fallback" ? options.allowFallback
       : name == "--time-phases"    ? options.timePhases
       : name == "--mlir-print-debuginfo" ? options.printLocations
                                    : options.ignoreTuningMismatch) = true;
      continue;
    }
    if (std::find(kOptions.begin(), kOptions.end(), name) == kOptions.end()) {
      std::string hint = frontend::closestMatch(name, kOptions);
      error = "unknown option '" + name + "'" +
              (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
              " (see 'tcc compile --help')";
      return ParseResult::Error;
    }
    if (!hasValue) {
      if (i + 1 >= args.size()) {
        error = "option " + name + " needs a value (see 'tcc compile --help')";
        return ParseResult::Error;
      }
      value = args[++i];
    }
    if (value.empty()) {
      error = "option " + name + " needs a non-empty value";
      return ParseResult::Error;
    }
    if (name == "-o" || name == "--output") {
      options.output = value;
    } else if (name == "--emit") {
      if (!oneOf(name, value,
                 {"mlir", "planned-mlir", "source", "source-tree", "exe", "conv-plans"}, error))
        return ParseResult::Error;
      options.emit = value;
    } else if (name == "--disable-pass" || name == "--enable-pass") {
      std::vector<std::string> passes;
      for (llvm::StringRef pass : name == "--disable-pass" ? mlir::tcc::optimizationPassNames()
                                                            : mlir::tcc::offByDefaultPassNames())
        passes.push_back(pass.str());
      if (!oneOf(name, value, passes, error))
        return ParseResult::Error;
      (name == "--disable-pass" ? options.disabledPasses : options.enabledPasses)
          .push_back(value);
    } else if (name == "--target") {
      if (!oneOf(name, value, targetNames([](const TargetBackend::Takes &) { return true; }),
                 error))
        return ParseResult::Error;
      options.target = value;
      options.targetGiven = true;
    } else if (name == "--march") {
      if (!isMarchName(value)) {
        error = "--march=" + value +
                ": expected an instruction-set name such as native, x86-64 or "
                "x86-64-v3";
        return ParseResult::Error;
      }
      options.march = value;
      options.marchGiven = true;
    } else if (name == "--precision") {
      if (!oneOf(name, value, {"fp32", "fp16-mixed", "bf16-mixed", "fp16", "bf16"}, error))
        return ParseResult::Error;
      options.precision = ::tcc::rt::Precision::parse(value);
    } else if (name == "--memory-budget") {
      int64_t bytes = 0;
      if (!frontend::parseByteSize(value, bytes)) {
        error = "--memory-budget=" + value +
                ": expected a size such as 8GiB, 512MiB, 2GB or a byte count";
        return ParseResult::Error;
      }
      options.memoryBudget = bytes;
    } else if (name == "--bucket-size") {
      int64_t bytes = 0;
      if (!frontend::parseByteSize(value, bytes) || bytes < 1) {
        error = "--bucket-size=" + value +
                ": expected a positive size such as 25MiB, 4MB or a byte count";
        return ParseResult::Error;
      }
      options.bucketSize = bytes;
    } else if (name == "--batch-size") {
      char *end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (*end != '\0' || n < 1) {
        error = "--batch-size=" + value + ": expected a positive integer";
        return ParseResult::Error;
      }
      options.batchSize = n;
    } else if (name == "--ranks") {
      char *end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 1) {
        error = "--ranks=" + value + ": expected a positive integer";
        return ParseResult::Error;
      }
      options.ranks = n;
    } else if (name == "--gpu") {
#ifdef TCC_HAVE_CUDA
      if (!tcc::cuda::findGpu(value, error)) {
        error = "--gpu=" + value + ": " + error;
        return ParseResult::Error;
      }
#endif
      options.gpu = value;
      options.gpuGiven = true;
    } else if (name == "--tuning-db") {
      options.tuningDb = value;
    } else if (name == "--report") {
      options.report = value;
    }
  }
  if (positional.empty()) {
    error = "no model given; usage: tcc compile MODEL.json [options]";
    return ParseResult::Error;
  }
  if (positional.size() > 1) {
    error = "one model at a time, got '" + positional[0] + "' and '" +
            positional[1] + "'";
    return ParseResult::Error;
  }
  options.model = positional[0];
  bool toFile = !options.output.empty() && options.output != "-";
  if (toFile) {
    if (sameFile(options.output, options.model)) {
      error = "-o " + options.output + " would overwrite the model";
      return ParseResult::Error;
    }
    if (options.emit == "source-tree" ? !checkTreePath(options.output, error)
                                      : !checkOutputPath("-o", options.output, error))
      return ParseResult::Error;
  }
  if (options.report) {
    if (sameFile(*options.report, options.model)) {
      error = "--report " + *options.report + " would overwrite the model";
      return ParseResult::Error;
    }
    if (toFile && (*options.report == options.output ||
                   sameFile(*options.report, options.output))) {
      error = "--report and -o name the same file '" + options.output +
              "'; give the report its own name";
      return ParseResult::Error;
    }
    if (!checkOutputPath("--report", *options.report, error))
      return ParseResult::Error;
  }
  // The trainer's default -o is ./MODEL_NAME.
  if (options.emit == "exe" && options.output.empty() &&
      !checkWritableIn("the default -o", "./MODEL_NAME", ".", error))
    return ParseResult::Error;
  bool builds = options.emit == "exe" || options.emit == "source-tree";
  if (options.marchGiven && !builds) {
    error = "--march applies to the trainer's build (--emit=exe or source-tree), not to "
            "--emit=" + options.emit + "; remove it";
    return ParseResult::Error;
  }
  if (options.printLocations && options.emit != "mlir" && options.emit != "planned-mlir") {
    error = "--mlir-print-debuginfo applies to --emit=mlir and planned-mlir, not --emit=" +
            options.emit + "; remove it";
    return ParseResult::Error;
  }
  if (options.emit == "source-tree" && !toFile) {
    error = "--emit=source-tree writes a folder: give it with -o DIR";
    return ParseResult::Error;
  }
  // Options that one target alone takes choose it; the library plans are
  // the tuned target's; otherwise the target that runs here
  // (docs/training.md#targets).
  auto tuned = [](const TargetBackend::Takes &t) { return t.tuningDb; };
  if (!options.targetGiven) {
    if (options.gpuGiven || options.tuningDb || options.allowFallback ||
        options.emit == "conv-plans") {
      options.target = targetTaking(tuned);
      options.targetReason =
          "--gpu, --tuning-db and --allow-fallback are the " + options.target + " target's";
    } else {
      options.target = tcc::chooseDefaultTarget().name;
      options.targetReason = tcc::chooseDefaultTarget().reason;
    }
  }
  const TargetBackend::Takes takes = mlir::tcc::lookupTargetBackend(options.target)->takes();
  if (options.emit == "conv-plans" && !tuned(takes)) {
    error = "--emit=conv-plans lists the " + targetTaking(tuned) +
            " target's cuDNN choices; remove --target=" + options.target;
    return ParseResult::Error;
  }
  if (options.gpuGiven && !takes.gpu) {
    error = "--gpu applies to the " +
            join(targetNames([](const TargetBackend::Takes &t) { return t.gpu; })) +
            " target, not --target=" + options.target + "; remove it";
    return ParseResult::Error;
  }
  // The frontend's IR does not depend on the GPU; the planned step does
  // (the workspaces of its convolutions and matmuls).
  if (options.gpuGiven && options.emit == "mlir") {
    error = "--gpu applies to the cuda target's planned step, source, trainer and conv "
            "plans; --emit=mlir does not depend on the GPU: remove it";
    return ParseResult::Error;
  }
  if (options.allowFallback && (!takes.allowFallback || (!builds && options.emit != "source"))) {
    std::string fallback =
        targetTaking([](const TargetBackend::Takes &t) { return t.allowFallback; });
    error = "--allow-fallback applies to a " + fallback + " trainer (--target=" + fallback +
            ", --emit=exe, source or source-tree): remove it";
    return ParseResult::Error;
  }
  if (options.marchGiven && !takes.march) {
    error = "--march applies to the " +
            join(targetNames([](const TargetBackend::Takes &t) { return t.march; })) +
            " target, not --target=" + options.target;
    return ParseResult::Error;
  }
  if (options.tuningDb && !takes.tuningDb) {
    error = "--tuning-db applies to the " + join(targetNames(tuned)) + " target; the " +
            options.target + " target has no algorithms to choose: remove it";
    return ParseResult::Error;
  }
  std::string tuningText;
  if (options.tuningDb && !checkTuningDb(*options.tuningDb, tuningText, error))
    return ParseResult::Error;
  if (options.ignoreTuningMismatch && !options.tuningDb) {
    error = "--ignore-tuning-mismatch applies to a --tuning-db file: remove it or give the file";
    return ParseResult::Error;
  }
  return ParseResult::Ok;
}

void tcc::warn(CompileFacts &facts, const std::string &message) {
  std::cerr << "warning: " << message << "\n";
  facts.warnings.push_back(message);
}
