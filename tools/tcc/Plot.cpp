//===- Plot.cpp - tcc plot: training curves from metrics files ------------===//
//
// The plotting itself is Python (plot_metrics.py, matplotlib from Debian's
// python3-matplotlib): the driver shows the help and hands the arguments
// over, so `tcc plot` is one command beside `tcc compile`.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/Plot.h"

#include "tools/tcc/PythonTool.h"
#include "tools/tcc/RuntimePaths.h"

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
  return runPythonTool("plot", TCC_PLOT_PYTHON, TCC_PLOT_SCRIPT, args,
                       "Debian's python3 and python3-matplotlib (scripts/setup.sh does)");
}
