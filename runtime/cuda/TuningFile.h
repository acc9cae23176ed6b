//===- TuningFile.h - What `tcc tune` measured, as JSON ---------*- C++ -*-===//
//
// A tuning file (format tcc-tuning/1, docs/tuning.md) holds, for one GPU and
// one cuDNN version, the fastest engine configuration of every convolution
// problem `tcc tune` timed, and the fastest cuBLASLt algorithm of every
// matmul problem (with the cuBLASLt version it was timed with). The tuner (runtime/cuda/tune/TuneMain.cpp, on the
// GPU) writes it; `tcc compile --tuning-db` reads it and bakes its choices
// instead of cuDNN's heuristics. Plain C++ and nlohmann/json: no cuDNN.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_TUNINGFILE_H
#define TCC_RUNTIME_CUDA_TUNINGFILE_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace tcc::cuda {

constexpr const char *kTuningFormat = "tcc-tuning/1";

/// The measured choice for one problem: a convolution's cuDNN engine
/// configuration (its name "eng12_k2=1_k3=0", the file's "plan") or a
/// matmul's cuBLASLt algorithm (MatmulAlgo::name() "algo21_tile18_...",
/// the file's "algo").
struct TunedChoice {
  std::string name;
  int64_t workspaceBytes = 0;
  double microseconds = 0;    ///< its median time on the tuned GPU
  /// What the heuristics rank first (what tcc bakes without a tuning file;
  /// for a matmul, under the tuner's limits) and its time there;
  /// empty/negative when not timed.
  std::string heuristicName;
  double heuristicMicroseconds = -1;
  nlohmann::json timed;       ///< every candidate timed, fastest first
  /// A convolution's CUTLASS kernels as tcc-tune-cutlass timed them
  /// (CutlassTuner.h), fastest first, then those that failed; null when
  /// not timed. `tcc compile --tuning-db` bakes the fastest where it beat
  /// cuDNN's engines (codegen/cuda/CudaConvPlans.cpp).
  nlohmann::json cutlass;
};

using TunedConvs = std::map<std::string, TunedChoice>;   ///< by ConvProblem::key()
using TunedMatmuls = std::map<std::string, TunedChoice>; ///< by MatmulProblem::key()

struct TuningFile {
  std::string gpu;      ///< tcc's name of the GPU (h100, h200, a100) or sm_XX
  std::string device;   ///< as CUDA names it: "NVIDIA H200"
  int sm = 0;           ///< compute capability, 10 * major + minor
  int64_t cudnnVersion = 0;
  int64_t workspaceLimitBytes = 0;
  std::string tunedAt;  ///< UTC, ISO 8601
  /// cuDNN's description of the tuned GPU (device-property JSON), for
  /// comparing with tcc's built-in one; not read back.
  nlohmann::json deviceProperties;
  TunedConvs convs;
  /// cublasLtGetVersion() where the matmuls were timed; 0 with no matmul.
  int64_t cublasLtVersion = 0;
  TunedMatmuls matmuls;
};

nlohmann::json toJson(const TuningFile &file);

/// Reads `text` (the file `path`, for messages). "matmuls" may be absent
/// (files of tcc before matmuls were tuned). False with `error`, one
/// line naming the file and what is wrong.
bool parseTuningFile(const std::string &text, const std::string &path, TuningFile &file,
                     std::string &error);

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_TUNINGFILE_H
