//===- Safetensors.cpp - Read and write .safetensors files -----------------===//

#include "runtime/trainer/Safetensors.h"

#include "runtime/AtomicFile.h"
#include "runtime/InputFile.h"
#include "runtime/data/FileReader.h"
#include "runtime/trainer/Text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt {

using Json = nlohmann::json;

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const Tensor *SafetensorsFile::find(const std::string &name) const {
  for (const Tensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool parseDType(std::string_view text, DType &out) {
  static const std::pair<const char *, DType> table[] = {
      {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
      {"I64", DType::I64}, {"U8", DType::U8}};
  for (const auto &[name, type] : table)
    if (text == name) {
      out = type;
      return true;
    }
  return false;
}

namespace {

/// numel * size without overflow; false if it does not fit in 63 bits.
bool byteCount(const std::vector<int64_t> &shape, DType dtype, uint64_t &out) {
  uint64_t n = dtypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return false;
  }
  if (n > static_cast<uint64_t>(INT64_MAX))
    return false;
  out = n;
  return true;
}

std::string jsonText(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace

bool encodeSafetensors(const std::vector<TensorRef> &tensors,
                       const std::map<std::string, std::string> &metadata,
                       std::string &out, std::string &error) {
  std::set<std::string> names;
  for (const TensorRef &t : tensors) {
    if (t.name == "__metadata__") {
      error = "cannot store a tensor named '__metadata__' (reserved by the "
              "safetensors format)";
      return false;
    }
    if (!names.insert(t.name).second) {
      error = "tensor '" + oneLine(t.name) + "' is listed twice";
      return false;
    }
    uint64_t bytes = 0;
    if (!byteCount(t.shape, t.dtype, bytes)) {
      error = "tensor '" + oneLine(t.name) + "' has an invalid shape " +
              shapeText(t.shape);
      return false;
    }
    if (bytes != t.bytes || (bytes > 0 && !t.data)) {
      error = "tensor '" + oneLine(t.name) + "' (" + dtypeName(t.dtype) +
              " " + shapeText(t.shape) + ") needs " + std::to_string(bytes) +
              " bytes, got " + std::to_string(t.bytes);
      return false;
    }
  }

  // Largest elements first, then by name: every tensor starts at a multiple
  // of its element size once the data section is 8-byte aligned.
  std::vector<const TensorRef *> order;
  for (const TensorRef &t : tensors)
    order.push_back(&t);
  std::stable_sort(order.begin(), order.end(),
                   [](const TensorRef *a, const TensorRef *b) {
                     size_t sa = dtypeSize(a->dtype), sb = dtypeSize(b->dtype);
                     if (sa != sb)
                       return sa > sb;
                     return a->name < b->name;
                   });

  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const TensorRef *t : order) {
    header[t->name] = {{"dtype", dtypeName(t->dtype)},
                       {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->bytes}}};
    offset += t->bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception &) {
    error = "a tensor name or metadata entry is not valid UTF-8";
    return false;
  }
  while ((8 + text.size()) % 8 != 0)
    text += ' ';

  out.clear();
  out.reserve(8 + text.size() + offset);
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += text;
  for (const TensorRef *t : order)
    out.append(static_cast<const char *>(t->data), t->bytes);
  return true;
}

bool decodeSafetensors(std::string_view bytes, const std::string &what,
                       SafetensorsFile &out, std::string &error) {
  const std::string file = oneLine(what);
  auto fail = [&](const std::string &message) {
    error = file + ": " + message;
    return false;
  };
  out = SafetensorsFile();
  if (bytes.size() < 8)
    return fail("not a safetensors file: " + std::to_string(bytes.size()) +
                " bytes, too short for the 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (n > kMaxSafetensorsHeader)
    return fail("not a safetensors file: header length " + std::to_string(n) +
                " exceeds the limit of " +
                std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (n > bytes.size() - 8)
    return fail("not a safetensors file (or truncated): header length " +
                std::to_string(n) + " exceeds the " +
                std::to_string(bytes.size() - 8) +
                " bytes that follow it");
  if (n < 2)
    return fail("not a safetensors file: header length " + std::to_string(n) +
                " is too small for a JSON object");
  std::string_view headerText = bytes.substr(8, n);
  if (headerText[0] != '{')
    return fail("not a safetensors file: the header does not start with '{'");

  // nlohmann keeps one of two equal keys silently; a header that lists a
  // tensor twice is corrupt (which of the two is meant?), so track the keys
  // of every open object.
  std::vector<std::set<std::string>> openObjects;
  std::string duplicate;
  bool duplicateTopLevel = false;
  auto trackKeys = [&](int, Json::parse_event_t event, Json &parsed) {
    if (event == Json::parse_event_t::object_start) {
      openObjects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      openObjects.pop_back();
    } else if (event == Json::parse_event_t::key && duplicate.empty() &&
               !openObjects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
      duplicateTopLevel = openObjects.size() == 1;
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(headerText, trackKeys);
  } catch (const Json::exception &e) {
    std::string message = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    size_t close = message.find("] ");
    if (close != std::string::npos)
      message = message.substr(close + 2);
    return fail("header is not valid JSON: " + oneLine(message));
  }
  if (!header.is_object())
    return fail("header is not a JSON object");
  if (!duplicate.empty())
    return fail(duplicateTopLevel
                    ? "the header lists '" + oneLine(duplicate) +
                          "' twice (a duplicate JSON key): the file is corrupt"
                    : "an object in the header has the key '" +
                          oneLine(duplicate) +
                          "' twice (a duplicate JSON key): the file is "
                          "corrupt");

  const uint64_t dataSize = bytes.size() - 8 - n;
  const char *data = bytes.data() + 8 + n;

  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const auto &item : header.items()) {
    const std::string &name = item.key();
    const Json &value = item.value();
    if (name == "__metadata__") {
      if (!value.is_object())
        return fail("__metadata__ must be an object of strings, got " +
                    oneLine(jsonText(value)));
      for (const auto &m : value.items()) {
        if (!m.value().is_string())
          return fail("__metadata__ entry '" + oneLine(m.key()) +
                      "' must be a string, got " +
                      oneLine(jsonText(m.value())));
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = "tensor '" + oneLine(name) + "'";
    if (!value.is_object())
      return fail(where + " must be an object with dtype, shape and "
                          "data_offsets");
    for (const auto &field : value.items())
      if (field.key() != "dtype" && field.key() != "shape" &&
          field.key() != "data_offsets")
        return fail(where + " has an unknown field '" + oneLine(field.key()) +
                    "'");
    Entry e;
    e.name = name;
    auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string())
      return fail(where + " has no string 'dtype'");
    if (!parseDType(dtype->get<std::string>(), e.dtype))
      return fail(where + " has dtype '" +
                  oneLine(dtype->get<std::string>()) +
                  "', which tcc does not support (F32, F16, BF16, I64, U8)");
    auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array())
      return fail(where + " has no 'shape' array");
    for (const Json &d : *shape) {
      if (!d.is_number_integer() || (d.is_number_unsigned()
                                         ? d.get<uint64_t>() > INT64_MAX
                                         : d.get<int64_t>() < 0))
        return fail(where + " has an invalid shape " +
                    oneLine(jsonText(*shape)));
      e.shape.push_back(d.get<int64_t>());
    }
    auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() ||
        offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      return fail(where + " needs 'data_offsets' [begin, end] of two "
                          "non-negative integers");
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.begin > e.end)
      return fail(where + " has data_offsets [" + std::to_string(e.begin) +
                  ", " + std::to_string(e.end) + "] with begin > end");
    if (e.end > dataSize)
      return fail(where + " has data_offsets [" + std::to_string(e.begin) +
                  ", " + std::to_string(e.end) +
                  "] outside the data section of " + std::to_string(dataSize) +
                  " bytes (truncated file?)");
    uint64_t need = 0;
    if (!byteCount(e.shape, e.dtype, need))
      return fail(where + " has a shape " + shapeText(e.shape) +
                  " too large to address");
    if (need != e.end - e.begin)
      return fail(where + " is " + dtypeName(e.dtype) + " " +
                  shapeText(e.shape) + " (" + std::to_string(need) +
                  " bytes), but its data_offsets [" + std::to_string(e.begin) +
                  ", " + std::to_string(e.end) + "] hold " +
                  std::to_string(e.end - e.begin));
    entries.push_back(std::move(e));
  }

  // The tensors must tile the data section: sorted by offset, each starts
  // where the previous ended, and the last ends at the end of the file.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry &a, const Entry &b) {
                     return a.begin != b.begin ? a.begin < b.begin
                                               : a.end < b.end;
                   });
  uint64_t expected = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    if (e.begin < expected)
      return fail("tensor '" + oneLine(e.name) + "' overlaps tensor '" +
                  oneLine(entries[i - 1].name) + "' (data_offsets start at " +
                  std::to_string(e.begin) + ", before " +
                  std::to_string(expected) + ")");
    if (e.begin > expected)
      return fail("the data section has a gap of " +
                  std::to_string(e.begin - expected) +
                  " bytes before tensor '" + oneLine(e.name) + "'");
    expected = e.end;
  }
  if (expected != dataSize)
    return fail("the data section has " + std::to_string(dataSize - expected) +
                " bytes after the last tensor that belong to no tensor");

  out.tensors.reserve(entries.size());
  for (Entry &e : entries) {
    Tensor t;
    t.name = std::move(e.name);
    t.dtype = e.dtype;
    t.shape = std::move(e.shape);
    t.data.assign(data + e.begin, data + e.end);
    out.tensors.push_back(std::move(t));
  }
  return true;
}

bool readWholeFile(const std::string &path, std::string &out, uint64_t maxBytes,
                   std::string &error) {
  if (readInputFile(path, "checkpoint", maxBytes, out, error))
    return true;
  error = oneLine(error);
  return false;
}

bool writeSafetensors(const std::string &path,
                      const std::vector<TensorRef> &tensors,
                      const std::map<std::string, std::string> &metadata,
                      std::string &error) {
  std::string bytes;
  if (!encodeSafetensors(tensors, metadata, bytes, error)) {
    error = "cannot write '" + oneLine(path) + "': " + error;
    return false;
  }
  if (!writeFileAtomically(path, bytes, error)) {
    error = oneLine(error);
    return false;
  }
  return true;
}

bool readSafetensors(const std::string &path, SafetensorsFile &out,
                     std::string &error, uint64_t maxBytes) {
  std::string bytes;
  if (!readWholeFile(path, bytes, maxBytes, error))
    return false;
  return decodeSafetensors(bytes, path, out, error);
}

} // namespace tcc::rt
