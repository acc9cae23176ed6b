//===- SafetensorsTest.cpp - .safetensors writing, reading, validation ----===//

#include "FakeModel.h"

#include "runtime/trainer/Safetensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

using namespace tcc::rt;
using tcc::test::readFile;
using tcc::test::TempDir;
using tcc::test::writeFile;

namespace {

std::string le64(uint64_t n) {
  std::string s;
  for (int i = 0; i < 8; ++i)
    s += static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

/// A file from a header text and a data section.
std::string rawFile(const std::string &header, const std::string &data) {
  return le64(header.size()) + header + data;
}

/// Decodes `bytes`, expecting failure; returns the error.
std::string decodeError(const std::string &bytes) {
  SafetensorsFile f;
  std::string error;
  EXPECT_FALSE(decodeSafetensors(bytes, "bad.safetensors", f, error));
  EXPECT_EQ(error.rfind("bad.safetensors: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

struct Sample {
  std::vector<float> f32 = {1.5f, -2.25f, 3.0f, 0.0f, 1e-3f, 7.0f};
  std::vector<uint16_t> f16 = {0x3c00, 0xc000}; // 1, -2
  std::vector<uint16_t> bf16 = {0x3f80, 0x4040, 0xbf00}; // 1, 3, -0.5
  std::vector<int64_t> i64 = {42};
  std::vector<uint8_t> u8 = {1, 2, 3, 4, 5};

  std::vector<TensorRef> refs() const {
    return {{"layer.weight", DType::F32, {2, 3}, f32.data(), 24},
            {"half", DType::F16, {2}, f16.data(), 4},
            {"brain", DType::BF16, {3, 1}, bf16.data(), 6},
            {"bn.num_batches_tracked", DType::I64, {}, i64.data(), 8},
            {"bytes", DType::U8, {5}, u8.data(), 5},
            {"empty", DType::F32, {0, 4}, nullptr, 0}};
  }
};

} // namespace

TEST(Safetensors, RoundTripEveryDtype) {
  TempDir dir;
  Sample s;
  std::string error;
  std::string path = dir.file("t.safetensors");
  ASSERT_TRUE(writeSafetensors(path, s.refs(), {{"model", "m"}, {"k", "v"}},
                               error))
      << error;
  SafetensorsFile f;
  ASSERT_TRUE(readSafetensors(path, f, error)) << error;
  EXPECT_EQ(f.metadata.at("model"), "m");
  EXPECT_EQ(f.metadata.at("k"), "v");
  ASSERT_EQ(f.tensors.size(), 6u);
  for (const TensorRef &r : s.refs()) {
    const Tensor *t = f.find(r.name);
    ASSERT_TRUE(t) << r.name;
    EXPECT_EQ(t->dtype, r.dtype) << r.name;
    EXPECT_EQ(t->shape, r.shape) << r.name;
    ASSERT_EQ(t->data.size(), r.bytes) << r.name;
    if (r.bytes) {
      EXPECT_EQ(std::memcmp(t->data.data(), r.data, r.bytes), 0) << r.name;
    }
  }
  EXPECT_EQ(f.find("bn.num_batches_tracked")->numElements(), 1);
  EXPECT_EQ(f.find("empty")->numElements(), 0);
}

TEST(Safetensors, LayoutFollowsTheFormat) {
  Sample s;
  std::string bytes, error;
  ASSERT_TRUE(encodeSafetensors(s.refs(), {{"format", "pt"}}, bytes, error));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u) << "data section must start 8-byte aligned";
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["__metadata__"]["format"], "pt");
  EXPECT_EQ(header["layer.weight"]["dtype"], "F32");
  EXPECT_EQ(header["layer.weight"]["shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(header["bn.num_batches_tracked"]["shape"], nlohmann::json::array());
  // Offsets tile the data section; each tensor aligned to its element size.
  uint64_t total = 0;
  for (auto &item : header.items()) {
    if (item.key() == "__metadata__")
      continue;
    uint64_t b = item.value()["data_offsets"][0], e = item.value()["data_offsets"][1];
    DType dt;
    ASSERT_TRUE(parseDType(item.value()["dtype"].get<std::string>(), dt));
    EXPECT_EQ(b % dtypeSize(dt), 0u) << item.key();
    total += e - b;
  }
  EXPECT_EQ(8 + n + total, bytes.size());
}

TEST(Safetensors, EncodeRejectsBadInput) {
  float x[2] = {0, 0};
  std::string bytes, error;
  EXPECT_FALSE(encodeSafetensors({{"a", DType::F32, {3}, x, 8}}, {}, bytes, error));
  EXPECT_NE(error.find("needs 12 bytes"), std::string::npos) << error;
  EXPECT_FALSE(encodeSafetensors(
      {{"a", DType::F32, {2}, x, 8}, {"a", DType::F32, {2}, x, 8}}, {}, bytes,
      error));
  EXPECT_NE(error.find("twice"), std::string::npos) << error;
  EXPECT_FALSE(encodeSafetensors({{"__metadata__", DType::F32, {2}, x, 8}}, {},
                                 bytes, error));
  EXPECT_FALSE(encodeSafetensors({{"a", DType::F32, {-2}, x, 8}}, {}, bytes,
                                 error));
}

TEST(Safetensors, TruncatedFile) {
  Sample s;
  std::string bytes, error;
  ASSERT_TRUE(encodeSafetensors(s.refs(), {}, bytes, error));
  // Every truncation point fails cleanly, none crashes.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    SafetensorsFile f;
    EXPECT_FALSE(decodeSafetensors(bytes.substr(0, cut), "bad.safetensors", f,
                                   error))
        << "cut at " << cut;
    EXPECT_EQ(error.rfind("bad.safetensors: ", 0), 0u) << error;
  }
  std::string e = decodeError(bytes.substr(0, bytes.size() - 1));
  EXPECT_NE(e.find("outside the data section"), std::string::npos) << e;
  e = decodeError(bytes.substr(0, 5));
  EXPECT_NE(e.find("too short"), std::string::npos) << e;
}

TEST(Safetensors, BadHeaderLength) {
  std::string e = decodeError(le64(1000) + "{}");
  EXPECT_NE(e.find("header length 1000 exceeds"), std::string::npos) << e;
  e = decodeError(le64(uint64_t(1) << 62) + "{}");
  EXPECT_NE(e.find("limit"), std::string::npos) << e;
  e = decodeError(le64(uint64_t(-1)) + "{}");
  EXPECT_NE(e.find("limit"), std::string::npos) << e;
  e = decodeError(le64(0));
  EXPECT_NE(e.find("too small"), std::string::npos) << e;
}

TEST(Safetensors, BadJson) {
  std::string e = decodeError(rawFile("{\"a\": [1, 2", ""));
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  e = decodeError(rawFile("{\"a\":\n\n}", ""));
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  e = decodeError(rawFile("[1, 2, 3]", ""));
  EXPECT_NE(e.find("start with '{'"), std::string::npos) << e;
  e = decodeError(rawFile("{\"a\": 1}", ""));
  EXPECT_NE(e.find("tensor 'a' must be an object"), std::string::npos) << e;
  e = decodeError(rawFile("{\"__metadata__\": {\"x\": 1}}", ""));
  EXPECT_NE(e.find("must be a string"), std::string::npos) << e;
}

TEST(Safetensors, BadTensorEntries) {
  auto entry = [](const std::string &body) {
    return rawFile("{\"t\": " + body + "}", std::string(8, '\0'));
  };
  std::string e = decodeError(entry(R"({"shape": [2], "data_offsets": [0, 8]})"));
  EXPECT_NE(e.find("no string 'dtype'"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F64", "shape": [1], "data_offsets": [0, 8]})"));
  EXPECT_NE(e.find("dtype 'F64'"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})"));
  EXPECT_NE(e.find("invalid shape"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})"));
  EXPECT_NE(e.find("invalid shape"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F32", "shape": [2], "data_offsets": [0]})"));
  EXPECT_NE(e.find("data_offsets"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]})"));
  EXPECT_NE(e.find("begin > end"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]})"));
  EXPECT_NE(e.find("12 bytes"), std::string::npos) << e;
  e = decodeError(entry(
      R"({"dtype": "F32", "shape": [4611686018427387904, 8], "data_offsets": [0, 8]})"));
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
  e = decodeError(entry(R"({"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1})"));
  EXPECT_NE(e.find("unknown field 'x'"), std::string::npos) << e;
}

TEST(Safetensors, OffsetsOutOfBoundsOverlappingOrWithGaps) {
  std::string e = decodeError(rawFile(
      R"({"t": {"dtype": "U8", "shape": [8], "data_offsets": [4, 12]}})",
      std::string(8, 'x')));
  EXPECT_NE(e.find("outside the data section of 8 bytes"), std::string::npos)
      << e;
  e = decodeError(rawFile(
      R"({"a": {"dtype": "U8", "shape": [6], "data_offsets": [0, 6]},
          "b": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}})",
      std::string(8, 'x')));
  EXPECT_NE(e.find("overlaps"), std::string::npos) << e;
  e = decodeError(rawFile(
      R"({"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
          "b": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}})",
      std::string(8, 'x')));
  EXPECT_NE(e.find("gap of 2 bytes before tensor 'b'"), std::string::npos)
      << e;
  e = decodeError(rawFile(
      R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})",
      std::string(8, 'x')));
  EXPECT_NE(e.find("4 bytes after the last tensor"), std::string::npos) << e;
  e = decodeError(rawFile(
      R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [18446744073709551615, 4]}})",
      std::string(4, 'x')));
}

TEST(Safetensors, ReadErrorsNameTheFile) {
  TempDir dir;
  SafetensorsFile f;
  std::string error;
  EXPECT_FALSE(readSafetensors(dir.file("missing.safetensors"), f, error));
  EXPECT_NE(error.find("missing.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_FALSE(readSafetensors(dir.path(), f, error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
  writeFile(dir.file("junk.safetensors"), "hello, this is not it");
  EXPECT_FALSE(readSafetensors(dir.file("junk.safetensors"), f, error));
  EXPECT_EQ(error.rfind(dir.file("junk.safetensors") + ": ", 0), 0u) << error;
}

TEST(Safetensors, FailedWriteLeavesTheTargetUntouched) {
  TempDir dir;
  Sample s;
  std::string error;
  // 1. The target is a directory: the rename fails, the directory stays.
  std::string asDir = dir.file("ckpt.safetensors");
  ASSERT_EQ(mkdir(asDir.c_str(), 0755), 0);
  writeFile(asDir + "/keep", "keep");
  EXPECT_FALSE(writeSafetensors(asDir, s.refs(), {}, error));
  EXPECT_NE(error.find("ckpt.safetensors"), std::string::npos) << error;
  EXPECT_EQ(readFile(asDir + "/keep"), "keep");
  // 2. The parent is not a directory.
  std::string notDir = dir.file("plain");
  writeFile(notDir, "x");
  EXPECT_FALSE(writeSafetensors(notDir + "/ckpt.safetensors", s.refs(), {},
                                error));
  EXPECT_EQ(readFile(notDir), "x");
  // 3. An existing checkpoint in a directory we may not write: it keeps its
  // old contents (root ignores permissions, so only as non-root).
  std::string ro = dir.file("ro");
  ASSERT_EQ(mkdir(ro.c_str(), 0755), 0);
  writeFile(ro + "/ckpt.safetensors", "old contents");
  if (geteuid() != 0) {
    ASSERT_EQ(chmod(ro.c_str(), 0555), 0);
    EXPECT_FALSE(writeSafetensors(ro + "/ckpt.safetensors", s.refs(), {},
                                  error));
    EXPECT_NE(error.find("ckpt.safetensors"), std::string::npos) << error;
    chmod(ro.c_str(), 0755);
    EXPECT_EQ(readFile(ro + "/ckpt.safetensors"), "old contents");
  }
  // 4. An encoding error never touches the file either.
  float x = 0;
  EXPECT_FALSE(writeSafetensors(ro + "/ckpt.safetensors",
                                {{"a", DType::F32, {2}, &x, 4}}, {}, error));
  EXPECT_EQ(readFile(ro + "/ckpt.safetensors"), "old contents");
  // No temporary files are left behind.
  for (auto &entry : std::filesystem::directory_iterator(ro))
    EXPECT_EQ(entry.path().filename(), "ckpt.safetensors");
  // 5. A successful write replaces it whole.
  ASSERT_TRUE(writeSafetensors(ro + "/ckpt.safetensors", s.refs(), {}, error))
      << error;
  SafetensorsFile f;
  EXPECT_TRUE(readSafetensors(ro + "/ckpt.safetensors", f, error)) << error;
}

TEST(Safetensors, DuplicateKeysAreRefused) {
  // nlohmann would keep one entry silently: which tensor is meant?
  std::string e = decodeError(rawFile(
      R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
          "a": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}})",
      std::string(8, 'x')));
  EXPECT_EQ(e, "bad.safetensors: the header lists 'a' twice (a duplicate "
               "JSON key): the file is corrupt");
  e = decodeError(rawFile(
      R"({"a": {"dtype": "U8", "dtype": "F32", "shape": [4], "data_offsets": [0, 4]}})",
      std::string(4, 'x')));
  EXPECT_NE(e.find("has the key 'dtype' twice"), std::string::npos) << e;
  e = decodeError(rawFile(R"({"__metadata__": {"model": "a", "model": "b"}})",
                          ""));
  EXPECT_NE(e.find("has the key 'model' twice"), std::string::npos) << e;
  // Equal keys in different objects are fine.
  SafetensorsFile f;
  std::string error;
  EXPECT_TRUE(decodeSafetensors(
      rawFile(R"({"__metadata__": {"dtype": "x"},
                  "dtype": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})",
              "xy"),
      "ok.safetensors", f, error))
      << error;
}

TEST(Safetensors, DevicesAreNotRead) {
  // /dev/zero would be read until memory runs out.
  TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.file("z.safetensors"));
  SafetensorsFile f;
  std::string error;
  EXPECT_FALSE(readSafetensors(dir.file("z.safetensors"), f, error));
  EXPECT_EQ(error, "cannot read '" + dir.file("z.safetensors") +
                       "' (checkpoint): it is a character device, not a regular "
                       "file (a symlink to /dev/zero)");
}
