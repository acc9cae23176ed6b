//===- Plot.h - tcc plot: training curves from metrics files ----*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_PLOT_H
#define TCC_TOOLS_TCC_PLOT_H

#include <string>
#include <vector>

namespace tcc {

/// `tcc plot RUN.jsonl... -o curves.png` (the arguments after "plot"):
/// runs plot_metrics.py with the Python that has matplotlib. Returns the
/// exit status; errors are printed as one "error:" line.
int runPlot(const std::vector<std::string> &args);

} // namespace tcc

#endif // TCC_TOOLS_TCC_PLOT_H
