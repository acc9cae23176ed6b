//===- Tune.h - tcc tune: cuDNN engines measured on the GPU -----*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_TUNE_H
#define TCC_TOOLS_TCC_TUNE_H

#include "tools/tcc/CompileOptions.h"

#include <functional>
#include <string>
#include <vector>

namespace tcc {

/// `tcc tune MODEL.json... -o TUNING.json` (the arguments after "tune"):
/// the convolution problems of each model's cuda step, as `compile` lists
/// them (--emit=conv-plans), timed on this machine's GPU by tcc-tune
/// (runtime/cuda/tune/TuneMain.cpp) into one tuning file. Returns the exit
/// status; errors are printed as one "error:" line.
int runTune(const std::vector<std::string> &args, const char *argv0,
            const std::function<int(const CompileOptions &)> &compile);

} // namespace tcc

#endif // TCC_TOOLS_TCC_TUNE_H
