//===- CutlassKernelTest.cpp - CUTLASS kernels by name (no GPU) ----------===//
//
// runtime/cuda/CutlassKernel.h: a kernel's name reads back into the same
// kernel for every tile tcc instantiates, names of other tiles, types,
// directions or forms do not, and a kernel matches only plain NHWC
// problems of its direction and type.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CutlassKernel.h"

#include <gtest/gtest.h>

using namespace tcc::cuda;

TEST(CutlassKernel, NamesReadBackForEveryTileDirectionAndType) {
  int count = 0;
  for (const CutlassTile &tile : kCutlassTiles)
    for (ConvDirection d :
         {ConvDirection::Forward, ConvDirection::BackwardData, ConvDirection::BackwardFilter})
      for (ConvDataType t : {ConvDataType::Float16, ConvDataType::BFloat16}) {
        CutlassKernel kernel{d, t, tile}, back;
        ASSERT_TRUE(CutlassKernel::fromName(kernel.name(), back)) << kernel.name();
        EXPECT_EQ(back.name(), kernel.name());
        EXPECT_EQ(back.direction, d);
        EXPECT_EQ(back.dtype, t);
        ++count;
      }
  EXPECT_EQ(count, 24);
  EXPECT_EQ((CutlassKernel{ConvDirection::BackwardFilter, ConvDataType::BFloat16,
                           kCutlassTiles[3]})
                .name(),
            "cutlass_sm90_bf16_wgrad_128x64x32_c1");
}

TEST(CutlassKernel, OtherNamesAreRefused) {
  CutlassKernel kernel;
  for (const char *name : {"cutlass_sm90_f16_fprop_256x64x64_c1", // a tile not instantiated
                           "cutlass_sm90_f16_fprop_128x64x64_c2",
                           "cutlass_sm90_f32_fprop_128x64x64_c1", // no f32 kernels
                           "cutlass_sm90_f16_xgrad_128x64x64_c1",
                           "cutlass_sm80_f16_fprop_128x64x64_c1",
                           "cutlass_sm90_f16_fprop_128x64x64_c1 ", "eng62_k2=0", ""})
    EXPECT_FALSE(CutlassKernel::fromName(name, kernel)) << "'" << name << "'";
}

TEST(CutlassKernel, MatchesPlainNhwcProblemsOfItsDirectionAndType) {
  ConvProblem p;
  p.direction = ConvDirection::BackwardData;
  p.dtype = ConvDataType::BFloat16;
  p.layout = ConvLayout::NHWC;
  const CutlassKernel kernel{ConvDirection::BackwardData, ConvDataType::BFloat16,
                             kCutlassTiles[0]};
  EXPECT_TRUE(kernel.matches(p));
  ConvProblem other = p;
  other.direction = ConvDirection::Forward;
  EXPECT_FALSE(kernel.matches(other));
  other = p, other.dtype = ConvDataType::Float16;
  EXPECT_FALSE(kernel.matches(other));
  other = p, other.layout = ConvLayout::NCHW;
  EXPECT_FALSE(kernel.matches(other));
  other = p, other.direction = ConvDirection::Forward, other.epilogue = ConvEpilogue::Bias;
  EXPECT_FALSE((CutlassKernel{ConvDirection::Forward, ConvDataType::BFloat16, kCutlassTiles[0]}
                    .matches(other)));
}
