//===- ConvPlans.cpp - cuDNN graphs for convolution problems --------------===//

#include "runtime/cuda/ConvPlans.h"

#include "runtime/cuda/ConvGraph.h"

namespace tcc::cuda {

bool chooseConvEngine(const ConvProblem &problem, const GpuDescription &gpu,
                      int64_t workspaceLimit, ConvChoice &choice,
                      std::string &error) {
  ConvGraph graph;
  if (!buildConvGraph(problem, &gpu, nullptr, graph, error))
    return false;
  fe::error_t status =
      graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
  if (status.is_bad()) {
    error = "cuDNN's heuristics offer no engine for the convolution [" +
            problem.key() + "] on the " + gpu.name + ": " + status.get_message();
    return false;
  }
  choice.candidates = int(graph.get_execution_plan_count());
  restrictNumerics(problem, graph);
  graph.deselect_workspace_greater_than(workspaceLimit);
  // check_support fails when no candidate is left; building then says why.
  (void)graph.check_support();
  std::string lastError = "no candidate is left after the filters";
  for (int64_t index = 0; index < choice.candidates; ++index) {
    status = graph.build_plan_at_index(index);
    if (status.is_bad()) {
      lastError = status.get_message();
      continue;
    }
    if (!describeEngine(graph, index, choice.engine)) {
      lastError = "cuDNN's name of the plan, '" + choice.engine.name +
                  "', has an unknown form";
      continue;
    }
    choice.rank = int(index);
    return true;
  }
  error = "no cuDNN engine can run the convolution [" + problem.key() +
          "] on the " + gpu.name + " within a " +
          std::to_string(workspaceLimit >> 20) + " MiB workspace (" +
          std::to_string(choice.candidates) + " candidates; the last said: " +
          lastError + ")";
  return false;
}

bool listConvEngines(const ConvProblem &problem, const GpuDescription &gpu,
                     int64_t workspaceLimit, std::vector<ConvEngine> &engines,
                     std::string &error) {
  ConvGraph graph;
  std::vector<std::pair<int64_t, ConvEngine>> built;
  int offered = 0;
  if (!buildConvGraph(problem, &gpu, nullptr, graph, error) ||
      !buildAllCandidates(problem, graph, workspaceLimit, 0, built, offered, error))
    return false;
  for (auto &candidate : built)
    engines.push_back(std::move(candidate.second));
  return true;
}

bool rebuildConvPlan(const ConvProblem &problem, const GpuDescription &gpu,
                     const ConvEngine &engine, int64_t &workspaceBytes,
                     std::string &error) {
  ConvGraph graph;
  if (!buildConvGraph(problem, &gpu, nullptr, graph, error))
    return false;
  std::string failure = graph.buildBakedPlan(engine, workspaceBytes);
  if (!failure.empty()) {
    error = "cuDNN " + std::to_string(cudnnVersion()) +
            " cannot build engine " + std::to_string(engine.engine) + " (" +
            engine.name + ") for the convolution [" + problem.key() + "] on the " +
            gpu.name + ": " + failure;
    return false;
  }
  return true;
}

int64_t cudnnVersion() { return int64_t(cudnnGetVersion()); }

} // namespace tcc::cuda
