//===- TuningFile.cpp - What `tcc tune` measured, as JSON -----------------===//

#include "runtime/cuda/TuningFile.h"

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/MatmulProblem.h"

namespace tcc::cuda {

namespace {

/// A list of measured choices, `field` naming the choice ("plan", "algo").
nlohmann::json rowsOf(const std::map<std::string, TunedChoice> &choices,
                      const std::string &field) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto &[problem, tuned] : choices) {
    nlohmann::json row = {{"problem", problem},
                          {field, tuned.name},
                          {"workspace_bytes", tuned.workspaceBytes},
                          {"microseconds", tuned.microseconds},
                          {"heuristic_" + field, tuned.heuristicName},
                          {"heuristic_microseconds", nullptr},
                          {"timed", tuned.timed.is_null() ? nlohmann::json::array()
                                                          : tuned.timed}};
    if (tuned.heuristicMicroseconds >= 0)
      row["heuristic_microseconds"] = tuned.heuristicMicroseconds;
    if (!tuned.cutlass.is_null())
      row["cutlass"] = tuned.cutlass;
    rows.push_back(row);
  }
  return rows;
}

} // namespace

nlohmann::json toJson(const TuningFile &file) {
  nlohmann::json convs = rowsOf(file.convs, "plan"), matmuls = rowsOf(file.matmuls, "algo");
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

/// Reads the list `list` of `j` into `out`: each row's problem checked by
/// `isKey` (a problem kind's fromKey, named `kind` in messages), its choice
/// in `field` by `isName` (`nameRule` says what it must be).
template <class Fail, class Integer, class IsKey, class IsName>
bool readRows(const nlohmann::json &j, const std::string &list, const std::string &kind,
              IsKey isKey, const std::string &field, IsName isName,
              const std::string &nameRule, const Fail &fail, const Integer &integer,
              std::map<std::string, TunedChoice> &out) {
  out.clear();
  for (size_t i = 0; i < j[list].size(); ++i) {
    const nlohmann::json &row = j[list][i];
    std::string where = list + "[" + std::to_string(i) + "]: ", key;
    if (!row.is_object() || !row.contains("problem") || !row["problem"].is_string() ||
        !isKey(key = row["problem"].get<std::string>()))
      return fail(where + "\"problem\" is not a " + kind + " problem key");
    TunedChoice tuned;
    if (!row.contains(field) || !row[field].is_string() ||
        !isName(row[field].get<std::string>()))
      return fail(where + "\"" + field + "\" is " + nameRule);
    tuned.name = row[field].get<std::string>();
    if (!integer(row, "workspace_bytes", tuned.workspaceBytes, where))
      return false;
    if (!row.contains("microseconds") || !row["microseconds"].is_number())
      return fail(where + "\"microseconds\" is missing or not a number");
    tuned.microseconds = row["microseconds"].get<double>();
    // Optional, but of their type when present: value() would throw on
    // another type (the fuzz test found it).
    const std::string heuristic = "heuristic_" + field;
    if (row.contains(heuristic) && !row[heuristic].is_string())
      return fail(where + "\"" + heuristic + "\" is not a string");
    tuned.heuristicName = row.value(heuristic, "");
    if (row.contains("heuristic_microseconds") && row["heuristic_microseconds"].is_number())
      tuned.heuristicMicroseconds = row["heuristic_microseconds"].get<double>();
    if (row.contains("timed") && !row["timed"].is_array())
      return fail(where + "\"timed\" is not a list");
    tuned.timed = row.value("timed", nlohmann::json::array());
    if (row.contains("cutlass") && !row["cutlass"].is_array())
      return fail(where + "\"cutlass\" is not a list");
    tuned.cutlass = row.value("cutlass", nlohmann::json());
    if (!out.emplace(key, tuned).second)
      return fail(where + "the problem [" + key + "] is listed twice");
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
  if (!j.contains("format") || j["format"] != kTuningFormat)
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
  auto isConv = [](const std::string &key) {
    ConvProblem problem;
    return ConvProblem::fromKey(key, problem);
  };
  auto isPlan = [](const std::string &name) { return name.rfind("eng", 0) == 0; };
  if (!readRows(j, "convs", "convolution", isConv, "plan", isPlan,
                "not a cuDNN plan name (eng...)", fail, integer, file.convs))
    return false;
  // "matmuls" is absent from files of tcc before matmuls were tuned.
  file.matmuls.clear();
  file.cublasLtVersion = 0;
  if (!j.contains("matmuls"))
    return true;
  if (!j["matmuls"].is_array())
    return fail("\"matmuls\" is not a list");
  if (j["matmuls"].empty())
    return true;
  auto isMatmul = [](const std::string &key) {
    MatmulProblem problem;
    return MatmulProblem::fromKey(key, problem);
  };
  auto anyName = [](const std::string &) { return true; }; // checked where it is baked
  return integer(j, "cublaslt_version", file.cublasLtVersion, "") &&
         readRows(j, "matmuls", "matmul", isMatmul, "algo", anyName, "missing or not a string",
                  fail, integer, file.matmuls);
}

} // namespace tcc::cuda
