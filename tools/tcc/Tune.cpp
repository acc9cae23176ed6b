//===- Tune.cpp - tcc tune: cuDNN engines and cuBLASLt algorithms measured ===//
//
// The compiler lists each model's convolution and matmul problems (the
// conv-plans table of its cuda step, for --gpu, --precision and --batch-size as
// `tcc compile` would plan them) and hands them to tcc-tune, built beside
// tcc from the runtime, which times every candidate on the GPU
// (docs/tuning.md). On a GPU machine without MLIR the same tcc-tune builds
// from a cuda source tree and reads its conv-plans.json.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/Tune.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <iostream>

namespace {

const char *kTuneHelp = R"(Usage: tcc tune MODEL.json [MODEL.json...] -o TUNING.json [options]

Measures, on this machine's GPU, every cuDNN engine configuration of each
convolution of the models' cuda training steps and the cuBLASLt algorithms
of each matmul, and writes the fastest of each as a tuning file for
'tcc compile --tuning-db=TUNING.json' (docs/tuning.md). Compile with the same --gpu, --precision and --batch-size:
the problems depend on them.

Options:
  -o, --output=FILE      the tuning file (written atomically)
  --gpu=GPU              the GPU this is (as 'tcc compile --gpu'; default h100);
                         the tuning file records the GPU it ran on
  --precision=P          as 'tcc compile --precision'
  --batch-size=N         as 'tcc compile --batch-size'
  --repeats=N            timings per engine, of which the median counts (default 5)
  -h, --help             show this help

On a GPU machine without tcc: 'tcc compile MODEL.json --target=cuda
--emit=source-tree -o DIR' where tcc is, then there
  cmake -S DIR -B DIR/build && cmake --build DIR/build --target tcc-tune
  DIR/build/tcc-tune DIR/conv-plans.json -o TUNING.json
)";

int fail(const std::string &message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

} // namespace

int tcc::runTune(const std::vector<std::string> &args, const char *argv0,
                 const std::function<int(const CompileOptions &)> &compile) {
  std::vector<std::string> models, compileFlags;
  std::string output, repeats;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], name = arg, value;
    if (arg == "-h" || arg == "--help") {
      std::cout << kTuneHelp;
      return 0;
    }
    if (arg.empty() || arg[0] != '-') {
      models.push_back(arg);
      continue;
    }
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return fail("option " + name + " needs a value (see 'tcc tune --help')");
    }
    if (name == "-o" || name == "--output") {
      output = value;
    } else if (name == "--repeats") {
      repeats = value;
    } else if (name == "--gpu" || name == "--precision" || name == "--batch-size") {
      compileFlags.push_back(name + "=" + value); // checked by `tcc compile`'s parser
    } else {
      return fail("unknown option '" + name + "' (see 'tcc tune --help')");
    }
  }
  if (models.empty() || output.empty())
    return fail("give the models and -o TUNING.json; usage: tcc tune MODEL.json... -o "
                "TUNING.json");

  std::string self = llvm::sys::fs::getMainExecutable(argv0, (void *)&runTune);
  // tcc-tune-cutlass, where it was built (docs/tuning.md, "CUTLASS"), also
  // times CUTLASS's convolutions.
  llvm::SmallString<256> tuner(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(tuner, "tcc-tune-cutlass");
  if (!llvm::sys::fs::can_execute(tuner)) {
    llvm::sys::path::remove_filename(tuner);
    llvm::sys::path::append(tuner, "tcc-tune");
  }
  if (!llvm::sys::fs::can_execute(tuner))
    return fail("tcc tune runs " + std::string(tuner) +
                ", which is not there: this tcc was built without CUDA (run "
                "scripts/setup.sh and rebuild)");

  // Each model's conv-plans table, through `tcc compile` itself, so that
  // its options are checked and its problems are those it will bake.
  llvm::SmallString<128> folder;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tcc-tune", folder))
    return fail("cannot create a temporary folder: " + ec.message());
  std::vector<std::string> tables;
  int status = 0;
  for (size_t i = 0; i < models.size() && status == 0; ++i) {
    tables.push_back(std::string(folder) + "/plans" + std::to_string(i) + ".json");
    std::vector<std::string> compileArgs = {models[i], "--emit=conv-plans", "-o",
                                            tables.back()};
    compileArgs.insert(compileArgs.end(), compileFlags.begin(), compileFlags.end());
    CompileOptions options;
    std::string error;
    if (parseCompileOptions(compileArgs, options, error) != ParseResult::Ok)
      status = fail(error);
    else
      status = compile(options);
  }
  if (status == 0) {
    llvm::SmallVector<llvm::StringRef> argv{tuner};
    for (const std::string &table : tables)
      argv.push_back(table);
    argv.push_back("-o");
    argv.push_back(output);
    if (!repeats.empty()) {
      argv.push_back("--repeats");
      argv.push_back(repeats);
    }
    std::string failure;
    status = llvm::sys::ExecuteAndWait(tuner, argv, std::nullopt, {}, 0, 0, &failure);
    if (status < 0)
      status = fail("could not run " + std::string(tuner) + ": " + failure);
  }
  llvm::sys::fs::remove_directories(folder);
  return status;
}
