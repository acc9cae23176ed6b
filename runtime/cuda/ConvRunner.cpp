//===- ConvRunner.cpp - Baked cuDNN plans rebuilt on the running GPU ------===//

#include "runtime/cuda/ConvRunner.h"

#include "runtime/CompiledModel.h"
#include "runtime/cuda/ConvGraph.h"
#include "runtime/cuda/CudnnHandle.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <unordered_map>
#include <vector>

namespace tcc::cuda {

namespace {

using rt::ModelSetupError;

/// A cubin for sm_XY runs on sm_XZ with Z >= Y; sm_90a only on sm_90.
bool runsOn(int builtSm, int deviceSm) {
  if (builtSm == 90)
    return deviceSm == 90;
  return deviceSm / 10 == builtSm / 10 && deviceSm >= builtSm;
}

/// The GPU the trainer runs on: its name and compute capability.
void checkDevice(const BakedTarget &target, std::string &deviceName) {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess)
    throw ModelSetupError("CUDA cannot describe the current GPU");
  deviceName = properties.name;
  int sm = properties.major * 10 + properties.minor;
  if (!runsOn(target.sm, sm))
    throw ModelSetupError("this trainer was compiled for sm_" + cudaArch(target.sm) +
                          " (--gpu=" + target.gpu + "), but this GPU, " + deviceName +
                          ", is sm_" + cudaArch(sm) +
                          "; recompile the model with the --gpu of this GPU "
                          "(tcc compile --help lists them)");
}

} // namespace

struct ConvRunner::Plans {
  CudnnHandle handle; ///< first: destroyed after the plans built with it
  const BakedTarget *target = nullptr; ///< the generated step's table
  void *stream = nullptr;
  std::vector<std::unique_ptr<ConvGraph>> graphs; ///< null for a CUTLASS kernel
  /// A CUTLASS kernel's binder (null for a cuDNN plan), and the kernel as
  /// last bound: to these operands and workspace (the step's are the same
  /// every step: the memory plan's).
  std::vector<CutlassBind> cutlass;
  std::vector<std::function<bool(void *)>> bound;
  std::vector<std::array<const void *, 4>> boundTo;
  std::vector<int64_t> workspaceBytes; ///< what each rebuilt plan needs
  std::vector<std::string> names; ///< "the forward convolution of 'conv1'", for messages
  /// The workspace of the plans that need more on this GPU than cuDNN
  /// computed for the described one (the memory plan's): one buffer, as the
  /// step's convolutions run one after another on its stream.
  void *overflow = nullptr;
  int64_t overflowBytes = 0;

  ~Plans() {
    if (overflow)
      cudaFree(overflow);
  }
};

ConvRunner::ConvRunner() = default;
ConvRunner::~ConvRunner() = default;

void ConvRunner::prepare(const BakedTarget &target, void *stream) {
  std::string deviceName;
  checkDevice(target, deviceName);
  plans = std::make_unique<Plans>();
  if (target.count == 0)
    return;

  const std::string fix = "recompile the model for this GPU (tcc compile --gpu=...) where "
                          "this cuDNN is, or compile it with --allow-fallback to use "
                          "cuDNN's heuristic choice instead";
  const int64_t version = cudnnVersion();
  if (version != target.cudnnVersion) {
    std::string message = "this trainer's convolution plans were chosen for cuDNN " +
                          cudnnVersionName(target.cudnnVersion) + ", but cuDNN " +
                          cudnnVersionName(version) + " is loaded";
    if (!target.allowFallback)
      throw ModelSetupError(message + "; load cuDNN " + cudnnVersionName(target.cudnnVersion) +
                            " (LD_LIBRARY_PATH), or " + fix);
    std::cerr << "warning: " << message
              << "; plans that do not build are replaced (--allow-fallback)\n";
  }
  if (plans->handle.create() != CUDNN_STATUS_SUCCESS ||
      cudnnSetStream(plans->handle.get(), static_cast<cudaStream_t>(stream)) !=
          CUDNN_STATUS_SUCCESS)
    throw ModelSetupError("cuDNN cannot start on " + deviceName);

  plans->target = &target;
  plans->stream = stream;
  std::vector<std::string> overflowing; // the plans that need more workspace here
  for (int i = 0; i < target.count; ++i) {
    const BakedConv &baked = target.convs[i];
    ConvProblem problem;
    ConvEngine engine;
    const CutlassBind cutlass = target.cutlass ? target.cutlass[i] : nullptr;
    if (!ConvProblem::fromKey(baked.problem, problem) ||
        (!cutlass && !parsePlanName(baked.plan, engine)))
      throw std::runtime_error(std::string("the baked convolution table is damaged at [") +
                               baked.problem + "]");
    engine.name = baked.plan;
    std::string what = std::string("the ") + directionName(problem.direction) +
                       " convolution of " + baked.nodes;
    plans->cutlass.push_back(cutlass);
    plans->bound.emplace_back();
    plans->boundTo.push_back({});
    if (cutlass) { // compiled into the step; bound at its first run
      plans->graphs.push_back(nullptr);
      plans->workspaceBytes.push_back(baked.workspaceBytes);
      plans->names.push_back(what + " (CUTLASS's " + baked.plan + ")");
      continue;
    }
    auto graph = std::make_unique<ConvGraph>();
    std::string failure;
    if (!buildConvGraph(problem, nullptr, plans->handle.get(), *graph, failure))
      throw ModelSetupError(what + ": " + failure);
    int64_t bytes = 0;
    failure = graph->buildBakedPlan(engine, bytes);
    if (!failure.empty()) {
      std::string message = what + " [" + baked.problem + "]: cuDNN " + cudnnVersionName(version) +
                            " cannot run its engine " + baked.plan + ", chosen for the " +
                            target.gpu + ", on " + deviceName + " (" + failure + ")";
      if (!target.allowFallback)
        throw ModelSetupError(message + "; " + fix);
      // cuDNN's heuristics on this GPU, the same filters as at compile time,
      // among the engines whose workspace fits the op's in the memory plan.
      graph = std::make_unique<ConvGraph>();
      fe::error_t status = buildConvGraph(problem, nullptr, plans->handle.get(), *graph, failure)
                               ? graph->create_execution_plans(
                                     {fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK})
                               : fe::error_t{fe::error_code_t::INVALID_VALUE, failure};
      if (status.is_good()) {
        restrictNumerics(problem, *graph);
        graph->deselect_workspace_greater_than(baked.workspaceBytes);
        status = graph->check_support();
      }
      if (status.is_good())
        status = graph->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE);
      if (status.is_bad())
        throw ModelSetupError(message + "; and cuDNN's heuristics found no engine either (" +
                              status.get_message() + ")");
      std::string chosen;
      (void)graph->get_plan_name(chosen);
      std::cerr << "warning: " << message << "; using cuDNN's choice " << chosen
                << " (--allow-fallback)\n";
    }
    (void)graph->get_workspace_size(bytes); // the fallback's, if it replaced the plan
    if (bytes > baked.workspaceBytes) {
      overflowing.push_back(what + " [" + baked.problem + "]: " + std::to_string(bytes) +
                            " bytes, planned " + std::to_string(baked.workspaceBytes));
      plans->overflowBytes = std::max(plans->overflowBytes, bytes);
    }
    plans->graphs.push_back(std::move(graph));
    plans->workspaceBytes.push_back(bytes);
    plans->names.push_back(what);
  }
  // cuDNN computes some engines' workspace from the GPU's properties, and
  // the real card's may differ from the description the compiler planned
  // with (docs/cuda.md, "The described GPUs"): such plans run from one
  // buffer beside the memory plan, allocated here, before the step is
  // recorded as a graph, and said to be.
  if (plans->overflowBytes > 0) {
    if (cudaMalloc(&plans->overflow, size_t(plans->overflowBytes)) != cudaSuccess)
      throw ModelSetupError("cannot allocate " + std::to_string(plans->overflowBytes) +
                            " bytes of cuDNN workspace on " + deviceName);
    std::cerr << "note: on " << deviceName << " cuDNN asks " << overflowing.size()
              << " convolution plan(s) for more workspace than it computed for the "
              << target.gpu << " the trainer was compiled for (the first: " << overflowing[0]
              << "); the trainer allocates " << plans->overflowBytes
              << " bytes for them beside its memory plan\n";
  }
}

namespace {
/// Runs plan `index` with `pointers` bound to its uids.
void runGraph(ConvRunner::Plans &p, int index, std::unordered_map<int64_t, void *> pointers,
              void *workspace, int64_t workspaceBytes) {
  ConvRunner::Plans *plans = &p;
  if (workspaceBytes < plans->workspaceBytes[index]) {
    if (plans->workspaceBytes[index] > plans->overflowBytes)
      throw std::runtime_error("cuDNN: " + plans->names[index] + " needs a workspace of " +
                               std::to_string(plans->workspaceBytes[index]) +
                               " bytes, the step gives it " + std::to_string(workspaceBytes));
    workspace = plans->overflow;
  }
  fe::error_t status = plans->graphs[index]->execute(plans->handle.get(), pointers, workspace);
  if (status.is_bad())
    throw std::runtime_error("cuDNN: running " + plans->names[index] + ": " +
                             status.get_message());
}

/// Runs CUTLASS kernel `index`, bound to these operands once.
void runCutlass(ConvRunner::Plans &p, int index, const void *x, const void *weight,
                const void *y, void *workspace, int64_t workspaceBytes) {
  if (workspaceBytes < p.workspaceBytes[index])
    throw std::runtime_error("CUTLASS: " + p.names[index] + " needs a workspace of " +
                             std::to_string(p.workspaceBytes[index]) +
                             " bytes, the step gives it " + std::to_string(workspaceBytes));
  const std::array<const void *, 4> operands = {x, weight, y, workspace};
  if (!p.bound[index] || p.boundTo[index] != operands) {
    p.bound[index] = p.cutlass[index](p.target->convs[index].problem, x, weight, y, workspace,
                                      p.stream);
    p.boundTo[index] = operands;
  }
  if (!p.bound[index] || !p.bound[index](p.stream))
    throw std::runtime_error("CUTLASS: " + p.names[index] + " does not run on this GPU (" +
                             cudaGetErrorString(cudaGetLastError()) +
                             "); compile without the tuning file's CUTLASS records");
}
} // namespace

void ConvRunner::run(int index, const void *x, const void *weight, const void *y,
                     void *workspace, int64_t workspaceBytes, const void *bias) {
  if (plans->cutlass[index]) {
    runCutlass(*plans, index, x, weight, y, workspace, workspaceBytes);
    return;
  }
  std::unordered_map<int64_t, void *> pointers = {{kInputUid, const_cast<void *>(x)},
                                                  {kWeightUid, const_cast<void *>(weight)},
                                                  {kOutputUid, const_cast<void *>(y)}};
  if (bias)
    pointers[kBiasUid] = const_cast<void *>(bias);
  runGraph(*plans, index, std::move(pointers), workspace, workspaceBytes);
}

void ConvRunner::runWithStatistics(int index, const void *x, const void *weight, const void *y,
                                   float *sum, float *squares, void *workspace,
                                   int64_t workspaceBytes) {
  runGraph(*plans, index,
           {{kInputUid, const_cast<void *>(x)},
            {kWeightUid, const_cast<void *>(weight)},
            {kOutputUid, const_cast<void *>(y)},
            {kSumUid, sum},
            {kSquareSumUid, squares}},
           workspace, workspaceBytes);
}

} // namespace tcc::cuda
