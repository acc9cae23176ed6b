//===- CompileExplain.cpp - `tcc compile --explain` -----------------------===//
//
// The report (docs/report.md) written for a reader: rendered from the same
// JSON as --report, so the two cannot tell different stories.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/CompileOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>
#include <vector>

using nlohmann::json;

namespace {

std::string bytes(const json &value) {
  double b = value.get<double>();
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (b >= 1024 && unit < 4) {
    b /= 1024;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(unit == 0 ? "%.0f %s" : "%.1f %s", b, units[unit]);
  return text;
}

/// "a, b, c" of a JSON array of strings, or "none".
std::string names(const json &list) {
  if (!list.is_array() || list.empty())
    return "none";
  std::string text;
  for (const json &name : list)
    text += (text.empty() ? "" : ", ") + name.get<std::string>();
  return text;
}

/// What an optimization pass did, in words.
std::string passResult(const std::string &pass, const json &result) {
  if (pass == "bn-bias-elimination")
    return "biases removed: " + names(result.value("removed", json::array()));
  if (pass == "frozen-step")
    return result.value("frozen", json::array()).empty()
               ? std::string("no parameter with train_epochs: one training step")
               : "a second training step from epoch " +
                     std::to_string(result.value("from_epoch", int64_t{0})) + " without " +
                     names(result.value("frozen", json::array()));
  if (pass == "pool-activation-reorder")
    return "pools moved in front of their activation: " +
           std::to_string(result.value("moved", int64_t{0}));
  if (pass == "pad-channels")
    return "16-bit convolutions whose few input channels were padded to 8: " +
           std::to_string(result.value("padded", int64_t{0}));
  if (pass == "channels-last")
    return std::to_string(result.value("values", int64_t{0})) + " tensors stored NHWC, " +
           std::to_string(result.value("relayouts", int64_t{0})) + " casts converting, " +
           std::to_string(result.value("kept_nchw", int64_t{0})) +
           " tensors of 16-bit convolutions kept NCHW";
  if (pass == "cuda-conv-statistics") {
    std::string text = "batch norms given their fp16 convolution's statistics (cuDNN genstats): " +
                       std::to_string(result.value("norms", int64_t{0}));
    if (result.value("no_engine", int64_t{0}) > 0)
      text += "; left with their own, no engine on the GPU: " +
              names(result.value("no_engine_nodes", json::array()));
    return text;
  }
  if (pass == "fusion") {
    std::string kinds;
    const json byKind = result.value("groups_by_kind", json::object());
    for (const auto &[kind, count] : byKind.items())
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(count.get<int64_t>()) + " " + kind;
    return std::to_string(result.value("groups", int64_t{0})) + " groups (" +
           (kinds.empty() ? "none" : kinds) + ") of " + std::to_string(result.value("ops_fused", int64_t{0})) +
           " ops";
  }
  if (pass == "precision") {
    std::string dtypes;
    const json byDtype = result.value("ops_by_dtype", json::object());
    for (const auto &[dtype, count] : byDtype.items())
      dtypes += (dtypes.empty() ? "" : ", ") + std::to_string(count.get<int64_t>()) + " " + dtype;
    std::string stored;
    if (result.contains("sixteen_bit_params"))
      stored = "; " + std::to_string(result.value("sixteen_bit_params", int64_t{0})) +
               " parameters stored in 16 bits";
    return result.value("precision", "fp32") + ", " + std::to_string(result.value("casts", int64_t{0})) +
           " casts; forward ops: " + (dtypes.empty() ? "none" : dtypes) + stored;
  }
  if (pass == "widen-16bit")
    return std::to_string(result.value("ops", int64_t{0})) + " ops with 16-bit tensors run on f32 copies (" +
           std::to_string(result.value("casts", int64_t{0})) + " casts)";
  if (pass == "bucket-collectives") {
    const json tensors = result.value("tensors", json::array()),
               sizes = result.value("bytes", json::array()),
               after = result.value("ops_after", json::array());
    std::string buckets;
    for (size_t i = 0; i < tensors.size() && i < sizes.size() && i < after.size(); ++i)
      buckets += (i ? ", " : "") + bytes(sizes[i]) + " (" +
                 std::to_string(tensors[i].get<int64_t>()) +
                 (tensors[i].get<int64_t>() == 1 ? " tensor, " : " tensors, ") +
                 std::to_string(after[i].get<int64_t>()) + " ops of the backward after it)";
    return "gradients summed in " + std::to_string(result.value("buckets", int64_t{0})) +
           " buckets: " + buckets;
  }
  if (pass == "gather-parameters")
    return "sharded parameters gathered per node: " +
           std::to_string(result.value("forward", int64_t{0})) + " before the forward's reads, " +
           std::to_string(result.value("backward", int64_t{0})) +
           " before the backward's; gradients reduce-scattered in " +
           std::to_string(result.value("reduce_scatters", int64_t{0})) + " messages";
  if (pass == "recompute") {
    const json free = result.value("free", json::array());
    const json budgeted = result.value("for_budget", json::array());
    return std::to_string(result.value("values", int64_t{0})) + " values recomputed, " +
           bytes(result.value("bytes_saved", int64_t{0})) + " saved; free (in the norm backward): " +
           names(free) + "; for the memory budget (+" +
           std::to_string(result.value("kernels_added", int64_t{0})) + " kernels): " + names(budgeted);
  }
  return result.dump();
}

/// "op (node)" of an entry of the report's ops.
std::string opText(const json &op) {
  std::string text = op["op"].get<std::string>();
  if (!op["node"].is_null())
    text += " (" + op["node"].get<std::string>() + ")";
  return text;
}

/// One line per kernel of a step: an op alone, or a fused group's ops (by
/// count when there are many, as in the multi-tensor update).
void listKernels(llvm::raw_ostream &os, const json &ops) {
  std::vector<std::vector<const json *>> kernels;
  int64_t lastGroup = -1;
  for (const json &op : ops) {
    const json &group = op["group"];
    if (group.is_null() || group.get<int64_t>() != lastGroup)
      kernels.emplace_back();
    lastGroup = group.is_null() ? -1 : group.get<int64_t>();
    kernels.back().push_back(&op);
  }
  constexpr size_t kListedOps = 4;
  for (auto [k, kernel] : llvm::enumerate(kernels)) {
    const json &first = *kernel.front();
    os << llvm::format("  %3d  ", static_cast<int>(k + 1));
    if (!first["group"].is_null())
      os << "[" << first["group_kind"].get<std::string>() << "] ";
    if (kernel.size() <= kListedOps) {
      for (auto [i, op] : llvm::enumerate(kernel))
        os << (i ? " + " : "") << opText(*op);
    } else {
      std::vector<std::pair<std::string, int>> counts;
      for (const json *op : kernel) {
        std::string name = (*op)["op"].get<std::string>();
        if (counts.empty() || counts.back().first != name)
          counts.emplace_back(name, 0);
        ++counts.back().second;
      }
      for (auto [i, count] : llvm::enumerate(counts))
        os << (i ? " + " : "") << count.second << " " << count.first;
    }
    if (!first["dtype"].is_null())
      os << ", " << first["dtype"].get<std::string>();
    os << "\n";
  }
}

} // namespace

std::string tcc::explainCompile(const json &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tcc compile " << report.value("model", "") << ": model '"
     << report.value("name", "") << "', target " << report.value("target", "")
     << ", precision " << report.value("precision", "") << "\n";
  os << "parameters: " << report.value("parameters", int64_t{0}) << " ("
     << report.value("trainable_parameters", int64_t{0}) << " trained by the step)\n";

  os << "passes, in order:\n";
  const json &results = report.contains("passes") ? report["passes"] : json::object();
  const json pipeline = report.value("pipeline", json::array());
  for (const json &pass : pipeline) {
    std::string name = pass.get<std::string>();
    std::string shortName = name.rfind("tcc-", 0) == 0 ? name.substr(4) : name;
    os << "  " << name;
    if (results.contains(shortName))
      os << ": " << passResult(shortName, results[shortName]);
    os << "\n";
  }
  if (!report.value("disabled_passes", json::array()).empty())
    os << "  left out (--disable-pass): " << names(report["disabled_passes"]) << "\n";

  if (report.contains("kernels_per_step"))
    os << "training step: " << report["kernels_per_step"].value("after_fusion", int64_t{0})
       << " kernels (" << report["kernels_per_step"].value("before_fusion", int64_t{0})
       << " before fusion)\n";
  if (report.contains("ops") && report["ops"].contains("train_step"))
    listKernels(os, report["ops"]["train_step"]);
  for (const json &step : report.value("train_steps", json::array()))
    if (step.value("from_epoch", int64_t{0}) > 0)
      os << "from epoch " << step.value("from_epoch", int64_t{0}) << " on: @"
         << step.value("name", "") << ", " << step.value("kernels", int64_t{0})
         << " kernels, without the gradients and updates of "
         << names(step.value("leaves_out", json::array())) << "\n";

  if (report.contains("peak_bytes")) {
    // The steps share one scratch arena, the largest of their plans.
    int64_t scratch = 0;
    for (const json &step : report["scratch_bytes"])
      scratch = std::max(scratch, step.get<int64_t>());
    os << "memory (planned): " << bytes(report["peak_bytes"]) << " at the peak = state "
       << bytes(report["state_bytes"]) << " + scratch " << bytes(scratch) << " + batch "
       << bytes(report["batch_bytes"]) << "\n";
  }
  if (report.contains("memory_budget"))
    os << "memory budget: " << bytes(report["memory_budget"]) << "\n";
  const json warnings = report.value("warnings", json::array());
  for (const json &warning : warnings)
    os << "warning: " << warning.get<std::string>() << "\n";
  return text;
}
