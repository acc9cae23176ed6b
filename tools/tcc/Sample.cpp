//===- Sample.cpp - tcc sample: text from a language model ----------------===//
//
// The sampling itself is the trainer's (`./train sample`, runtime/trainer/
// Sample.cpp): tcc checks the command line with the same parser, builds a
// cpu trainer of one rank for the model, and hands the options over.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/Sample.h"

#include "frontend/ModelSpec.h"
#include "runtime/SampleOptions.h"
#include "tools/tcc/Temporaries.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <iostream>

namespace {

int fail(const std::string &message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

/// Why `spec` cannot be sampled from, or "".
std::string notALanguageModel(const ::tcc::frontend::ModelSpec &spec) {
  if (spec.vocab == 0)
    return "has no token input (input.type \"tokens\"): tcc sample needs a language model";
  if (spec.loss.targets != "sequence" || spec.classes != spec.vocab)
    return "does not predict the next token at every position (loss.targets \"sequence\" "
           "with classes equal to the vocabulary): tcc sample needs a model that does";
  return "";
}

} // namespace

int tcc::runSample(const std::vector<std::string> &args,
                   const std::function<int(const CompileOptions &)> &compile) {
  // tcc sample MODEL.json OPTIONS: the model first.
  std::string model;
  std::vector<std::string> options(args.begin(), args.end());
  if (!options.empty() && !options[0].empty() && options[0][0] != '-') {
    model = options[0];
    options.erase(options.begin());
  }
  ::tcc::rt::SampleOptions parsed;
  std::string error;
  if (!::tcc::rt::parseSampleOptions(options, parsed, error) && !parsed.help)
    return fail(error);
  if (parsed.help) {
    std::cout << ::tcc::rt::sampleHelp("tcc sample MODEL.json")
              << "\ntcc sample compiles a cpu trainer for MODEL.json first (tcc compile\n"
                 "--target=cpu --ranks=1); a cpu trainer compiled already samples the same way:\n"
                 "./train sample --checkpoint FILE --vocab VOCAB.json ...\n";
    return 0;
  }
  if (model.empty())
    return fail("give the model: tcc sample MODEL.json --checkpoint FILE --vocab VOCAB.json");
  ::tcc::frontend::ModelSpec spec;
  if (!::tcc::frontend::loadModelSpec(model, spec, error))
    return fail(error);
  if (std::string why = notALanguageModel(spec); !why.empty())
    return fail(model + ": the model '" + spec.name + "' " + why);

  std::string folder;
  if (!createBuildFolder(folder, error))
    return fail(error);
  removeOnSignal(folder);
  const std::string trainer = folder + "/" + spec.name;
  CompileOptions build;
  int status = 0;
  if (parseCompileOptions({model, "--target=cpu", "--ranks=1", "-o", trainer}, build, error) !=
      ParseResult::Ok) {
    status = fail(error);
  } else {
    build.checkData = false; // sampling reads no data set
    status = compile(build);
  }
  if (status == 0) {
    llvm::SmallVector<llvm::StringRef> argv{trainer, "sample"};
    for (const std::string &option : options)
      argv.push_back(option);
    std::string failure;
    status = llvm::sys::ExecuteAndWait(trainer, argv, std::nullopt, {}, 0, 0, &failure);
    if (status < 0)
      status = fail("could not run the trainer " + trainer + ": " + failure);
  }
  llvm::sys::fs::remove_directories(folder);
  dontRemoveOnSignal(folder);
  return status;
}
