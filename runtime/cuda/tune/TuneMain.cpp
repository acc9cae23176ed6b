//===- TuneMain.cpp - tcc-tune: cuDNN engines and cuBLASLt algorithms timed ===//
//
// The measuring half of `tcc tune` (docs/tuning.md). It needs no MLIR and
// no tcc, only what a cuda trainer needs, so that it builds on a GPU machine
// from a cuda source tree (`tcc compile --target=cuda --emit=source-tree`,
// target tcc-tune of its CMake project). It reads the tree's
// conv-plans.json (the convolution problems of the step with the engines
// the heuristics chose, and its matmul problems), times every admissible
// engine of each convolution (runtime/cuda/ConvTuner.h) and the algorithms
// cuBLASLt offers for each matmul (runtime/cuda/MatmulTuner.h) on this GPU,
// and writes the tuning file that `tcc compile --tuning-db` bakes. Built as
// tcc-tune-cutlass, it also times CUTLASS's convolutions beside cuDNN's
// engines (runtime/cuda/CutlassTuner.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/AtomicFile.h"
#include "runtime/cuda/ConvTuner.h"
#include "runtime/cuda/CudnnHandle.h"
#include "runtime/cuda/CutlassTuner.h"
#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/MatmulTuner.h"
#include "runtime/cuda/TuningFile.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

using namespace tcc::cuda;

namespace {

const char *kUsage = R"(usage: tcc-tune CONV_PLANS.json... -o TUNING.json [options]

Times every cuDNN engine configuration of each convolution problem, and the
cuBLASLt algorithms of each matmul problem, listed in the conv-plans files (a
cuda source tree's conv-plans.json, or the output of 'tcc compile
--target=cuda --emit=conv-plans') on this GPU, and writes the fastest of each
as a tuning file for 'tcc compile --tuning-db'.

       tcc-tune CONV_PLANS.json... --list --gpu NAME [-o FILE]

Built as tcc-tune-cutlass, it also times CUTLASS's convolutions on Hopper
GPUs beside cuDNN's engines and records them in the file; 'tcc compile
--tuning-db' bakes one where it was faster.

options:
  -o FILE                 the tuning file to write (atomically)
  --describe              print cuDNN's description of this GPU (device-property
                          JSON, as tcc's built-in GPUs are written) and stop
  --list --gpu NAME       list, without a GPU and without timing, the engine
                          configurations that would be timed on the described
                          GPU (h100, h200, a100, sm_XX), as JSON (convolutions
                          only: cuBLASLt offers algorithms for the GPU it runs on;
                          tcc-tune-cutlass also lists its CUTLASS kernels)
  --repeats N             timings per configuration, of which the median counts (default 5)
  --max-candidates N      time only the first N configurations in cuDNN's order
                          (its heuristics' best first; default: all, often 60-80),
                          and of cuBLASLt's (default: all it offers, up to 64)
  --workspace-limit BYTES the largest workspace a convolution's engine may use
                          (default: the conv-plans file's, which the trainer's
                          memory plan honours; a matmul's is always the file's)
  --help                  show this help
)";

int fail(const std::string &message) {
  std::cerr << "error: tcc-tune: " << message << "\n";
  return 1;
}

/// tcc's name of the GPU CUDA calls `device`: a built-in GPU of the same
/// compute capability whose name ("H200") the device's contains, else sm_XX.
std::string gpuName(const std::string &device, int sm) {
  std::string upper = device;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  for (const GpuDescription &gpu : builtinGpus()) {
    std::string name = gpu.name;
    std::transform(name.begin(), name.end(), name.begin(), ::toupper);
    if (gpu.smVersion == sm && upper.find(name) != std::string::npos)
      return gpu.name;
  }
  return "sm_" + cudaArch(sm);
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

struct Problem {
  std::string key, heuristicPlan;
};

/// Times the algorithms of every matmul problem and adds the fastest of
/// each to `file`, rewriting `output` after each. A problem none of whose
/// algorithms runs is left out with a warning (the trainer's heuristic
/// chooses for it). False with `error` when the file cannot be written.
bool tuneMatmuls(const std::vector<std::string> &keys, int64_t workspaceLimit, int repeats,
                 int maxCandidates, const std::string &output, TuningFile &file,
                 std::string &error) {
  file.cublasLtVersion = cublasLtVersion();
  for (size_t i = 0; i < keys.size(); ++i) {
    MatmulProblem problem;
    MatmulProblem::fromKey(keys[i], problem);
    MatmulTiming timing;
    if (!timeMatmulAlgos(problem, workspaceLimit, repeats, maxCandidates, timing, error)) {
      std::cerr << "warning: tcc-tune: " << error
                << "; left out of the tuning file: cuBLASLt's heuristic chooses for it\n";
      continue;
    }
    const TimedMatmulAlgo &best = timing.timed.front();
    TunedChoice matmul{best.algo.name(), best.workspaceBytes, best.microseconds, "", -1,
                       nlohmann::json::array()};
    for (const TimedMatmulAlgo &t : timing.timed) {
      matmul.timed.push_back({{"algo", t.algo.name()},
                              {"microseconds", t.microseconds},
                              {"workspace_bytes", t.workspaceBytes},
                              {"heuristic_rank", t.heuristicRank}});
      if (t.heuristicRank == 0) {
        matmul.heuristicName = t.algo.name();
        matmul.heuristicMicroseconds = t.microseconds;
      }
    }
    std::ostringstream line;
    line.precision(1);
    line << std::fixed << "tcc-tune: [matmul " << i + 1 << "/" << keys.size() << "] "
         << keys[i] << ": " << timing.timed.size() << " of " << timing.offered
         << " timed, fastest " << matmul.name << " " << best.microseconds << " us";
    if (matmul.heuristicMicroseconds >= 0)
      line << " (heuristic's first " << matmul.heuristicMicroseconds << " us)";
    std::cerr << line.str() << "\n";
    file.matmuls[keys[i]] = matmul;
    if (!tcc::writeFileAtomically(output, toJson(file).dump(1) + "\n", error))
      return false;
  }
  return true;
}

/// CUTLASS's kernels for `problem` timed and compared with cuDNN's output
/// (timing.reference) into conv.cutlass, and a line saying how they fared
/// against cuDNN's fastest. False with `error` when the GPU fails.
bool tuneCutlass(const ConvProblem &problem, cudaStream_t stream, int repeats,
                 const ConvTiming &cudnn, TunedChoice &conv, std::string &error) {
  CutlassTiming timing;
  if (!timeCutlassConvs(problem, stream, repeats, cudnn.reference, timing, error))
    return false;
  conv.cutlass = nlohmann::json::array();
  for (const TimedCutlassKernel &t : timing.timed)
    conv.cutlass.push_back({{"kernel", t.name},
                            {"microseconds", t.microseconds},
                            {"workspace_bytes", t.workspaceBytes},
                            {"difference", t.difference}});
  for (const std::string &failure : timing.failures) {
    const size_t colon = failure.find(": ");
    conv.cutlass.push_back(
        {{"kernel", failure.substr(0, colon)}, {"failure", failure.substr(colon + 2)}});
  }
  std::ostringstream line;
  line.precision(1);
  line << std::fixed << "tcc-tune:   CUTLASS: " << timing.timed.size() << " of "
       << timing.candidates << " kernels timed";
  if (!timing.timed.empty()) {
    const TimedCutlassKernel &best = timing.timed.front();
    line << ", fastest " << best.name << " " << best.microseconds << " us, "
         << std::setprecision(2) << cudnn.timed.front().microseconds / best.microseconds
         << "x cuDNN's fastest";
  } else if (!timing.failures.empty()) {
    line << " (" << timing.failures.front() << ")";
  }
  std::cerr << line.str() << "\n";
  return true;
}

/// --list: the configurations that would be timed, for a described GPU.
int listEngines(const std::vector<Problem> &problems, const std::string &gpuName,
                int64_t workspaceLimit, const std::string &output) {
  std::string error;
  const GpuDescription *gpu = findGpu(gpuName, error);
  if (!gpu)
    return fail("--gpu " + gpuName + ": " + error);
  nlohmann::json convs = nlohmann::json::array();
  for (const Problem &p : problems) {
    ConvProblem problem;
    ConvProblem::fromKey(p.key, problem);
    std::vector<ConvEngine> engines;
    if (!listConvEngines(problem, *gpu, workspaceLimit, engines, error))
      return fail(error);
    nlohmann::json plans = nlohmann::json::array();
    for (const ConvEngine &engine : engines)
      plans.push_back({{"plan", engine.name}, {"workspace_bytes", engine.workspaceBytes}});
    nlohmann::json row = {{"problem", p.key}, {"heuristic_plan", p.heuristicPlan},
                          {"plans", plans}};
    // tcc-tune-cutlass on a Hopper: the CUTLASS kernels it would time too.
    if (!cutlassCandidates().empty() && gpu->smVersion == 90)
      row["cutlass"] = cutlassCandidatesFor(problem);
    convs.push_back(row);
  }
  std::string text = nlohmann::json{{"gpu", gpu->name},
                                    {"cudnn_version", cudnnVersion()},
                                    {"workspace_limit_bytes", workspaceLimit},
                                    {"convs", convs}}
                         .dump(1) + "\n";
  if (output.empty() || output == "-") {
    std::cout << text;
    return 0;
  }
  return tcc::writeFileAtomically(output, text, error) ? 0 : fail(error);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> inputs;
  std::string output, listFor;
  bool list = false, describe = false;
  int repeats = 5, maxCandidates = 0;
  int64_t workspaceLimit = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "-o") {
      if (!value(output))
        return fail("-o needs a file name");
    } else if (arg == "--describe") {
      describe = true;
    } else if (arg == "--list") {
      list = true;
    } else if (arg == "--gpu") {
      if (!value(listFor))
        return fail("--gpu needs a GPU name");
    } else if (arg == "--repeats") {
      if (!value(v) || (repeats = std::atoi(v.c_str())) < 1 || repeats > 100)
        return fail("--repeats: expected a number from 1 to 100");
    } else if (arg == "--max-candidates") {
      if (!value(v) || (maxCandidates = std::atoi(v.c_str())) < 1)
        return fail("--max-candidates: expected a positive number");
    } else if (arg == "--workspace-limit") {
      if (!value(v) || (workspaceLimit = std::atoll(v.c_str())) < 0)
        return fail("--workspace-limit: expected a number of bytes");
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "' (see --help)");
    } else {
      inputs.push_back(arg);
    }
  }
  if (!describe && (inputs.empty() || (output.empty() && !list)))
    return fail("give the conv-plans files and -o TUNING.json (see --help)");
  if (list != !listFor.empty())
    return fail("--list and --gpu go together: the GPU whose engines to list");

  // The problems, each once, in the order the files list them.
  std::vector<Problem> problems;
  std::vector<std::string> matmuls;
  int64_t matmulWorkspaceLimit = -1;
  for (const std::string &path : inputs) {
    std::ifstream in(path);
    nlohmann::json table = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!in || table.is_discarded() || table.value("format", "") != "tcc-conv-plans/1" ||
        !table.contains("convs") || !table["convs"].is_array())
      return fail(path + ": not a conv-plans file (format tcc-conv-plans/1, written by "
                         "'tcc compile --target=cuda --emit=conv-plans')");
    if (workspaceLimit < 0)
      workspaceLimit = table.value("workspace_limit_bytes", int64_t(256) << 20);
    for (const nlohmann::json &row : table["convs"]) {
      ConvProblem problem;
      std::string key = row.value("problem", "");
      if (!ConvProblem::fromKey(key, problem))
        return fail(path + ": '" + key + "' is not a convolution problem");
      if (std::none_of(problems.begin(), problems.end(),
                       [&](const Problem &p) { return p.key == key; }))
        problems.push_back({key, row.value("plan", "")});
    }
    if (matmulWorkspaceLimit < 0)
      matmulWorkspaceLimit =
          table.value("matmul_workspace_limit_bytes", matmulUsableWorkspaceBytes(90));
    for (const nlohmann::json &row : table.value("matmuls", nlohmann::json::array())) {
      MatmulProblem problem;
      std::string key = row.value("problem", "");
      if (!MatmulProblem::fromKey(key, problem))
        return fail(path + ": '" + key + "' is not a matmul problem");
      if (std::find(matmuls.begin(), matmuls.end(), key) == matmuls.end())
        matmuls.push_back(key);
    }
  }

  if (list)
    return listEngines(problems, listFor, workspaceLimit, output);

  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    return fail(std::string("no CUDA GPU is visible (") +
                (status != cudaSuccess ? cudaGetErrorString(status) : "no device") +
                "); run tcc-tune on the GPU the trainer is for");
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  TuningFile file;
  file.device = properties.name;
  file.sm = properties.major * 10 + properties.minor;
  file.gpu = gpuName(file.device, file.sm);
  file.cudnnVersion = cudnnVersion();
  file.workspaceLimitBytes = workspaceLimit;
  file.tunedAt = utcNow();
  CudnnHandle handle;
  if (handle.create() != CUDNN_STATUS_SUCCESS)
    return fail("cuDNN cannot start on " + file.device);
  std::string description, error;
  if (!describeGpu(0, description, error))
    return fail(error);
  if (describe) {
    std::cout << description << "\n";
    return 0;
  }
  file.deviceProperties = nlohmann::json::parse(description, nullptr, false);
  std::cerr << "tcc-tune: " << problems.size() << " convolution and " << matmuls.size()
            << " matmul problems on " << file.device << " (" << file.gpu << "), cuDNN "
            << cudnnVersionName(file.cudnnVersion) << ", cuBLASLt "
            << cublasLtVersionName(cublasLtVersion()) << "\n";
  // CUTLASS's kernels are sm_90a code: they run on Hopper only.
  const bool cutlass = !cutlassCandidates().empty() && file.sm == 90;
  if (!cutlassCandidates().empty())
    std::cerr << "tcc-tune: " << cutlassCandidates().size() << " CUTLASS kernels"
              << (cutlass ? " timed beside cuDNN's engines"
                          : " built for sm_90a, not timed on sm_" + cudaArch(file.sm))
              << "\n";

  cudaStream_t stream = nullptr; // the handle's, where CUTLASS's kernels run too
  cudnnGetStream(handle.get(), &stream);
  // The matmuls first: a few seconds in all, where the convolutions take
  // minutes (a run cut short by a time limit still has every matmul).
  if (!tuneMatmuls(matmuls, matmulWorkspaceLimit, repeats, maxCandidates, output, file,
                   error))
    return fail(error);
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem &p = problems[i];
    ConvProblem problem;
    ConvProblem::fromKey(p.key, problem);
    ConvTiming timing;
    const bool withCutlass = cutlass && !cutlassCandidatesFor(problem).empty();
    if (!timeConvEngines(problem, handle.get(), workspaceLimit, repeats, maxCandidates,
                         withCutlass, timing, error))
      return fail(error);
    const TimedConvEngine &best = timing.timed.front();
    TunedChoice conv{best.engine.name, best.engine.workspaceBytes, best.microseconds,
                   p.heuristicPlan, -1, nlohmann::json::array()};
    for (const TimedConvEngine &t : timing.timed) {
      conv.timed.push_back({{"plan", t.engine.name},
                            {"microseconds", t.microseconds},
                            {"workspace_bytes", t.engine.workspaceBytes},
                            {"numeric_notes", t.engine.numericNotes}});
      if (t.engine.name == p.heuristicPlan)
        conv.heuristicMicroseconds = t.microseconds;
    }
    std::ostringstream line;
    line.precision(1);
    line << std::fixed << "tcc-tune: [" << i + 1 << "/" << problems.size() << "] " << p.key
         << ": " << timing.timed.size() << " of " << timing.offered << " timed, fastest "
         << best.engine.name << " " << best.microseconds << " us";
    if (conv.heuristicMicroseconds >= 0)
      line << " (heuristics' " << p.heuristicPlan << " " << conv.heuristicMicroseconds
           << " us)";
    std::cerr << line.str() << "\n";
    if (withCutlass && !tuneCutlass(problem, stream, repeats, timing, conv, error))
      return fail(error);
    file.convs[p.key] = conv;
    // Rewritten after every problem: a run that is stopped keeps what it
    // measured (tcc compile --tuning-db says which problems it lacks).
    if (!tcc::writeFileAtomically(output, toJson(file).dump(1) + "\n", error))
      return fail(error);
  }
  if (problems.empty() && matmuls.empty() &&
      !tcc::writeFileAtomically(output, toJson(file).dump(1) + "\n", error))
    return fail(error);
  std::cerr << "tcc-tune: wrote " << output << "\n";
  return 0;
}
