//===- ConvPlansTest.cpp - cuDNN engines chosen without a GPU -------------===//
//
// cuDNN's heuristics and plan builder run here on described GPUs (no GPU on
// this machine): every built-in description is accepted, the usual
// convolution shapes get an engine in each direction and type, a baked
// choice rebuilds into the same plan (what the trainer does at start), f32
// convolutions never round to TF32, and errors name the problem.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/ConvPlans.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tcc::cuda;

namespace {

/// A ResNet-style 3x3 convolution: 64 -> 128 channels, 32x32, pad 1.
ConvProblem resnetConv(ConvDirection direction, ConvDataType dtype) {
  ConvProblem p;
  p.direction = direction;
  p.dtype = dtype;
  p.layout = ConvLayout::NCHW;
  p.n = 64, p.c = 64, p.h = 32, p.w = 32, p.k = 128, p.r = 3, p.s = 3;
  p.p = 32, p.q = 32, p.padH = 1, p.padW = 1;
  return p;
}

const GpuDescription &gpu(const char *name) {
  std::string error;
  const GpuDescription *found = findGpu(name, error);
  EXPECT_NE(found, nullptr) << error;
  return *found;
}

bool hasNote(const ConvEngine &engine, const std::string &note) {
  return std::find(engine.numericNotes.begin(), engine.numericNotes.end(),
                   note) != engine.numericNotes.end();
}

} // namespace

TEST(GpuDescriptions, NamesAndArchitectures) {
  EXPECT_STREQ(gpu("h100").name, "h100");
  EXPECT_STREQ(gpu("h200").name, "h200");
  EXPECT_STREQ(gpu("a100").name, "a100");
  EXPECT_STREQ(gpu("sm_80").name, "a100");
  EXPECT_STREQ(gpu("sm_90a").name, "h100");
  EXPECT_EQ(gpu("a100").smVersion, 80);
  EXPECT_EQ(gpu("h200").smVersion, 90);
  std::string error;
  EXPECT_EQ(findGpu("v100", error), nullptr);
  EXPECT_NE(error.find("unknown GPU 'v100'"), std::string::npos) << error;
  EXPECT_NE(error.find("h100 | h200 | a100"), std::string::npos) << error;
}

TEST(ConvPlans, CudnnIsNewEnoughToPlanWithoutAGpu) {
  EXPECT_GE(cudnnVersion(), 90800);
}

// Every direction and type of a common convolution has an engine on every
// built-in GPU, and the baked choice rebuilds into a plan with the same
// workspace.
TEST(ConvPlans, EveryDirectionAndTypeHasAnEngineThatRebuilds) {
  for (const GpuDescription &target : builtinGpus())
    for (ConvDirection direction : {ConvDirection::Forward, ConvDirection::BackwardData,
                                    ConvDirection::BackwardFilter})
      for (ConvDataType dtype : {ConvDataType::Float32, ConvDataType::BFloat16,
                                 ConvDataType::Float16}) {
        ConvProblem problem = resnetConv(direction, dtype);
        SCOPED_TRACE(std::string(target.name) + ": " + problem.key());
        ConvChoice choice;
        std::string error;
        ASSERT_TRUE(chooseConvEngine(problem, target, kDefaultConvWorkspaceLimit,
                                     choice, error))
            << error;
        EXPECT_GE(choice.engine.engine, 0);
        EXPECT_GT(choice.candidates, 0);
        EXPECT_LE(choice.engine.workspaceBytes, kDefaultConvWorkspaceLimit);
        EXPECT_FALSE(choice.engine.name.empty());
        int64_t workspace = -1;
        ASSERT_TRUE(rebuildConvPlan(problem, target, choice.engine, workspace, error))
            << error;
        EXPECT_EQ(workspace, choice.engine.workspaceBytes);
        // Runs repeat bit for bit: no engine that accumulates with atomics.
        EXPECT_FALSE(hasNote(choice.engine, "NONDETERMINISTIC"));
        // f32 stays f32: no TF32 tensor-core engine. 16-bit runs on them.
        if (dtype == ConvDataType::Float32)
          EXPECT_FALSE(hasNote(choice.engine, "TENSOR_CORE"));
        else
          EXPECT_TRUE(hasNote(choice.engine, "TENSOR_CORE"));
      }
}

// Shapes from the examples that are easy to get wrong: strided, grouped,
// 1x1, 16-bit with an input of 3 channels, and 16-bit in NHWC.
TEST(ConvPlans, UnusualShapesHaveEngines) {
  std::vector<ConvProblem> problems;
  ConvProblem strided = resnetConv(ConvDirection::Forward, ConvDataType::BFloat16);
  strided.strideH = strided.strideW = 2, strided.p = strided.q = 16;
  problems.push_back(strided);
  ConvProblem grouped = resnetConv(ConvDirection::BackwardFilter, ConvDataType::Float32);
  grouped.groups = 4;
  problems.push_back(grouped);
  ConvProblem pointwise = resnetConv(ConvDirection::BackwardData, ConvDataType::Float16);
  pointwise.r = pointwise.s = 1, pointwise.padH = pointwise.padW = 0;
  problems.push_back(pointwise);
  ConvProblem rgb = resnetConv(ConvDirection::Forward, ConvDataType::BFloat16);
  rgb.c = 3;
  problems.push_back(rgb);
  ConvProblem channelsLast = resnetConv(ConvDirection::BackwardFilter, ConvDataType::BFloat16);
  channelsLast.layout = ConvLayout::NHWC;
  problems.push_back(channelsLast);
  for (const ConvProblem &problem : problems) {
    SCOPED_TRACE(problem.key());
    ConvChoice choice;
    std::string error;
    EXPECT_TRUE(chooseConvEngine(problem, gpu("h100"), kDefaultConvWorkspaceLimit,
                                 choice, error))
        << error;
  }
}

// Why tcc-channels-last stores 16-bit activations NHWC: cuDNN's engines for
// 16-bit NCHW tensors transpose them inside their workspace (at least one
// activation's bytes); on NHWC activations with the KCRS weight the engines
// need less than one activation in every direction (the weight's
// transpose, split-K sums).
TEST(ConvPlans, SixteenBitChannelsLastNeedsNoActivationTranspose) {
  for (ConvDirection direction :
       {ConvDirection::Forward, ConvDirection::BackwardData, ConvDirection::BackwardFilter}) {
    ConvProblem nchw = resnetConv(direction, ConvDataType::BFloat16), nhwc = nchw;
    nhwc.layout = ConvLayout::NHWC;
    const int64_t activationBytes = std::min(nchw.n * nchw.c * nchw.h * nchw.w,
                                             nchw.n * nchw.k * nchw.p * nchw.q) * 2;
    ConvChoice first, last;
    std::string error;
    ASSERT_TRUE(chooseConvEngine(nchw, gpu("h100"), kDefaultConvWorkspaceLimit, first, error))
        << error;
    ASSERT_TRUE(chooseConvEngine(nhwc, gpu("h100"), kDefaultConvWorkspaceLimit, last, error))
        << error;
    SCOPED_TRACE(nhwc.key());
    EXPECT_GE(first.engine.workspaceBytes, activationBytes);
    EXPECT_LT(last.engine.workspaceBytes, activationBytes);
  }
}

// A forward convolution's bias and ReLU in cuDNN's epilogue (the cuda
// target's conv_epilogue groups): every built-in GPU has a fused engine in
// each type and layout the step uses, built for the description with no GPU
// (the engines that compile a kernel at run time cannot be), which
// rebuilds; f32 stays off tensor cores there too. cuDNN's fused engines
// are its plain ones with an epilogue: the same knobs and workspace as the
// plain problem's choice (measured on cuDNN 9.19: eng62 -> eng41, eng70 ->
// eng44, eng28 -> eng11), so the epilogue costs the convolution nothing
// it can see without a GPU.
TEST(ConvPlans, BiasAndReluEpiloguesHaveEnginesThatRebuild) {
  for (const GpuDescription &target : builtinGpus())
    for (ConvEpilogue epilogue : {ConvEpilogue::Bias, ConvEpilogue::BiasRelu})
      for (ConvDataType dtype :
           {ConvDataType::Float32, ConvDataType::BFloat16, ConvDataType::Float16}) {
        ConvProblem problem = resnetConv(ConvDirection::Forward, dtype);
        problem.epilogue = epilogue;
        if (dtype != ConvDataType::Float32)
          problem.layout = ConvLayout::NHWC;
        SCOPED_TRACE(std::string(target.name) + ": " + problem.key());
        ConvChoice fused, plain;
        std::string error;
        ASSERT_TRUE(chooseConvEngine(problem, target, kDefaultConvWorkspaceLimit, fused, error))
            << error;
        ASSERT_TRUE(chooseConvEngine(problem.withoutEpilogue(), target,
                                     kDefaultConvWorkspaceLimit, plain, error))
            << error;
        EXPECT_NE(fused.engine.engine, plain.engine.engine);
        int64_t workspace = -1;
        ASSERT_TRUE(rebuildConvPlan(problem, target, fused.engine, workspace, error)) << error;
        EXPECT_EQ(workspace, fused.engine.workspaceBytes);
        EXPECT_FALSE(hasNote(fused.engine, "NONDETERMINISTIC"));
        EXPECT_EQ(hasNote(fused.engine, "TENSOR_CORE"), dtype != ConvDataType::Float32);
      }
}

// A forward convolution that gathers its output's per-channel statistics
// (cuDNN's genstats, the cuda target's conv_statistics groups): fp16 NHWC
// with the weight KRSC has engines on the H100 and the A100 descriptions,
// built without a GPU, deterministic, which rebuild with
// the same workspace; bf16 has none (the cuda target leaves bf16 norms as
// they are). Measured on cuDNN 9.19: 10 candidates on the h100, 4 on the
// a100 (docs/performance.md, 2026-11-28).
TEST(ConvPlans, StatisticsGraphHasFp16EnginesThatRebuild) {
  for (const char *name : {"h100", "h200", "a100"}) {
    const GpuDescription &target = gpu(name);
    ConvProblem problem = resnetConv(ConvDirection::Forward, ConvDataType::Float16);
    problem.layout = ConvLayout::NHWC;
    problem.epilogue = ConvEpilogue::Statistics;
    SCOPED_TRACE(std::string(name) + ": " + problem.key());
    EXPECT_TRUE(problem.weightChannelsLast());
    ConvChoice choice;
    std::string error;
    ASSERT_TRUE(chooseConvEngine(problem, target, kDefaultConvWorkspaceLimit, choice, error))
        << error;
    // (No TENSOR_CORE note, which the plain fp16 engines carry: the fused
    // engines' notes do not say; the GPU profile will.)
    EXPECT_FALSE(hasNote(choice.engine, "NONDETERMINISTIC"));
    EXPECT_GT(choice.candidates, 0);
    int64_t workspace = -1;
    ASSERT_TRUE(rebuildConvPlan(problem, target, choice.engine, workspace, error)) << error;
    EXPECT_EQ(workspace, choice.engine.workspaceBytes);

    ConvProblem bf16 = problem;
    bf16.dtype = ConvDataType::BFloat16;
    ConvChoice none;
    EXPECT_FALSE(chooseConvEngine(bf16, target, kDefaultConvWorkspaceLimit, none, error));
  }
}

// The statistics problem's key, its workspace parts (the KRSC weight, the
// f32 sums, then the engine's) and its reading back.
TEST(ConvPlans, StatisticsProblemKeyAndWorkspace) {
  ConvProblem problem = resnetConv(ConvDirection::Forward, ConvDataType::Float16);
  problem.layout = ConvLayout::NHWC;
  ConvProblem stats = problem;
  stats.epilogue = ConvEpilogue::Statistics;
  EXPECT_EQ(stats.key(), problem.key() + " +genstats");
  EXPECT_TRUE(stats.withoutEpilogue() == problem);
  EXPECT_FALSE(problem.weightChannelsLast());
  ConvProblem read;
  ASSERT_TRUE(ConvProblem::fromKey(stats.key(), read));
  EXPECT_EQ(read.epilogue, ConvEpilogue::Statistics);
  const StatisticsWorkspace parts(stats);
  EXPECT_EQ(parts.sumsOffset, 128 * 64 * 9 * 2);  // 147456, a multiple of 256
  EXPECT_EQ(parts.engineOffset, parts.sumsOffset + 1024);
  EXPECT_EQ(parts.bytes(100), parts.engineOffset + 100);
}

TEST(ConvPlans, ProblemKeysAreReadableAndDistinct) {
  ConvProblem fwd = resnetConv(ConvDirection::Forward, ConvDataType::BFloat16);
  EXPECT_EQ(fwd.key(), "fwd bf16 nchw n64 c64 h32 w32 k128 r3 s3 p32 q32 pad1,1 "
                       "stride1,1 dil1,1 g1");
  ConvProblem channelsLast = fwd;
  channelsLast.layout = ConvLayout::NHWC;
  EXPECT_EQ(channelsLast.key().substr(0, 14), "fwd bf16 nhwc ");
  ConvProblem other = fwd;
  other.groups = 2;
  EXPECT_FALSE(other == fwd);
  EXPECT_EQ(resnetConv(ConvDirection::BackwardFilter, ConvDataType::Float32).key().substr(0, 20),
            "bwd-filter f32 nchw ");
  ConvProblem biased = fwd, relu = fwd;
  biased.epilogue = ConvEpilogue::Bias;
  relu.epilogue = ConvEpilogue::BiasRelu;
  EXPECT_EQ(biased.key(), fwd.key() + " +bias");
  EXPECT_EQ(relu.key(), fwd.key() + " +bias+relu");
  EXPECT_FALSE(biased == fwd);
  EXPECT_TRUE(relu.withoutEpilogue() == fwd);
}

// The trainer's baked table holds keys: each reads back into the problem it
// names, and nothing else is taken for a key.
TEST(ConvPlans, ProblemKeysReadBack) {
  ConvProblem odd = resnetConv(ConvDirection::BackwardData, ConvDataType::Float16);
  odd.strideH = 2, odd.padW = 0, odd.dilationH = 3, odd.groups = 4, odd.q = 30;
  ConvProblem biased = resnetConv(ConvDirection::Forward, ConvDataType::Float16);
  biased.epilogue = ConvEpilogue::BiasRelu;
  for (const ConvProblem &problem :
       {odd, biased, resnetConv(ConvDirection::Forward, ConvDataType::Float32),
        resnetConv(ConvDirection::BackwardFilter, ConvDataType::BFloat16)}) {
    ConvProblem read;
    ASSERT_TRUE(ConvProblem::fromKey(problem.key(), read)) << problem.key();
    EXPECT_EQ(read.key(), problem.key());
    EXPECT_EQ(read.direction, problem.direction);
    EXPECT_EQ(read.dtype, problem.dtype);
    EXPECT_EQ(read.layout, problem.layout);
    EXPECT_EQ(read.dilationH, problem.dilationH);
    EXPECT_EQ(read.groups, problem.groups);
    EXPECT_EQ(read.epilogue, problem.epilogue);
  }
  ConvProblem read;
  std::string key = odd.key();
  for (const std::string &bad :
       {std::string(""), key + " ", key.substr(0, key.size() - 1) + "x",
        "fwd f64" + key.substr(key.find(' ', 4)), "up" + key.substr(key.find(' ')),
        key.substr(0, key.find(" g")), key + " +bias", biased.key() + " +bias",
        biased.key().substr(0, biased.key().size() - 1)})
    EXPECT_FALSE(ConvProblem::fromKey(bad, read)) << bad;
}

// An engine that does not exist for the problem is refused by name, not
// built into a plan that would fail on the GPU.
TEST(ConvPlans, AnUnknownEngineIsRefusedWithTheProblem) {
  ConvProblem problem = resnetConv(ConvDirection::Forward, ConvDataType::BFloat16);
  ConvEngine bogus;
  bogus.engine = 99999;
  bogus.name = "eng99999";
  int64_t workspace = 0;
  std::string error;
  EXPECT_FALSE(rebuildConvPlan(problem, gpu("h100"), bogus, workspace, error));
  EXPECT_NE(error.find("cannot build engine 99999"), std::string::npos) << error;
  EXPECT_NE(error.find(problem.key()), std::string::npos) << error;
}

// A shape cuDNN refuses (a weight wider than the padded input) is an error
// that names the problem.
TEST(ConvPlans, AnImpossibleProblemIsAnErrorNotACrash) {
  ConvProblem problem = resnetConv(ConvDirection::Forward, ConvDataType::Float32);
  problem.r = problem.s = 40;
  ConvChoice choice;
  std::string error;
  EXPECT_FALSE(chooseConvEngine(problem, gpu("a100"), kDefaultConvWorkspaceLimit,
                                choice, error));
  EXPECT_NE(error.find(problem.key()), std::string::npos) << error;
}
