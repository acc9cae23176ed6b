//===- CutlassCandidatesTest.cpp - CUTLASS's kernels, without a GPU -------===//
//
// The CI build of runtime/cuda/tune/CutlassCandidates.cu (one f16 kernel per
// direction, TCC_CUTLASS_SMOKE) linked with CutlassTuner.cpp: the kernels
// register under their names, and CUTLASS's host-side checks (can_implement,
// the workspace) answer for the convolutions tcc poses, on a machine
// without a GPU. Whether their sums are cuDNN's is tcc-tune-cutlass's check
// on the GPU (docs/tuning.md, "CUTLASS").
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CutlassTuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

using namespace tcc::cuda;

namespace {

/// A 3x3 convolution of airbench94's first block: 24 -> 64 channels on
/// 31x31 maps, fp16 channels-last.
ConvProblem thinConv(ConvDirection direction) {
  ConvProblem p;
  p.direction = direction;
  p.dtype = ConvDataType::Float16;
  p.layout = ConvLayout::NHWC;
  p.n = 512, p.c = 24, p.h = 31, p.w = 31, p.k = 64, p.r = 3, p.s = 3, p.p = 31, p.q = 31;
  p.padH = p.padW = 1;
  return p;
}

const CutlassCandidate *candidateFor(ConvDirection direction) {
  for (const CutlassCandidate &c : cutlassCandidates())
    if (c.kernel.direction == direction)
      return &c;
  return nullptr;
}

} // namespace

TEST(CutlassCandidates, OneF16KernelPerDirectionUnderItsName) {
  ASSERT_EQ(cutlassCandidates().size(), 3u);
  const std::regex name("cutlass_sm90_f16_(fprop|dgrad|wgrad)_128x64x64_c1");
  const char *const directions[] = {"fprop", "dgrad", "wgrad"};
  for (ConvDirection d :
       {ConvDirection::Forward, ConvDirection::BackwardData, ConvDirection::BackwardFilter}) {
    const CutlassCandidate *c = candidateFor(d);
    ASSERT_NE(c, nullptr) << directionName(d);
    EXPECT_TRUE(std::regex_match(c->name(), name)) << c->name();
    EXPECT_NE(c->name().find(directions[int(d)]), std::string::npos) << c->name();
    EXPECT_EQ(c->kernel.dtype, ConvDataType::Float16);
  }
}

TEST(CutlassCandidates, ComputeTheThinConvInEveryDirection) {
  for (ConvDirection d :
       {ConvDirection::Forward, ConvDirection::BackwardData, ConvDirection::BackwardFilter}) {
    const ConvProblem p = thinConv(d);
    const CutlassCandidate *c = candidateFor(d);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->unsupported(p), "") << p.key();
    EXPECT_EQ(cutlassCandidatesFor(p), std::vector<std::string>{c->name()});
    // The KRSC weight (64 x 3 x 3 x 24 halves, 256-byte aligned) at least.
    EXPECT_GE(c->workspaceBytes(p), 27648) << p.key();
    EXPECT_EQ(c->workspaceBytes(p) % 256, 0) << p.key();
  }
  // A stride-2 downsampling convolution, 64 -> 128 channels.
  ConvProblem down = thinConv(ConvDirection::Forward);
  down.c = 64, down.k = 128, down.strideH = down.strideW = 2, down.p = down.q = 16;
  EXPECT_EQ(candidateFor(ConvDirection::Forward)->unsupported(down), "") << down.key();
}

TEST(CutlassCandidates, RefuseWhatTheyCannotCompute) {
  const CutlassCandidate *fprop = candidateFor(ConvDirection::Forward);
  ASSERT_NE(fprop, nullptr);
  ConvProblem p = thinConv(ConvDirection::Forward);
  p.c = 3; // rows of 6 bytes: not the 16-byte alignment TMA needs
  EXPECT_NE(fprop->unsupported(p).find("can_implement"), std::string::npos);
  EXPECT_TRUE(cutlassCandidatesFor(p).empty());
  p = thinConv(ConvDirection::Forward);
  p.layout = ConvLayout::NCHW;
  EXPECT_NE(fprop->unsupported(p).find("not a plain NHWC"), std::string::npos);
  p = thinConv(ConvDirection::Forward);
  p.epilogue = ConvEpilogue::BiasRelu;
  EXPECT_NE(fprop->unsupported(p), "");
  // No bf16 or f32 kernel in this build; f32 has none at all (CUTLASS's
  // would round through TF32).
  p = thinConv(ConvDirection::Forward);
  p.dtype = ConvDataType::BFloat16;
  EXPECT_TRUE(cutlassCandidatesFor(p).empty());
  p.dtype = ConvDataType::Float32;
  EXPECT_TRUE(cutlassCandidatesFor(p).empty());
}

TEST(CutlassCandidates, TimingNeedsCudnnsOutputOfTheWholeProblem) {
  const ConvProblem p = thinConv(ConvDirection::Forward);
  CutlassTiming timing;
  std::string error;
  EXPECT_FALSE(timeCutlassConvs(p, nullptr, 1, std::vector<float>(10), timing, error));
  EXPECT_NE(error.find("no cuDNN output"), std::string::npos) << error;
  EXPECT_EQ(cutlassDifferenceBound(ConvDataType::Float16), std::ldexp(1.0, -8));
  EXPECT_EQ(cutlassDifferenceBound(ConvDataType::BFloat16), std::ldexp(1.0, -5));
}
