//===- DgradDbnGraph.h - cuDNN's dgrad + drelu + dbn_weight graph -*- C++ -*-===//
//
// The graph that would give a batch norm's backward sums as the next
// convolution's backward-data writes dy (docs/cuda.md, "Batch norm backward
// sums from the backward-data convolution"): conv_dgrad -> RELU_BWD with
// the ReLU's saved fp16 output -> dbn_weight. cuDNN 9.19 offers no engine
// for it on a described GPU (its engines are compiled at run time), which
// tcc-cuda-dgrad-statistics reports and tcc-cuda-plan-tests watches.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DGRADDBNGRAPH_H
#define TCC_RUNTIME_CUDA_DGRADDBNGRAPH_H

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/GpuDescriptions.h"

#include <string>

namespace tcc::cuda {

/// True if cuDNN's heuristics (modes A and fallback) offer an engine for
/// the graph of the fp16 NHWC backward-data `problem` on the described
/// `gpu` that builds, with no GPU present; false with `why` (cuDNN's
/// message) otherwise.
bool dgradDbnHasEngine(const ConvProblem &problem, const GpuDescription &gpu,
                       std::string &why);

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_DGRADDBNGRAPH_H
