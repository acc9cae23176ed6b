//===- NpyReader.cpp - NumPy .npy arrays ----------------------------------===//
//
// Format: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0,
// uint32 LE for 2.0 and 3.0), then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 1, 28, 28), }
// padded with spaces and a newline, then the raw array data.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/FileReader.h"
#include "runtime/data/Readers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

namespace tcc::rt::data {

namespace {

/// A value of the header's Python literal.
struct PyValue {
  enum Kind { String, Bool, None, Int, Sequence } kind = None;
  std::string str;
  bool b = false;
  int64_t i = 0;
  std::vector<PyValue> items;
};

class DictParser {
public:
  explicit DictParser(std::string_view text) : s(text) {}

  bool parseDict(std::vector<std::pair<std::string, PyValue>> &entries,
                 std::string &error) {
    skipSpace();
    if (!eat('{'))
      return fail("the header is not a dict literal", error);
    for (;;) {
      skipSpace();
      if (eat('}'))
        break;
      PyValue key;
      if (!parseValue(key, 0, error))
        return false;
      if (key.kind != PyValue::String)
        return fail("a header key is not a string", error);
      skipSpace();
      if (!eat(':'))
        return fail("expected ':' after '" + key.str + "'", error);
      PyValue value;
      if (!parseValue(value, 0, error))
        return false;
      entries.emplace_back(key.str, std::move(value));
      skipSpace();
      if (eat(','))
        continue;
      if (eat('}'))
        break;
      return fail("expected ',' or '}' in the header dict", error);
    }
    skipSpace();
    if (pos != s.size())
      return fail("unexpected text after the header dict", error);
    return true;
  }

private:
  std::string_view s;
  size_t pos = 0;

  static bool fail(const std::string &what, std::string &error) {
    error = "bad NPY header: " + what;
    return false;
  }
  void skipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' ||
                              s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool eat(char c) {
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool eatWord(std::string_view w) {
    if (s.substr(pos, w.size()) == w) {
      pos += w.size();
      return true;
    }
    return false;
  }

  bool parseValue(PyValue &v, int depth, std::string &error) {
    if (depth > 16)
      return fail("nested too deeply", error);
    skipSpace();
    if (pos >= s.size())
      return fail("unexpected end of the header", error);
    char c = s[pos];
    if (c == '\'' || c == '"') {
      ++pos;
      v.kind = PyValue::String;
      while (pos < s.size() && s[pos] != c) {
        if (s[pos] == '\\' && pos + 1 < s.size())
          ++pos;
        v.str.push_back(s[pos++]);
      }
      if (!eat(c))
        return fail("unterminated string", error);
      return true;
    }
    if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      ++pos;
      v.kind = PyValue::Sequence;
      for (;;) {
        skipSpace();
        if (eat(close))
          return true;
        PyValue item;
        if (!parseValue(item, depth + 1, error))
          return false;
        v.items.push_back(std::move(item));
        skipSpace();
        if (eat(','))
          continue;
        if (eat(close))
          return true;
        return fail(std::string("expected ',' or '") + close + "'", error);
      }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      bool negative = eat('-');
      if (pos >= s.size() || s[pos] < '0' || s[pos] > '9')
        return fail("bad number", error);
      uint64_t value = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        uint64_t digit = static_cast<uint64_t>(s[pos++] - '0');
        if (value >
            (uint64_t(std::numeric_limits<int64_t>::max()) - digit) / 10)
          return fail("number too large", error);
        value = value * 10 + digit;
      }
      eat('L'); // Python 2 longs, as old numpy wrote them
      v.kind = PyValue::Int;
      v.i =
          negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
      return true;
    }
    if (eatWord("True")) {
      v.kind = PyValue::Bool;
      v.b = true;
      return true;
    }
    if (eatWord("False")) {
      v.kind = PyValue::Bool;
      v.b = false;
      return true;
    }
    if (eatWord("None")) {
      v.kind = PyValue::None;
      return true;
    }
    return fail(std::string("unexpected character '") + c + "'", error);
  }
};

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ",";
  return out + ")";
}

uint32_t readLE32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

uint64_t readLE64(const uint8_t *p) {
  return uint64_t(readLE32(p)) | uint64_t(readLE32(p + 4)) << 32;
}

/// Longest header accepted (numpy's own np.load refuses more than 10000
/// bytes by default).
constexpr uint64_t kMaxNpyHeader = 1 << 20;

/// Reads `path` and parses its header; checks fortran_order, the dtype
/// against `dtypes`, and that the data length matches the shape.
bool readNpy(const std::string &path, const char *role,
             std::initializer_list<const char *> dtypes,
             std::vector<uint8_t> &bytes, NpyHeader &header, size_t &itemSize,
             std::string &error) {
  // Read the preamble, then exactly the header it announces, then exactly
  // the data the header's shape needs: a gzip bomb is never inflated past
  // what the header declares.
  DataFile file;
  bytes.clear();
  if (!file.open(path, error) || !file.read(12, bytes, error))
    return false;
  static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  const bool npy = bytes.size() >= 10 && std::memcmp(bytes.data(), magic, 6) == 0;
  const int major = npy ? bytes[6] : 0;
  if (major == 1 || ((major == 2 || major == 3) && bytes.size() >= 12)) {
    uint64_t end = major == 1
                       ? 10 + (uint64_t(bytes[8]) | uint64_t(bytes[9]) << 8)
                       : 12 + uint64_t(readLE32(bytes.data() + 8));
    if (end > kMaxNpyHeader) {
      error = path + ": NPY header of " + std::to_string(end) +
              " bytes exceeds the limit of " + std::to_string(kMaxNpyHeader) +
              " (numpy writes a few hundred)";
      return false;
    }
    if (end > bytes.size() && !file.read(end - bytes.size(), bytes, error))
      return false;
  }
  if (!parseNpyHeader(bytes.data(), bytes.size(), header, error)) {
    error = path + ": " + error;
    return false;
  }
  if (header.fortranOrder) {
    error = path + ": fortran_order is True; save a C-ordered array "
                   "(np.ascontiguousarray) instead";
    return false;
  }
  bool known = false;
  std::string accepted;
  for (const char *d : dtypes) {
    known |= header.descr == d;
    accepted += std::string(accepted.empty() ? "'" : ", '") + d + "'";
  }
  if (!known) {
    error = path + ": unsupported dtype '" + header.descr + "' for " + role +
            " (expected " + accepted + ")";
    return false;
  }
  itemSize = static_cast<size_t>(header.descr[2] - '0');
  uint64_t count = 1;
  bool overflow = false;
  for (int64_t d : header.shape) {
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / 8 /
                              static_cast<uint64_t>(d))
      overflow = true;
    else
      count *= static_cast<uint64_t>(d);
  }
  const uint64_t need = overflow ? 0 : count * itemSize;
  const uint64_t have = bytes.size() - header.dataOffset;
  const uint64_t room = file.maxDataSize() > header.dataOffset
                            ? file.maxDataSize() - header.dataOffset
                            : 0;
  auto needs = [&] {
    return path + ": shape " + shapeString(header.shape) + " of '" +
           header.descr + "' needs " +
           (overflow ? std::string("more") : std::to_string(need)) +
           " bytes of data but the ";
  };
  if (overflow || need > room) {
    error = needs() +
            (file.isGzip() ? "gzip file of " + std::to_string(file.fileSize()) +
                                 " bytes can hold at most " +
                                 std::to_string(room)
                           : "file holds " + std::to_string(room));
    error.insert(path.size() + 2, "truncated: ");
    return false;
  }
  if (need > have && !file.read(need - have, bytes, error))
    return false;
  const uint64_t held = bytes.size() - header.dataOffset;
  if (held < need) {
    error = needs() + "file holds " + std::to_string(held);
    error.insert(path.size() + 2, "truncated: ");
    return false;
  }
  bool more = held > need;
  if (!more && !file.hasMore(more, error))
    return false;
  if (more) {
    error = needs() + (file.isGzip()
                           ? std::string("decompressed file holds more after "
                                         "it (stopped reading there)")
                           : "file holds " + std::to_string(file.fileSize() -
                                                            header.dataOffset));
    return false;
  }
  return true;
}

/// Token ids [N, T] of an integer dtype, kept as exact f32 integers (the
/// batch is f32; 2^24 bounds a vocabulary). The vocabulary's bound is the
/// model's, checked by the trainer (checkDataset).
bool readTokens(const std::string &path, const std::vector<uint8_t> &bytes,
                const NpyHeader &header, size_t itemSize, Dataset &d, std::string &error) {
  d.n = header.shape[0];
  d.c = d.h = 1;
  d.w = header.shape[1];
  d.tokens = d.isFloat = true;
  if (d.n == 0 || d.w == 0) {
    error = path + ": token ids have shape " + shapeString(header.shape) +
            " (an empty dataset)";
    return false;
  }
  const uint8_t *data = bytes.data() + header.dataOffset;
  const bool isSigned = header.descr[1] == 'i';
  d.f32.resize(static_cast<size_t>(d.n * d.w));
  for (size_t i = 0; i < d.f32.size(); ++i) {
    int64_t v = itemSize == 8   ? static_cast<int64_t>(readLE64(data + 8 * i))
                : itemSize == 4 ? (isSigned ? int64_t(static_cast<int32_t>(readLE32(data + 4 * i)))
                                            : int64_t(readLE32(data + 4 * i)))
                : itemSize == 2 ? int64_t(uint16_t(data[2 * i] | data[2 * i + 1] << 8))
                                : int64_t(data[i]);
    if (v < 0 || v >= (int64_t(1) << 24)) {
      error = path + ": token id " + std::to_string(v) + " at [" +
              std::to_string(int64_t(i) / d.w) + ", " + std::to_string(int64_t(i) % d.w) +
              "] is " + (v < 0 ? "negative" : "2^24 or more (ids must be exact in f32)");
      return false;
    }
    d.f32[i] = static_cast<float>(v);
  }
  return true;
}

bool readImages(const std::string &path, Dataset &d, std::string &error) {
  std::vector<uint8_t> bytes;
  NpyHeader header;
  size_t itemSize = 0;
  if (!readNpy(path, "images or token ids",
               {"|u1", "<u1", "<f4", "<u2", "<i4", "<i8"}, bytes, header, itemSize, error))
    return false;
  const std::vector<int64_t> &shape = header.shape;
  const bool integer = header.descr[1] != 'f';
  if (shape.size() == 2 && integer)
    return readTokens(path, bytes, header, itemSize, d, error);
  if ((integer && itemSize > 1) || shape.size() == 2) {
    error = path + ": '" + header.descr + "' " + shapeString(shape) +
            " is neither images ('|u1' or '<f4' [N, C, H, W] or [N, H, W]) nor token ids "
            "(an integer dtype of shape [N, T])";
    return false;
  }
  if (shape.size() != 4 && shape.size() != 3) {
    error = path + ": images have shape " + shapeString(shape) +
            " (expected [N, C, H, W] or [N, H, W])";
    return false;
  }
  d.n = shape[0];
  d.c = shape.size() == 4 ? shape[1] : 1;
  d.h = shape[shape.size() - 2];
  d.w = shape[shape.size() - 1];
  if (d.n == 0 || d.c == 0 || d.h == 0 || d.w == 0) {
    error = path + ": images have shape " + shapeString(shape) +
            " (an empty dataset)";
    return false;
  }
  const uint8_t *data = bytes.data() + header.dataOffset;
  const size_t count = (bytes.size() - header.dataOffset) / itemSize;
  if (itemSize == 1) {
    d.isFloat = false;
    bytes.erase(bytes.begin(),
                bytes.begin() + static_cast<std::ptrdiff_t>(header.dataOffset));
    d.u8 = std::move(bytes);
    return true;
  }
  d.isFloat = true;
  d.f32.resize(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = readLE32(data + 4 * i);
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) {
      error = path + ": image value " + std::to_string(i) + " is " +
              (std::isnan(v) ? "NaN" : "infinite");
      return false;
    }
    // Past 2^64 a value's square (batch norm's variance, an L2 norm)
    // overflows f32: the run would only report a diverged loss.
    if (std::fabs(v) >= 18446744073709551616.0f) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", double(v));
      error = path + ": image value " + std::to_string(i) + " is " + text +
              ", past what f32 training can use (its square overflows f32); scale the "
              "images to a small range, e.g. [0, 1]";
      return false;
    }
    d.f32[i] = v;
  }
  return true;
}

bool readLabels(const std::string &path, std::vector<int64_t> &labels, int64_t &targets,
                std::string &error) {
  std::vector<uint8_t> bytes;
  NpyHeader header;
  size_t itemSize = 0;
  if (!readNpy(path, "labels", {"<i8", "<i4", "|u1", "<u1"}, bytes, header,
               itemSize, error))
    return false;
  if (header.shape.size() != 1 && header.shape.size() != 2) {
    error = path + ": labels have shape " + shapeString(header.shape) +
            " (expected [N], or [N, T] targets of a token sequence)";
    return false;
  }
  // 0: one label per sample ([N]); T: [N, T] sequence targets.
  targets = header.shape.size() == 2 ? header.shape[1] : 0;
  const size_t n = static_cast<size_t>(header.shape[0] * std::max<int64_t>(targets, 1));
  const uint8_t *data = bytes.data() + header.dataOffset;
  labels.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t v;
    if (itemSize == 8)
      v = static_cast<int64_t>(readLE64(data + 8 * i));
    else if (itemSize == 4)
      v = static_cast<int32_t>(readLE32(data + 4 * i));
    else
      v = data[i];
    if (v < 0 && header.shape.size() == 1) {
      error = path + ": label " + std::to_string(i) + " is " +
              std::to_string(v) + " (labels must be >= 0)";
      return false;
    }
    labels[i] = v;
  }
  return true;
}

} // namespace

bool parseNpyHeader(const uint8_t *bytes, size_t size, NpyHeader &header,
                    std::string &error) {
  static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(bytes, magic, 6) != 0) {
    error = "not an NPY file (no \\x93NUMPY magic)";
    return false;
  }
  const int major = bytes[6], minor = bytes[7];
  size_t start, length;
  if (major == 1 && minor == 0) {
    start = 10;
    length = size_t(bytes[8]) | size_t(bytes[9]) << 8;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (size < 12) {
      error = "truncated NPY header";
      return false;
    }
    start = 12;
    length = readLE32(bytes + 8);
  } else {
    error = "unsupported NPY version " + std::to_string(major) + "." +
            std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)";
    return false;
  }
  if (length > size - start) {
    error = "truncated NPY header (it claims " + std::to_string(length) +
            " bytes, the file holds " + std::to_string(size - start) +
            " after the preamble)";
    return false;
  }
  std::vector<std::pair<std::string, PyValue>> entries;
  DictParser parser(
      std::string_view(reinterpret_cast<const char *>(bytes + start), length));
  if (!parser.parseDict(entries, error))
    return false;
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    if (key == "descr")
      descr = &value;
    else if (key == "fortran_order")
      fortran = &value;
    else if (key == "shape")
      shape = &value;
  }
  if (!descr || !fortran || !shape) {
    error = std::string("bad NPY header: no '") +
            (!descr     ? "descr"
             : !fortran ? "fortran_order"
                        : "shape") +
            "' key";
    return false;
  }
  if (descr->kind != PyValue::String) {
    error = "unsupported dtype: 'descr' is not a simple type string "
            "(structured arrays are not supported)";
    return false;
  }
  if (fortran->kind != PyValue::Bool) {
    error = "bad NPY header: 'fortran_order' is not True or False";
    return false;
  }
  if (shape->kind != PyValue::Sequence) {
    error = "bad NPY header: 'shape' is not a tuple";
    return false;
  }
  NpyHeader h;
  h.descr = descr->str;
  h.fortranOrder = fortran->b;
  for (const PyValue &d : shape->items) {
    if (d.kind != PyValue::Int || d.i < 0) {
      error = "bad NPY header: 'shape' holds something other than "
              "non-negative integers";
      return false;
    }
    h.shape.push_back(d.i);
  }
  h.dataOffset = start + length;
  header = std::move(h);
  return true;
}

bool loadNpyPair(const std::string &imagesPath, const std::string &labelsPath,
                 Dataset &out, std::string &error) {
  Dataset d;
  if (!readImages(imagesPath, d, error) ||
      !readLabels(labelsPath, d.labels, d.targets, error))
    return false;
  const bool perToken = d.perToken = d.targets > 0;
  d.targets = std::max<int64_t>(d.targets, 1);
  const int64_t rows = static_cast<int64_t>(d.labels.size()) / d.targets;
  if (perToken && !d.tokens) {
    error = labelsPath + ": labels have shape (" + std::to_string(rows) + ", " +
            std::to_string(d.targets) + ") (expected [N]; [N, T] targets go with token ids "
            "[N, T])";
    return false;
  }
  if (perToken && (d.targets != d.w || rows != d.n)) {
    error = labelsPath + ": holds [" + std::to_string(rows) + ", " + std::to_string(d.targets) +
            "] targets but " + imagesPath + " holds [" + std::to_string(d.n) + ", " +
            std::to_string(d.w) + "] token ids; x and y of sequence targets need one shape";
    return false;
  }
  if (rows != d.n) {
    error = labelsPath + ": holds " + std::to_string(rows) +
            " labels but " + imagesPath + " holds " + std::to_string(d.n) +
            (d.tokens ? " sequences" : " images");
    return false;
  }
  out = std::move(d);
  return true;
}

bool loadNpy(const std::string &dir, DataSplit &out, std::string &error) {
  const char *const expected =
      "(expected train_x.npy, train_y.npy, test_x.npy, test_y.npy)";
  if (!isDirectory(dir)) {
    error = dir + ": " + notDirectoryReason(dir) + " " + expected;
    return false;
  }
  for (const char *name :
       {"train_x.npy", "train_y.npy", "test_x.npy", "test_y.npy"}) {
    // Anything there counts as found: reading it says what is wrong with,
    // say, a symlink to /dev/zero.
    if (!pathExists(joinPath(dir, name))) {
      error = dir + ": " + name + " is missing " + expected;
      return false;
    }
  }
  DataSplit split;
  if (!loadNpyPair(joinPath(dir, "train_x.npy"), joinPath(dir, "train_y.npy"),
                   split.train, error) ||
      !loadNpyPair(joinPath(dir, "test_x.npy"), joinPath(dir, "test_y.npy"),
                   split.test, error))
    return false;
  const Dataset &a = split.train, &b = split.test;
  if (a.tokens != b.tokens) {
    error = joinPath(dir, "test_x.npy") + ": holds " +
            (b.tokens ? "integer token ids" : "images") + " but train_x.npy holds " +
            (a.tokens ? "integer token ids" : "images");
    return false;
  }
  if (a.c != b.c || a.h != b.h || a.w != b.w || a.isFloat != b.isFloat) {
    error = joinPath(dir, "test_x.npy") + ": images are [" +
            std::to_string(b.c) + ", " + std::to_string(b.h) + ", " +
            std::to_string(b.w) + "] " + (b.isFloat ? "float32" : "uint8") +
            " but train_x.npy holds [" + std::to_string(a.c) + ", " +
            std::to_string(a.h) + ", " + std::to_string(a.w) + "] " +
            (a.isFloat ? "float32" : "uint8");
    return false;
  }
  out = std::move(split);
  return true;
}

} // namespace tcc::rt::data
