//===- CudaConvPlans.cpp - Convolution problems and their baked engines ---===//

#include "codegen/cuda/CudaConvPlans.h"
#include "codegen/common/KernelArgs.h"
#include "runtime/cuda/AttentionWorkspace.h"
#include "runtime/cuda/CutlassKernel.h"
#include "runtime/cuda/MatmulProblem.h"
#include "runtime/cuda/RowSplit.h"
#include "runtime/cuda/TokenWorkspace.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::tcc;
namespace cuda = ::tcc::cuda;

namespace {

/// How much faster than cuDNN's fastest engine a CUTLASS kernel must have
/// been measured for tcc to bake it: more than the timings' spread (their
/// medians of 5 repeat within about 1%), so that noise never swaps them.
constexpr double kCutlassMargin = 0.97;

/// Where the tuning file timed a CUTLASS kernel for `conv` (tcc-tune-cutlass)
/// faster than cuDNN's fastest engine by the margin, that kernel replaces
/// the engine in `choice` (docs/tuning.md, "CUTLASS"). False with `error`
/// when the file's record is not one this tcc can build.
bool bakeFasterCutlass(const StepConv &conv, const cuda::GpuDescription &gpu,
                       int64_t workspaceLimit, const cuda::TunedChoice &tuned,
                       cuda::ConvChoice &choice, std::string &error) {
  if (!tuned.cutlass.is_array())
    return true;
  // Fastest first; those that failed, with no time, after the timed ones.
  auto fastest = llvm::find_if(tuned.cutlass, [](const nlohmann::json &row) {
    return row.is_object() && !row.contains("failure");
  });
  if (fastest == tuned.cutlass.end())
    return true;
  const nlohmann::json &row = *fastest;
  const bool named = row.contains("kernel") && row["kernel"].is_string();
  const std::string what = "the tuning file's CUTLASS kernel " +
                           (named ? row["kernel"].get<std::string>() : "(unnamed)") +
                           " for the " + cuda::directionName(conv.problem.direction) +
                           " convolution of " + quotedNodes(conv.nodes);
  cuda::CutlassKernel kernel;
  if (!named || !cuda::CutlassKernel::fromName(row["kernel"].get<std::string>(), kernel) ||
      !kernel.matches(conv.problem) || gpu.smVersion != 90 || !row.contains("microseconds") ||
      !row["microseconds"].is_number() || !row.contains("workspace_bytes") ||
      !row["workspace_bytes"].is_number_integer()) {
    error = what + " is not one this tcc builds for the problem (" + conv.problem.key() +
            ") on the " + gpu.name + "; run 'tcc tune' again";
    return false;
  }
  const double microseconds = row["microseconds"].get<double>();
  const int64_t workspace = row["workspace_bytes"].get<int64_t>();
  if (microseconds >= tuned.microseconds * kCutlassMargin)
    return true;
  if (workspace < 0 || workspace > workspaceLimit) {
    error = what + " needs a workspace of " + std::to_string(workspace) +
            " bytes, over the limit of " + std::to_string(workspaceLimit) +
            "; run 'tcc tune' again";
    return false;
  }
  choice.cutlass = kernel.name();
  choice.cutlassWorkspaceBytes = workspace;
  choice.cudnnMicroseconds = tuned.microseconds;
  choice.tunedMicroseconds = microseconds;
  return true;
}

/// The measured engine of `conv`. It is rebuilt for the described GPU, as
/// the trainer will rebuild it, where cuDNN can: some engines (the legacy
/// ones, eng0 to eng60 or so) exist only for a real device and cannot be
/// built for a description, yet were timed on the GPU the file is for; those
/// are trusted (the trainer rebuilds every plan when it starts and stops
/// if one does not build). The workspace is the larger of the two.
bool bakeTuned(const StepConv &conv, const cuda::GpuDescription &gpu, int64_t workspaceLimit,
               const cuda::TunedChoice &tuned, cuda::ConvChoice &choice, std::string &error) {
  std::string what = "the tuning file's engine " + tuned.name + " for the " +
                     cuda::directionName(conv.problem.direction) + " convolution of " +
                     quotedNodes(conv.nodes);
  cuda::ConvEngine &engine = choice.engine;
  if (!cuda::parsePlanName(tuned.name, engine)) {
    error = what + " is not a cuDNN plan name (eng<N>_k<knob>=<value>...)";
    return false;
  }
  std::string why;
  int64_t described = 0;
  choice.builtWithoutGpu =
      cuda::rebuildConvPlan(conv.problem, gpu, engine, described, why);
  engine.workspaceBytes = std::max(described, tuned.workspaceBytes);
  if (engine.workspaceBytes > workspaceLimit) {
    error = what + " needs a workspace of " + std::to_string(engine.workspaceBytes) +
            " bytes, over the limit of " + std::to_string(workspaceLimit) +
            "; run 'tcc tune' again";
    return false;
  }
  engine.name = tuned.name;
  choice.tunedMicroseconds = tuned.microseconds;
  return bakeFasterCutlass(conv, gpu, workspaceLimit, tuned, choice, error);
}

} // namespace

bool mlir::tcc::bakeConvPlans(ModuleOp module, const cuda::GpuDescription &gpu,
                              int64_t workspaceLimit, const cuda::TuningFile *tuning,
                              std::vector<BakedStepConv> &baked, std::string &error) {
  std::vector<StepConv> convs;
  if (!collectConvProblems(module, convs, error))
    return false;
  // The tuning file's engine, or cuDNN's heuristic choice: false with `why`
  // when there is none; false with `error` when the file's is unusable.
  auto choose = [&](const StepConv &conv, cuda::ConvChoice &choice, std::string &why) {
    auto tuned = tuning ? tuning->convs.find(conv.problem.key()) : cuda::TunedConvs::iterator{};
    if (tuning && tuned != tuning->convs.end())
      return bakeTuned(conv, gpu, workspaceLimit, tuned->second, choice, error);
    return cuda::chooseConvEngine(conv.problem, gpu, workspaceLimit, choice, why);
  };
  for (StepConv conv : convs) {
    cuda::ConvChoice choice;
    std::string why;
    bool chosen = choose(conv, choice, why);
    // Where cuDNN has no fused engine for an epilogue, the convolution runs
    // without it and the step adds the bias (and applies the ReLU) itself.
    if (!chosen && error.empty() && conv.problem.epilogue != cuda::ConvEpilogue::None) {
      conv.problem = conv.problem.withoutEpilogue();
      chosen = choose(conv, choice, why);
    }
    if (!error.empty())
      return false;
    if (!chosen) {
      error = std::string("the ") + cuda::directionName(conv.problem.direction) +
              " convolution of " + quotedNodes(conv.nodes) + " has no cuDNN engine on the " +
              gpu.name + ": " + why +
              "; try another --gpu, a larger workspace limit, or report the shape";
      return false;
    }
    auto same = llvm::find_if(
        baked, [&](const BakedStepConv &row) { return row.conv.problem == conv.problem; });
    if (same == baked.end()) {
      baked.push_back({conv, choice});
      continue;
    }
    for (const std::string &node : conv.nodes)
      if (!llvm::is_contained(same->conv.nodes, node))
        same->conv.nodes.push_back(node);
  }
  return true;
}

void mlir::tcc::attachCudaTarget(ModuleOp module, const cuda::GpuDescription &gpu,
                                 bool allowFallback, int64_t workspaceLimit,
                                 const std::vector<BakedStepConv> &baked) {
  Builder b(module.getContext());
  // The workspaces, which the memory plan places (tcc.workspace): a
  // convolution's is its engine's, a matmul's cuBLASLt's recommendation, a
  // batch norm's (training forward, backward; a synchronised one's sums)
  // and a bias gradient's (reduce_sum) their sums' over many blocks, a
  // sharded state's gather and scatter their padded whole tensors, an
  // attention's its f32 scores and its products' cuBLASLt workspace
  // (AttentionWorkspace.h), an embedding
  // backward its positions sorted by id and a token loss's backward its
  // scale (TokenWorkspace.h).
  std::map<std::string, int64_t> convWorkspace;
  std::vector<std::string> keys;
  for (const auto &[conv, choice] : baked) {
    convWorkspace[conv.problem.key()] = choice.bakedWorkspaceBytes();
    keys.push_back(conv.problem.key());
  }
  module.walk([&](Operation *op) {
    int64_t bytes = 0;
    if (isa<Conv2dOp, Conv2dBackwardDataOp, Conv2dBackwardFilterOp>(op)) {
      FailureOr<cuda::ConvProblem> problem = convProblemOf(op);
      if (succeeded(problem))
        if (std::optional<cuda::ConvProblem> row = bakedConvProblem(*problem, keys)) {
          bytes = convWorkspace[row->key()];
          // The KRSC weight and the f32 sums beside the engine's bytes.
          if (row->epilogue == cuda::ConvEpilogue::Statistics)
            bytes = cuda::StatisticsWorkspace(*row).bytes(bytes);
        }
    } else if (isa<LinearOp, LinearBackwardDataOp, LinearBackwardWeightOp, MatmulOp>(op)) {
      bytes = cuda::matmulWorkspaceBytes(gpu.smVersion);
    } else if (auto bn = dyn_cast<BatchNormOp>(op)) {
      // (Given its statistics, it sums nothing.)
      if (!bn.getSum())
        bytes = cuda::rowSplit(kernel_args::batchNorm(bn)).workspaceBytes();
    } else if (auto bn = dyn_cast<BatchNormBackwardOp>(op)) {
      bytes = cuda::rowSplit(kernel_args::batchNorm(bn)).workspaceBytes();
    } else if (auto sums = dyn_cast<BatchNormSumsOp>(op)) {
      bytes = cuda::rowSplit(kernel_args::batchNorm(sums)).workspaceBytes();
    } else if (auto sums = dyn_cast<BatchNormBackwardSumsOp>(op)) {
      bytes = cuda::rowSplit(kernel_args::batchNorm(sums)).workspaceBytes();
    } else if (isa<AllGatherOp, ReduceScatterOp>(op)) {
      // The whole tensors padded to ranks chunks each (Collectives.cuh).
      ValueRange chunks = isa<AllGatherOp>(op) ? ValueRange(op->getOperands())
                                               : ValueRange(op->getResults());
      const int64_t ranks = op->getAttrOfType<IntegerAttr>("ranks").getInt();
      for (Value chunk : chunks)
        bytes += ranks * tensorBytes(chunk.getType());
    } else if (auto attention = dyn_cast<ScaledDotProductAttentionOp>(op)) {
      bytes = cuda::attentionWorkspaceBytes(kernel_args::attention(attention), false,
                                            cuda::matmulWorkspaceBytes(gpu.smVersion));
    } else if (auto attention = dyn_cast<ScaledDotProductAttentionBackwardOp>(op)) {
      bytes = cuda::attentionWorkspaceBytes(kernel_args::attention(attention), true,
                                            cuda::matmulWorkspaceBytes(gpu.smVersion));
    } else if (auto embedding = dyn_cast<EmbeddingBackwardOp>(op)) {
      bytes = cuda::embeddingWorkspaceBytes(
          cast<ShapedType>(embedding.getIds().getType()).getNumElements(),
          embedding.getNumEmbeddings());
    } else if (isa<TokenCrossEntropyBackwardOp>(op)) {
      bytes = cuda::tokenLossWorkspaceBytes();
    } else if (auto sum = dyn_cast<ReduceSumOp>(op)) {
      if (std::optional<kernel_args::Around> a = kernel_args::keptAxis(sum))
        bytes = cuda::rowSplit({a->outer, a->axis, a->inner}).workspaceBytes();
    }
    // The fusion group an op is in runs it: the group's workspace is the
    // memory plan's to place (the larger, should two of its ops ask).
    Operation *runs = op;
    if (auto group = dyn_cast_or_null<FusionGroupOp>(op->getParentOp()))
      runs = group;
    if (WorkspaceAttr asked = getWorkspace(runs))
      bytes = std::max(bytes, asked.getBytes());
    if (bytes > 0)
      setWorkspace(runs, WorkspaceAttr::get(b.getContext(), bytes));
  });
  auto strings = [&](const std::vector<std::string> &texts) {
    SmallVector<Attribute> list;
    for (const std::string &text : texts)
      list.push_back(b.getStringAttr(text));
    return b.getArrayAttr(list);
  };
  SmallVector<Attribute> convs;
  for (const auto &[conv, choice] : baked) {
    NamedAttrList knobs;
    for (const auto &[knob, value] : choice.engine.knobs)
      knobs.append(std::to_string(knob), b.getI64IntegerAttr(value));
    NamedAttrList row;
    row.append("problem", b.getStringAttr(conv.problem.key()));
    row.append("direction", b.getStringAttr(cuda::directionName(conv.problem.direction)));
    row.append("nodes", strings(conv.nodes));
    row.append("engine", b.getI64IntegerAttr(choice.engine.engine));
    row.append("knobs", knobs.getDictionary(b.getContext()));
    row.append("plan", b.getStringAttr(choice.bakedName()));
    row.append("workspace_bytes", b.getI64IntegerAttr(choice.bakedWorkspaceBytes()));
    row.append("source", b.getStringAttr(choice.cutlass.empty() ? "cudnn" : "cutlass"));
    if (!choice.cutlass.empty()) { // the cuDNN engine it replaced
      row.append("cudnn_plan", b.getStringAttr(choice.engine.name));
      row.append("cudnn_microseconds", b.getF64FloatAttr(choice.cudnnMicroseconds));
    }
    row.append("numeric_notes", strings(choice.engine.numericNotes));
    row.append("candidates", b.getI64IntegerAttr(choice.candidates));
    row.append("rank", b.getI64IntegerAttr(choice.rank));
    bool tuned = choice.tunedMicroseconds >= 0;
    row.append("chosen_by", b.getStringAttr(tuned ? "tuning" : "heuristics"));
    if (tuned) {
      row.append("tuned_microseconds", b.getF64FloatAttr(choice.tunedMicroseconds));
      row.append("built_without_gpu", b.getBoolAttr(choice.builtWithoutGpu));
    }
    convs.push_back(row.getDictionary(b.getContext()));
  }
  module->setAttr(
      kCudaTargetAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("gpu", b.getStringAttr(gpu.name)),
           b.getNamedAttr("gpu_description", b.getStringAttr(gpu.marketing)),
           b.getNamedAttr("sm", b.getI64IntegerAttr(gpu.smVersion)),
           b.getNamedAttr("cudnn_version", b.getI64IntegerAttr(cuda::cudnnVersion())),
           b.getNamedAttr("allow_fallback", b.getBoolAttr(allowFallback)),
           b.getNamedAttr("workspace_limit_bytes", b.getI64IntegerAttr(workspaceLimit)),
           b.getNamedAttr("convs", b.getArrayAttr(convs))}));
}
