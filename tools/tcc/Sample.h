//===- Sample.h - tcc sample: text from a language model --------*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_SAMPLE_H
#define TCC_TOOLS_TCC_SAMPLE_H

#include "tools/tcc/CompileOptions.h"

#include <functional>
#include <string>
#include <vector>

namespace tcc {

/// `tcc sample MODEL.json OPTIONS` (the arguments after "sample"): checks
/// the options (runtime/SampleOptions.h) and that the model is a language
/// model, compiles a cpu trainer for it into a temporary folder with
/// `compile`, and runs `TRAINER sample OPTIONS`, whose output and exit
/// status are the command's. Errors are one "error:" line.
int runSample(const std::vector<std::string> &args,
              const std::function<int(const CompileOptions &)> &compile);

} // namespace tcc

#endif // TCC_TOOLS_TCC_SAMPLE_H
