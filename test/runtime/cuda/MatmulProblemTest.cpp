//===- MatmulProblemTest.cpp - Matmul problems, algorithms, tuning files --===//
//
// What the compiler, the tuner and the trainer agree on without cuBLASLt
// (runtime/cuda/MatmulProblem.h): problem keys and algorithm names read
// back exactly and refuse anything else, and a tuning file's matmuls
// survive writing and reading (runtime/cuda/TuningFile.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/MatmulProblem.h"
#include "runtime/cuda/TuningFile.h"

#include <gtest/gtest.h>

using namespace tcc::cuda;

namespace {

TEST(MatmulProblem, LinearLayersArePosedTransposed) {
  // y [64, 10] = x [64, 256] w [10, 256]^T + b: column-major y^T [10, 64].
  MatmulProblem forward = MatmulProblem::linearForward(MatmulType::bf16, 64, 256, 10, true,
                                                       MatmulActivation::relu);
  EXPECT_EQ(forward.key(), "gemm bf16 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=relu_bias");
  // dx [64, 256] = dy [64, 10] w [10, 256].
  EXPECT_EQ(MatmulProblem::linearBackwardData(MatmulType::f32, 64, 256, 10).key(),
            "gemm f32 nn m256 n64 k10 lda256 ldb10 ldc256 epilogue=default");
  // dw [10, 256] = dy [64, 10]^T x [64, 256].
  EXPECT_EQ(MatmulProblem::linearBackwardWeight(MatmulType::f16, 64, 256, 10).key(),
            "gemm f16 nt m256 n10 k64 lda256 ldb10 ldc256 epilogue=default");
}

TEST(MatmulProblem, KeysReadBack) {
  for (MatmulType type : {MatmulType::f32, MatmulType::bf16, MatmulType::f16})
    for (bool bias : {false, true})
      for (MatmulActivation activation :
           {MatmulActivation::none, MatmulActivation::relu, MatmulActivation::gelu,
            MatmulActivation::gelu_aux}) {
        MatmulProblem p = MatmulProblem::linearForward(type, 3, 5, 7, bias, activation), back;
        ASSERT_TRUE(MatmulProblem::fromKey(p.key(), back)) << p.key();
        EXPECT_EQ(back.key(), p.key());
        EXPECT_EQ(back.bias, bias);
        EXPECT_EQ(back.activation, activation);
        EXPECT_EQ(back.type, type);
        EXPECT_TRUE(back.transA);
        EXPECT_FALSE(back.transB);
      }
  // cuBLASLt's names of the epilogues.
  EXPECT_EQ(MatmulProblem::linearForward(MatmulType::f32, 8, 4, 16, true,
                                         MatmulActivation::gelu_aux)
                .epilogueName(),
            "gelu_aux_bias");
  EXPECT_EQ(MatmulProblem::linearForward(MatmulType::f32, 8, 4, 16, false,
                                         MatmulActivation::gelu)
                .epilogueName(),
            "gelu");
  MatmulProblem p;
  for (const char *bad :
       {"", "gemm f32 tn m10 n64 k256 lda256 ldb256 ldc10",
        "gemm f64 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=default",
        "gemm f32 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=tanh",
        "gemm f32 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=default_bias",
        "gemm f32 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=relu_gelu",
        "gemm f32 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=default extra",
        "gemm f32 tnn m10 n64 k256 lda256 ldb256 ldc10 epilogue=default",
        "gemm f32 tn m0 n64 k256 lda256 ldb256 ldc10 epilogue=default",
        "fwd f32 nchw n1 c1 h1 w1 k1 r1 s1 p1 q1 pad0,0 stride1,1 dil1,1 g1"})
    EXPECT_FALSE(MatmulProblem::fromKey(bad, p)) << bad;
}

TEST(MatmulProblem, BatchesAreInTheKey) {
  // tcc.matmul of 6 [4, 8] x ([5, 8] transposed): C^T [5, 4] = B A^T, posed
  // as the linear layers are; its count and strides before the epilogue.
  MatmulProblem p = MatmulProblem::batchedProduct(MatmulType::f32, 6, 4, 5, 8, false, true);
  EXPECT_EQ(p.key(), "gemm f32 tn m5 n4 k8 lda8 ldb8 ldc5 batch6 sa40 sb32 sc20 epilogue=default");
  MatmulProblem back;
  ASSERT_TRUE(MatmulProblem::fromKey(p.key(), back));
  EXPECT_EQ(back.batch, 6);
  EXPECT_EQ(back.strideA, 40);
  EXPECT_EQ(back.strideB, 32);
  EXPECT_EQ(back.strideC, 20);
  // One product is the plain key, and reads back unbatched.
  MatmulProblem one = MatmulProblem::batchedProduct(MatmulType::f32, 1, 4, 5, 8, true, false);
  EXPECT_EQ(one.key(), "gemm f32 nt m5 n4 k8 lda5 ldb4 ldc5 epilogue=default");
  ASSERT_TRUE(MatmulProblem::fromKey(one.key(), back));
  EXPECT_EQ(back.batch, 1);
  EXPECT_EQ(back.strideC, 0);
  for (const char *bad :
       {"gemm f32 tn m5 n4 k8 lda8 ldb8 ldc5 batch1 sa40 sb32 sc20 epilogue=default",
        "gemm f32 tn m5 n4 k8 lda8 ldb8 ldc5 batch6 sa40 sb32 sc0 epilogue=default",
        "gemm f32 tn m5 n4 k8 lda8 ldb8 ldc5 batch6 sa40 sb32 epilogue=default",
        "gemm f32 tn m5 n4 k8 lda8 ldb8 ldc5 batch6 sa-1 sb32 sc20 epilogue=default"})
    EXPECT_FALSE(MatmulProblem::fromKey(bad, back)) << bad;
}

TEST(MatmulAlgo, NamesReadBack) {
  MatmulAlgo algo{21, 18, 8, 4, 2, 1, 3, 7, 12}, back;
  EXPECT_EQ(algo.name(),
            "algo21_tile18_stages8_splitk4_reduction2_swizzle1_custom3_inner7_cluster12");
  ASSERT_TRUE(MatmulAlgo::fromName(algo.name(), back));
  EXPECT_EQ(back.name(), algo.name());
  EXPECT_EQ(back.splitK, 4);
  EXPECT_EQ(back.cluster, 12u);
  for (const char *bad :
       {"", "algo21", "eng62_k2=0",
        "algo21_tile18_stages8_splitk0_reduction0_swizzle0_custom0_inner0_cluster0",
        "algo21_tile18_stages8_splitk1_reduction0_swizzle0_custom0_inner70000_cluster0",
        "algo-1_tile18_stages8_splitk1_reduction0_swizzle0_custom0_inner0_cluster0",
        "algo21_tile18_stages8_splitk1_reduction0_swizzle0_custom0_inner0_cluster0_x"})
    EXPECT_FALSE(MatmulAlgo::fromName(bad, back)) << bad;
}

TEST(MatmulAlgo, TheWorkspaceLeavesRoomForAlignment) {
  // A 64-byte aligned workspace loses up to 192 bytes to cuBLASLt's 256.
  EXPECT_EQ(matmulUsableWorkspaceBytes(90), (int64_t(32) << 20) - 192);
  EXPECT_EQ(matmulUsableWorkspaceBytes(80), (int64_t(4) << 20) - 192);
}

TuningFile tunedFile() {
  TuningFile file;
  file.gpu = "h100", file.device = "NVIDIA H100", file.sm = 90, file.cudnnVersion = 91900;
  file.workspaceLimitBytes = 1 << 20, file.tunedAt = "2026-11-26T00:00:00Z";
  file.cublasLtVersion = 130100;
  file.matmuls["gemm bf16 tn m10 n64 k256 lda256 ldb256 ldc10 epilogue=bias"] = {
      MatmulAlgo{21, 18, 8, 1, 0, 0, 0, 0, 0}.name(), 1024, 3.5,
      MatmulAlgo{20, 18, 8, 1, 0, 0, 0, 0, 0}.name(), 4.0, nlohmann::json::array()};
  return file;
}

TEST(TuningFile, MatmulsSurviveWritingAndReading) {
  TuningFile file = tunedFile(), back;
  std::string error;
  ASSERT_TRUE(parseTuningFile(toJson(file).dump(), "t.json", back, error)) << error;
  EXPECT_EQ(back.cublasLtVersion, 130100);
  ASSERT_EQ(back.matmuls.size(), 1u);
  const TunedChoice &m = back.matmuls.begin()->second;
  EXPECT_EQ(m.name, file.matmuls.begin()->second.name);
  EXPECT_EQ(m.workspaceBytes, 1024);
  EXPECT_EQ(m.microseconds, 3.5);
  EXPECT_EQ(m.heuristicMicroseconds, 4.0);
}

TEST(TuningFile, MatmulsAreOptionalButWellFormed) {
  nlohmann::json j = toJson(tunedFile());
  TuningFile back;
  std::string error;
  nlohmann::json old = j;
  old.erase("matmuls");
  old.erase("cublaslt_version");
  EXPECT_TRUE(parseTuningFile(old.dump(), "t.json", back, error)) << error;
  EXPECT_TRUE(back.matmuls.empty());

  nlohmann::json noVersion = j;
  noVersion.erase("cublaslt_version");
  EXPECT_FALSE(parseTuningFile(noVersion.dump(), "t.json", back, error));
  EXPECT_NE(error.find("\"cublaslt_version\" is missing"), std::string::npos) << error;

  nlohmann::json badKey = j;
  badKey["matmuls"][0]["problem"] = "gemm f32";
  EXPECT_FALSE(parseTuningFile(badKey.dump(), "t.json", back, error));
  EXPECT_NE(error.find("t.json: matmuls[0]: \"problem\" is not a matmul problem key"),
            std::string::npos)
      << error;

  nlohmann::json twice = j;
  twice["matmuls"].push_back(twice["matmuls"][0]);
  EXPECT_FALSE(parseTuningFile(twice.dump(), "t.json", back, error));
  EXPECT_NE(error.find("is listed twice"), std::string::npos) << error;
}

// Optional fields of another type are one error line, not an exception out
// of nlohmann's value() (found by fuzz-tuning: heuristic_plan an object).
TEST(TuningFile, OptionalFieldsOfAnotherTypeAreErrors) {
  nlohmann::json j = toJson(tunedFile());
  TuningFile back;
  std::string error;
  nlohmann::json heuristic = j;
  heuristic["matmuls"][0]["heuristic_algo"] = nlohmann::json::object();
  EXPECT_FALSE(parseTuningFile(heuristic.dump(), "t.json", back, error));
  EXPECT_NE(error.find("t.json: matmuls[0]: \"heuristic_algo\" is not a string"),
            std::string::npos)
      << error;
  nlohmann::json timed = j;
  timed["matmuls"][0]["timed"] = 3;
  EXPECT_FALSE(parseTuningFile(timed.dump(), "t.json", back, error));
  EXPECT_NE(error.find("matmuls[0]: \"timed\" is not a list"), std::string::npos) << error;
  nlohmann::json format = j;
  format["format"] = 7;
  EXPECT_FALSE(parseTuningFile(format.dump(), "t.json", back, error));
  EXPECT_NE(error.find("format is not"), std::string::npos) << error;
}

// A convolution's CUTLASS record (tcc-tune-cutlass, docs/tuning.md) is kept
// as written, absent stays absent, and another type is one error line.
TEST(TuningFile, CutlassRecordKeptAndChecked) {
  TuningFile file = tunedFile(), back;
  const std::string key = "fwd f16 nhwc n512 c24 h31 w31 k64 r3 s3 p31 q31 pad1,1 stride1,1 "
                          "dil1,1 g1";
  file.convs[key] = {"eng62_k2=0", 0, 120.0, "eng62_k2=0", 120.0, nlohmann::json::array(),
                     nlohmann::json::array({{{"kernel", "cutlass_sm90_f16_fprop_128x64x64_c1"},
                                             {"microseconds", 95.0},
                                             {"workspace_bytes", 27648},
                                             {"difference", 0.001}},
                                            {{"kernel", "cutlass_sm90_f16_fprop_64x64x64_c1"},
                                             {"failure", "it does not run on this GPU"}}})};
  std::string error;
  ASSERT_TRUE(parseTuningFile(toJson(file).dump(), "t.json", back, error)) << error;
  EXPECT_EQ(back.convs.at(key).cutlass, file.convs.at(key).cutlass);
  EXPECT_EQ(back.convs.at(key).name, "eng62_k2=0"); // still cuDNN's engine that is baked

  nlohmann::json none = toJson(file);
  none["convs"][0].erase("cutlass");
  ASSERT_TRUE(parseTuningFile(none.dump(), "t.json", back, error)) << error;
  EXPECT_TRUE(back.convs.at(key).cutlass.is_null());
  EXPECT_FALSE(toJson(back)["convs"][0].contains("cutlass"));

  nlohmann::json bad = toJson(file);
  bad["convs"][0]["cutlass"] = 3;
  EXPECT_FALSE(parseTuningFile(bad.dump(), "t.json", back, error));
  EXPECT_NE(error.find("t.json: convs[0]: \"cutlass\" is not a list"), std::string::npos)
      << error;
}

} // namespace
