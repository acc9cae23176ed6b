//===- Plot.cpp - tcc plot: training curves from metrics files ------------===//
//
// The plotting itself is Python (plot_metrics.py, matplotlib from Debian's
// python3-matplotlib): the driver shows the help and hands the arguments
// over, so `tcc plot` is one command beside `tcc compile`.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/Plot.h"

#include "tools/tcc/RuntimePaths.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <iostream>

namespace {

const char *kPlotHelp = R"(Usage: tcc plot RUN.jsonl [RUN.jsonl...] -o curves.png

Draws the training curves of one or more runs from the metrics files their
trainers wrote (./train --metrics RUN.jsonl, docs/training.md#metrics): loss
and accuracy (train solid, test dashed) and the learning rate, against
epochs, one colour per run. Step records (./train --log-every N) give the
training curves their detail.

Options:
  -o, --output=FILE.png  where to write the plot (written atomically)
  --x=AXIS               the x axis: epoch (default), step, or time (the
                         run's wall-clock seconds, "elapsed_s")
  --log=PANELS           logarithmic y axes: loss, lr, or loss,lr
  -h, --help             show this help

Needs matplotlib for )" TCC_PLOT_PYTHON R"( (Debian: python3-matplotlib).
)";

} // namespace

int tcc::runPlot(const std::vector<std::string> &args) {
  for (const std::string &arg : args)
    if (arg == "-h" || arg == "--help") {
      std::cout << kPlotHelp;
      return 0;
    }
  if (!llvm::sys::fs::can_execute(TCC_PLOT_PYTHON)) {
    std::cerr << "error: tcc plot runs " << TCC_PLOT_PYTHON
              << ", which is not there; install Debian's python3 and "
                 "python3-matplotlib (scripts/setup.sh does)\n";
    return 1;
  }
  llvm::SmallVector<llvm::StringRef> argv{TCC_PLOT_PYTHON, TCC_PLOT_SCRIPT};
  for (const std::string &arg : args)
    argv.push_back(arg);
  std::string failure;
  int status = llvm::sys::ExecuteAndWait(TCC_PLOT_PYTHON, argv, std::nullopt, {}, 0, 0,
                                         &failure);
  if (status < 0) {
    std::cerr << "error: tcc plot could not run " << TCC_PLOT_PYTHON << ": " << failure
              << "\n";
    return 1;
  }
  return status;
}
