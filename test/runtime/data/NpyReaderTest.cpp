//===- NpyReaderTest.cpp - NumPy .npy files and their errors --------------===//

#include "DataTestUtil.h"
#include "runtime/data/Dataset.h"
#include "runtime/data/Readers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

using namespace tcc::rt;
using namespace tcc::rt::test;

namespace {

Bytes u8Images(int n, int c, int h, int w) {
  Bytes b;
  for (int i = 0; i < n * c * h * w; ++i)
    b.push_back(uint8_t(i * 5 + 1));
  return b;
}

/// train: 4 images [4, 2, 3, 3] u8, labels <i8; test: 2 images.
void writeNpyDir(const TempDir &dir) {
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("|u1", "(4, 2, 3, 3)"), u8Images(4, 2, 3, 3)));
  writeFile(dir.file("train_y.npy"),
            npyFile(npyDict("<i8", "(4,)"),
                    rawBytes(std::vector<int64_t>{3, 1, 4, 1})));
  writeFile(dir.file("test_x.npy"),
            npyFile(npyDict("|u1", "(2, 2, 3, 3)"), u8Images(2, 2, 3, 3)));
  writeFile(
      dir.file("test_y.npy"),
      npyFile(npyDict("<i8", "(2,)"), rawBytes(std::vector<int64_t>{5, 9})));
}

std::string loadError(const std::string &dir) {
  DataSplit split;
  std::string error;
  EXPECT_FALSE(loadDataset("npy", dir, split, error));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  return error;
}

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.rfind(prefix, 0) == 0;
}

} // namespace

TEST(NpyReader, LoadsUint8ImagesAndInt64Labels) {
  TempDir dir;
  writeNpyDir(dir);
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("npy", dir.str(), split, error)) << error;
  const Dataset &d = split.train;
  EXPECT_EQ(d.n, 4);
  EXPECT_EQ(d.c, 2);
  EXPECT_EQ(d.h, 3);
  EXPECT_EQ(d.w, 3);
  EXPECT_FALSE(d.isFloat);
  EXPECT_EQ(d.u8, u8Images(4, 2, 3, 3));
  EXPECT_EQ(d.labels, (std::vector<int64_t>{3, 1, 4, 1}));
  EXPECT_EQ(split.test.n, 2);
  EXPECT_EQ(split.test.labels, (std::vector<int64_t>{5, 9}));
}

TEST(NpyReader, LoadsFloatImagesWithoutChannelsAndNarrowLabels) {
  TempDir dir;
  std::vector<float> x;
  for (int i = 0; i < 3 * 2 * 4; ++i)
    x.push_back(0.25f * float(i) - 1.5f);
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("<f4", "(3, 2, 4)"), rawBytes(x)));
  writeFile(
      dir.file("train_y.npy"),
      npyFile(npyDict("<i4", "(3,)"), rawBytes(std::vector<int32_t>{7, 0, 2})));
  writeFile(dir.file("test_x.npy"),
            npyFile(npyDict("<f4", "(1, 2, 4)"),
                    rawBytes(std::vector<float>(8, 0.5f)), /*major=*/2));
  writeFile(dir.file("test_y.npy"),
            npyFile(npyDict("|u1", "(1,)"), Bytes{6}, /*major=*/3));
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("npy", dir.str(), split, error)) << error;
  const Dataset &d = split.train;
  EXPECT_EQ(d.n, 3);
  EXPECT_EQ(d.c, 1);
  EXPECT_EQ(d.h, 2);
  EXPECT_EQ(d.w, 4);
  EXPECT_TRUE(d.isFloat);
  EXPECT_EQ(d.f32, x);
  EXPECT_EQ(d.labels, (std::vector<int64_t>{7, 0, 2}));
  EXPECT_TRUE(split.test.isFloat);
  EXPECT_EQ(split.test.labels, (std::vector<int64_t>{6}));
}

TEST(NpyReader, HeaderVariants) {
  // Double quotes, no trailing comma, keys in another order, Python 2 longs.
  for (const std::string &dict :
       {std::string("{\"shape\": (2, 1, 1, 1), \"fortran_order\": False, "
                    "\"descr\": \"|u1\"}"),
        std::string("{'descr':'|u1','fortran_order':False,'shape':(2L, 1L, "
                    "1L, 1L)}"),
        std::string("{'descr': '|u1', 'fortran_order': False, 'shape': [2, 1, "
                    "1, 1], 'extra': (None, True, -3)}")}) {
    Bytes file = npyFile(dict, Bytes{1, 2});
    {
      data::NpyHeader header;
      std::string error;
      ASSERT_TRUE(data::parseNpyHeader(file.data(), file.size(), header, error))
          << dict << ": " << error;
      EXPECT_EQ(header.descr, "|u1");
      EXPECT_FALSE(header.fortranOrder);
      EXPECT_EQ(header.shape, (std::vector<int64_t>{2, 1, 1, 1}));
      EXPECT_EQ(header.dataOffset, file.size() - 2);
    }
  }
}

TEST(NpyReader, MissingFile) {
  TempDir dir;
  writeNpyDir(dir);
  std::filesystem::remove(dir.file("test_y.npy"));
  EXPECT_EQ(loadError(dir.str()),
            dir.str() + ": test_y.npy is missing (expected train_x.npy, "
                        "train_y.npy, test_x.npy, test_y.npy)");
}

TEST(NpyReader, BadMagicAndVersion) {
  TempDir dir;
  writeNpyDir(dir);
  Bytes file = npyFile(npyDict("|u1", "(4, 2, 3, 3)"), u8Images(4, 2, 3, 3));
  Bytes bad = file;
  bad[1] = 'X';
  writeFile(dir.file("train_x.npy"), bad);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": not an NPY file (no \\x93NUMPY magic)");
  bad = file;
  bad[6] = 4;
  writeFile(dir.file("train_x.npy"), bad);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": unsupported NPY version 4.0 (supported: 1.0, 2.0, 3.0)");
}

TEST(NpyReader, BadHeader) {
  TempDir dir;
  writeNpyDir(dir);
  const Bytes data = u8Images(4, 2, 3, 3);
  struct Case {
    std::string dict, expect;
  } cases[] = {
      {"not a dict", "bad NPY header: the header is not a dict literal"},
      {"{'descr': '|u1', 'fortran_order': False}",
       "bad NPY header: no 'shape' key"},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': (4, 2, 3, 3)",
       "bad NPY header: expected ',' or '}' in the header dict"},
      {"{'descr': '|u1, 'fortran_order': False, 'shape': (4, 2, 3, 3)}",
       "bad NPY header"},
      {"{'descr': '|u1', 'fortran_order': 0, 'shape': (4, 2, 3, 3)}",
       "bad NPY header: 'fortran_order' is not True or False"},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': 4}",
       "bad NPY header: 'shape' is not a tuple"},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': (4, -2, 3, 3)}",
       "bad NPY header: 'shape' holds something other than non-negative "
       "integers"},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "bad NPY header: number too large"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}",
       "unsupported dtype: 'descr' is not a simple type string"},
      {"{'a': " + std::string(40, '(') + std::string(40, ')') + "}",
       "bad NPY header: nested too deeply"},
  };
  for (const Case &c : cases) {
    writeFile(dir.file("train_x.npy"), npyFile(c.dict, data));
    std::string error = loadError(dir.str());
    EXPECT_TRUE(startsWith(error, dir.file("train_x.npy") + ": " + c.expect))
        << c.dict << " -> " << error;
  }
  // A header length beyond the end of the file.
  Bytes file = npyFile(npyDict("|u1", "(4, 2, 3, 3)"), data);
  file.resize(40);
  writeFile(dir.file("train_x.npy"), file);
  std::string error = loadError(dir.str());
  EXPECT_TRUE(
      startsWith(error, dir.file("train_x.npy") + ": truncated NPY header"))
      << error;
}

TEST(NpyReader, FortranOrderIsRejected) {
  TempDir dir;
  writeNpyDir(dir);
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("|u1", "(4, 2, 3, 3)", /*fortran=*/true),
                    u8Images(4, 2, 3, 3)));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": fortran_order is True; save a C-ordered array "
                "(np.ascontiguousarray) instead");
}

TEST(NpyReader, WrongDtype) {
  TempDir dir;
  writeNpyDir(dir);
  writeFile(dir.file("train_x.npy"), npyFile(npyDict("<f8", "(4, 2, 3, 3)"),
                                             Bytes(4 * 2 * 3 * 3 * 8, 0)));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": unsupported dtype '<f8' for images or token ids (expected '|u1', "
                "'<u1', '<f4', '<u2', '<i4', '<i8')");
  writeNpyDir(dir);
  writeFile(
      dir.file("test_y.npy"),
      npyFile(npyDict("<f4", "(2,)"), rawBytes(std::vector<float>{1, 2})));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("test_y.npy") +
                ": unsupported dtype '<f4' for labels (expected '<i8', "
                "'<i4', '|u1', '<u1')");
}

TEST(NpyReader, DataLengthMustMatch) {
  TempDir dir;
  writeNpyDir(dir);
  Bytes data = u8Images(4, 2, 3, 3);
  data.pop_back();
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("|u1", "(4, 2, 3, 3)"), data));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": truncated: shape (4, 2, 3, 3) of '|u1' needs 72 bytes of "
                "data but the file holds 71");
  data.push_back(0);
  data.push_back(0);
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("|u1", "(4, 2, 3, 3)"), data));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": shape (4, 2, 3, 3) of '|u1' needs 72 bytes of data but "
                "the file holds 73");
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("|u1", "(4611686018427387904, 8, 8, 8)"), data));
  std::string error = loadError(dir.str());
  EXPECT_TRUE(startsWith(error, dir.file("train_x.npy") + ": truncated"))
      << error;
}

TEST(NpyReader, CountMismatch) {
  TempDir dir;
  writeNpyDir(dir);
  writeFile(
      dir.file("train_y.npy"),
      npyFile(npyDict("<i8", "(3,)"), rawBytes(std::vector<int64_t>{1, 2, 3})));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_y.npy") + ": holds 3 labels but " +
                dir.file("train_x.npy") + " holds 4 images");
}

TEST(NpyReader, BadShapesAndValues) {
  TempDir dir;
  writeNpyDir(dir);
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("<f4", "(4, 18)"), Bytes(4 * 18 * 4, 0)));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": '<f4' (4, 18) is neither images ('|u1' or '<f4' [N, C, H, W] or [N, H, W]) "
                "nor token ids (an integer dtype of shape [N, T])");
  writeNpyDir(dir);
  writeFile(dir.file("train_y.npy"),
            npyFile(npyDict("<i8", "(4, 1)"),
                    rawBytes(std::vector<int64_t>{1, 2, 3, 4})));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_y.npy") +
                ": labels have shape (4, 1) (expected [N]; [N, T] targets go with token "
                "ids [N, T])");
  writeNpyDir(dir);
  writeFile(dir.file("train_y.npy"),
            npyFile(npyDict("<i8", "(4,)"),
                    rawBytes(std::vector<int64_t>{1, -2, 3, 4})));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_y.npy") + ": label 1 is -2 (labels must be >= 0)");
  writeNpyDir(dir);
  writeFile(dir.file("test_x.npy"),
            npyFile(npyDict("<f4", "(2, 1, 1, 1)"),
                    rawBytes(std::vector<float>{
                        0.0f, std::numeric_limits<float>::quiet_NaN()})));
  writeFile(dir.file("train_x.npy"),
            npyFile(npyDict("<f4", "(4, 1, 1, 1)"),
                    rawBytes(std::vector<float>{0, 0, 0, 0})));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("test_x.npy") + ": image value 1 is NaN");
  // Finite, but past what f32 training can square: said at load, not as a
  // diverged loss later.
  writeFile(dir.file("test_x.npy"),
            npyFile(npyDict("<f4", "(2, 1, 1, 1)"), rawBytes(std::vector<float>{0.5f, 3e38f})));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("test_x.npy") + ": image value 1 is 3e+38, past what f32 training can use "
                                     "(its square overflows f32); scale the images to a small "
                                     "range, e.g. [0, 1]");
  writeFile(dir.file("test_x.npy"),
            npyFile(npyDict("<f4", "(2, 1, 1, 1)"), rawBytes(std::vector<float>{0.5f, 1e18f})));
  {
    DataSplit split;
    std::string error;
    EXPECT_TRUE(loadDataset("npy", dir.str(), split, error)) << error;
  }
  writeNpyDir(dir);
  writeFile(dir.file("test_x.npy"),
            npyFile(npyDict("|u1", "(2, 1, 3, 3)"), u8Images(2, 1, 3, 3)));
  std::string error = loadError(dir.str());
  EXPECT_TRUE(startsWith(error, dir.file("test_x.npy") +
                                    ": images are [1, 3, 3] uint8 but "
                                    "train_x.npy holds [2, 3, 3] uint8"))
      << error;
}

TEST(NpyReader, MutatedFilesNeverCrash) {
  // Every single-byte corruption and every truncation of a valid file either
  // loads or fails with a message; none may crash or hang.
  TempDir dir;
  writeNpyDir(dir);
  const Bytes file = npyFile(npyDict("<i8", "(4,)"),
                             rawBytes(std::vector<int64_t>{3, 1, 4, 1}));
  int failures = 0;
  for (size_t i = 0; i < file.size(); ++i) {
    for (uint8_t v : {uint8_t(0), uint8_t(0xff), uint8_t('('), uint8_t('\''),
                      uint8_t('9')}) {
      Bytes bad = file;
      bad[i] = v;
      data::NpyHeader header;
      std::string error;
      if (!data::parseNpyHeader(bad.data(), bad.size(), header, error)) {
        ++failures;
        EXPECT_FALSE(error.empty());
      }
    }
  }
  EXPECT_GT(failures, 50);
  for (size_t len = 0; len < file.size(); ++len) {
    writeFile(dir.file("train_y.npy"), Bytes(file.begin(), file.begin() + len));
    DataSplit split;
    std::string error;
    ASSERT_FALSE(loadDataset("npy", dir.str(), split, error)) << len;
    ASSERT_TRUE(startsWith(error, dir.file("train_y.npy") + ": ")) << error;
  }
}

TEST(NpyReader, GzipIsInflatedOnlyAsFarAsTheHeaderDeclares) {
  // Incompressible surplus after the declared data, and the gzip stream cut
  // off in it: only a reader that stops at the declared size reports the
  // surplus (one inflating to the end would find truncated gzip data).
  TempDir dir;
  writeNpyDir(dir);
  Bytes surplus(1 << 20);
  uint32_t x = 88172645u;
  for (uint8_t &v : surplus) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    v = uint8_t(x);
  }
  Bytes file = npyFile(npyDict("|u1", "(4, 2, 3, 3)"), u8Images(4, 2, 3, 3));
  file.insert(file.end(), surplus.begin(), surplus.end());
  Bytes gz = gzipBytes(file);
  gz.resize(gz.size() / 2);
  writeFile(dir.file("train_x.npy"), gz);
  std::string error = loadError(dir.str());
  EXPECT_EQ(error, dir.file("train_x.npy") +
                       ": shape (4, 2, 3, 3) of '|u1' needs 72 bytes of data "
                       "but the decompressed file holds more after it "
                       "(stopped reading there)");
  // A plain file with surplus says how much.
  file.resize(file.size() - surplus.size() + 3);
  writeFile(dir.file("train_x.npy"), file);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train_x.npy") +
                ": shape (4, 2, 3, 3) of '|u1' needs 72 bytes of data but the "
                "file holds 75");
  // A header length beyond any real .npy file.
  Bytes huge = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0x7f};
  writeFile(dir.file("train_x.npy"), huge);
  error = loadError(dir.str());
  EXPECT_NE(error.find("NPY header of 2147483659 bytes exceeds the limit"),
            std::string::npos)
      << error;
}

TEST(NpyReader, NonRegularFilesAreNamedNotMissing) {
  TempDir dir;
  writeNpyDir(dir);
  std::filesystem::remove(dir.file("test_y.npy"));
  std::filesystem::create_symlink("/dev/zero", dir.file("test_y.npy"));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("test_y.npy") +
                ": is a character device (a symlink to /dev/zero), expected "
                "a regular file");
}
