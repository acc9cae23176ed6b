//===- ConvGraph.h - One convolution as a cuDNN graph -----------*- C++ -*-===//
//
// Private to runtime/cuda: how a ConvProblem becomes a cuDNN graph (the
// frontend's graph API), the same way for a described GPU when the compiler
// chooses an engine (ConvPlans.cpp) and for the running GPU when the
// trainer rebuilds that choice (ConvRunner.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CONVGRAPH_H
#define TCC_RUNTIME_CUDA_CONVGRAPH_H

#include "runtime/cuda/ConvPlans.h"

#include <cudnn_frontend.h>

#include <string>
#include <vector>

namespace tcc::cuda {

namespace fe = cudnn_frontend;

/// The uids the trainer binds its buffers to, whatever the direction; the
/// bias of a forward convolution's epilogue; the f32 per-channel sum and
/// sum of squares of its statistics (genstats).
enum : int64_t {
  kInputUid = 1,
  kWeightUid = 2,
  kOutputUid = 3,
  kBiasUid = 4,
  kSumUid = 5,
  kSquareSumUid = 6
};

/// A graph that speaks cuDNN's own knob numbering. The frontend's
/// structured (engine, knobs) calls translate knobs to its KnobType_t and
/// drop the ones it has no name for (cuDNN 9.19 still chooses deprecated
/// knobs such as KBLOCK), so a choice read that way could not be rebuilt.
/// This class reads the choice from cuDNN's tag of the configuration and
/// builds a configuration from backend knob types directly.
class ConvGraph : public fe::graph::Graph {
public:
  /// cuDNN's numerical notes of candidate `index` ("TENSOR_CORE", ...).
  std::vector<std::string> numericNotes(int64_t index) const;

  /// Adds the engine configuration (engine, backend knob choices) as the
  /// only candidate, as Graph::create_execution_plan does with frontend
  /// knobs. Returns what failed, or "".
  std::string addConfiguration(const ConvEngine &choice);

  /// Builds `choice` as the only plan, checks that cuDNN built that very
  /// configuration (when choice.name is set) and gives its workspace: the
  /// compile-time rebuild and the trainer's. Returns what failed, or "".
  std::string buildBakedPlan(const ConvEngine &choice, int64_t &workspaceBytes);
};

/// `problem` as a cuDNN graph, built as far as the operation graph
/// (engines come next): for the described `gpu`, or, when it is null, for
/// the GPU of `handle`.
bool buildConvGraph(const ConvProblem &problem, const GpuDescription *gpu,
                    cudnnHandle_t handle, fe::graph::Graph &graph, std::string &error);

/// Passes over the engines tcc never runs (docs/cuda.md): nondeterministic
/// ones (atomic accumulation), so that runs and --resume repeat bit for bit;
/// and for f32 convolutions those that round otherwise than an f32 sum does
/// (TF32 on tensor cores, FFT, Winograd, reduced-precision inputs or sums),
/// so that the cuda trainer computes what the cpu trainer does.
void restrictNumerics(const ConvProblem &problem, fe::graph::Graph &graph);

/// Every engine configuration `tcc tune` considers for `problem` on the GPU
/// `graph` was built for: cuDNN's heuristic modes A and B and its fallback
/// list, filtered as the compile-time choice is (restrictNumerics, the
/// workspace limit), each distinct configuration once, built, in cuDNN's
/// order, as (index among the graph's plans, engine); the first `most`
/// only when it is positive. `offered`: how many the heuristics offered.
/// False with `error` when none builds.
bool buildAllCandidates(const ConvProblem &problem, ConvGraph &graph, int64_t workspaceLimit,
                        int most, std::vector<std::pair<int64_t, ConvEngine>> &built,
                        int &offered, std::string &error);

/// Fills `engine` from candidate `index` of `graph`, built: its name,
/// engine, knobs, workspace and numerical notes.
bool describeEngine(ConvGraph &graph, int64_t index, ConvEngine &engine);

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CONVGRAPH_H
