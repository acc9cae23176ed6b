//===- TuningFile.cpp - What `tcc tune` measured, as JSON -----------------===//

#include "runtime/cuda/TuningFile.h"

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/MatmulProblem.h"

namespace tcc::cuda {

nlohmann::json toJson(const TuningFile &file) {
  nlohmann::json convs = nlohmann::json::array();
  for (const auto &[problem, conv] : file.convs) {
    nlohmann::json row = {{"problem", problem},
                          {"plan", conv.plan},
                          {"workspace_bytes", conv.workspaceBytes},
                          {"microseconds", conv.microseconds},
                          {"heuristic_plan", conv.heuristicPlan},
                          {"heuristic_microseconds", nullptr},
                          {"timed", conv.timed.is_null() ? nlohmann::json::array() : conv.timed}};
    if (conv.heuristicMicroseconds >= 0)
      row["heuristic_microseconds"] = conv.heuristicMicroseconds;
    convs.push_back(row);
  }
  nlohmann::json matmuls = nlohmann::json::array();
  for (const auto &[problem, matmul] : file.matmuls) {
    nlohmann::json row = {{"problem", problem},
                          {"algo", matmul.algo},
                          {"workspace_bytes", matmul.workspaceBytes},
                          {"microseconds", matmul.microseconds},
                          {"heuristic_algo", matmul.heuristicAlgo},
                          {"heuristic_microseconds", nullptr},
                          {"timed", matmul.timed.is_null() ? nlohmann::json::array()
                                                           : matmul.timed}};
    if (matmul.heuristicMicroseconds >= 0)
      row["heuristic_microseconds"] = matmul.heuristicMicroseconds;
    matmuls.push_back(row);
  }
  return {{"format", kTuningFormat},
          {"gpu", file.gpu},
          {"device", file.device},
          {"sm", file.sm},
          {"cudnn_version", file.cudnnVersion},
          {"workspace_limit_bytes", file.workspaceLimitBytes},
          {"tuned_at", file.tunedAt},
          {"device_properties", file.deviceProperties},
          {"convs", convs},
          {"cublaslt_version", file.cublasLtVersion},
          {"matmuls", matmuls}};
}

namespace {

/// The "matmuls" list and "cublaslt_version" of tuning file `j`.
template <class Fail, class Integer>
bool parseMatmuls(const nlohmann::json &j, const Fail &fail, const Integer &integer,
                  TuningFile &file) {
  file.matmuls.clear();
  file.cublasLtVersion = 0;
  if (!j.contains("matmuls"))
    return true;
  if (!j["matmuls"].is_array())
    return fail("\"matmuls\" is not a list");
  if (j["matmuls"].empty())
    return true;
  if (!integer(j, "cublaslt_version", file.cublasLtVersion, ""))
    return false;
  for (size_t i = 0; i < j["matmuls"].size(); ++i) {
    const nlohmann::json &row = j["matmuls"][i];
    std::string where = "matmuls[" + std::to_string(i) + "]: ";
    MatmulProblem problem;
    if (!row.is_object() || !row.contains("problem") || !row["problem"].is_string() ||
        !MatmulProblem::fromKey(row["problem"].get<std::string>(), problem))
      return fail(where + "\"problem\" is not a matmul problem key");
    TunedMatmul matmul;
    if (!row.contains("algo") || !row["algo"].is_string())
      return fail(where + "\"algo\" is missing or not a string");
    matmul.algo = row["algo"].get<std::string>();
    if (!integer(row, "workspace_bytes", matmul.workspaceBytes, where))
      return false;
    if (!row.contains("microseconds") || !row["microseconds"].is_number())
      return fail(where + "\"microseconds\" is missing or not a number");
    matmul.microseconds = row["microseconds"].get<double>();
    matmul.heuristicAlgo = row.value("heuristic_algo", "");
    if (row.contains("heuristic_microseconds") && row["heuristic_microseconds"].is_number())
      matmul.heuristicMicroseconds = row["heuristic_microseconds"].get<double>();
    matmul.timed = row.value("timed", nlohmann::json::array());
    if (!file.matmuls.emplace(problem.key(), matmul).second)
      return fail(where + "the problem [" + problem.key() + "] is listed twice");
  }
  return true;
}

} // namespace

bool parseTuningFile(const std::string &text, const std::string &path, TuningFile &file,
                     std::string &error) {
  auto fail = [&](const std::string &what) {
    error = path + ": " + what + " (a tuning file is written by 'tcc tune', docs/tuning.md)";
    return false;
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return fail("not JSON, or not a JSON object");
  if (j.value("format", "") != kTuningFormat)
    return fail("format is not \"" + std::string(kTuningFormat) + "\"");
  auto string = [&](const char *key, std::string &out) {
    if (!j.contains(key) || !j[key].is_string())
      return fail(std::string("\"") + key + "\" is missing or not a string");
    out = j[key].get<std::string>();
    return true;
  };
  auto integer = [&](const nlohmann::json &o, const char *key, int64_t &out,
                     const std::string &where) {
    if (!o.contains(key) || !o[key].is_number_integer() || o[key].get<int64_t>() < 0)
      return fail(where + "\"" + key + "\" is missing or not a non-negative integer");
    out = o[key].get<int64_t>();
    return true;
  };
  int64_t sm = 0;
  if (!string("gpu", file.gpu) || !string("device", file.device) ||
      !string("tuned_at", file.tunedAt) || !integer(j, "sm", sm, "") ||
      !integer(j, "cudnn_version", file.cudnnVersion, "") ||
      !integer(j, "workspace_limit_bytes", file.workspaceLimitBytes, ""))
    return false;
  file.sm = int(sm);
  if (!j.contains("convs") || !j["convs"].is_array())
    return fail("\"convs\" is missing or not a list");
  file.convs.clear();
  for (size_t i = 0; i < j["convs"].size(); ++i) {
    const nlohmann::json &row = j["convs"][i];
    std::string where = "convs[" + std::to_string(i) + "]: ";
    ConvProblem problem;
    if (!row.is_object() || !row.contains("problem") || !row["problem"].is_string() ||
        !ConvProblem::fromKey(row["problem"].get<std::string>(), problem))
      return fail(where + "\"problem\" is not a convolution problem key");
    TunedConv conv;
    if (!row.contains("plan") || !row["plan"].is_string() ||
        row["plan"].get<std::string>().rfind("eng", 0) != 0)
      return fail(where + "\"plan\" is not a cuDNN plan name (eng...)");
    conv.plan = row["plan"].get<std::string>();
    if (!integer(row, "workspace_bytes", conv.workspaceBytes, where))
      return false;
    if (!row.contains("microseconds") || !row["microseconds"].is_number())
      return fail(where + "\"microseconds\" is missing or not a number");
    conv.microseconds = row["microseconds"].get<double>();
    conv.heuristicPlan = row.value("heuristic_plan", "");
    if (row.contains("heuristic_microseconds") && row["heuristic_microseconds"].is_number())
      conv.heuristicMicroseconds = row["heuristic_microseconds"].get<double>();
    conv.timed = row.value("timed", nlohmann::json::array());
    if (!file.convs.emplace(problem.key(), conv).second)
      return fail(where + "the problem [" + problem.key() + "] is listed twice");
  }
  return parseMatmuls(j, fail, integer, file);
}

} // namespace tcc::cuda
