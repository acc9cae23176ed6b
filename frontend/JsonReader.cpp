//===- JsonReader.cpp - Checked reading of model.json values --------------===//

#include "frontend/JsonReader.h"

#include "frontend/ModelSpec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tcc::frontend::detail {

void fail(const std::string &message) { throw SpecError(message); }

std::string joinPath(std::string_view base, std::string_view key) {
  if (base.empty())
    return std::string(key);
  return std::string(base) + "." + std::string(key);
}

namespace {

/// Escapes `s` for a one-line message, cutting it after `limit` bytes (on a
/// UTF-8 boundary).
std::string escape(std::string_view s, size_t limit = 48) {
  std::string out;
  size_t i = 0;
  for (; i < s.size() && i < limit; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\\' || c == '"')
      out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  if (i < s.size()) {
    while (!out.empty() &&
           (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
      out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0)
      out.pop_back();
    out += "...";
  }
  return out;
}

std::string describeAt(const Json &v, int depth) {
  switch (v.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return v.get<bool>() ? "true" : "false";
  case Json::value_t::number_integer:
    return std::to_string(v.get<int64_t>());
  case Json::value_t::number_unsigned:
    return std::to_string(v.get<uint64_t>());
  case Json::value_t::number_float:
    return Json(v.get<double>()).dump();
  case Json::value_t::string:
    return "\"" + escape(v.get_ref<const std::string &>()) + "\"";
  case Json::value_t::array: {
    if (v.empty())
      return "[]";
    if (depth >= 2)
      return "[...]";
    std::string out = "[";
    size_t shown = 0;
    for (const Json &e : v) {
      if (shown == 6) {
        out += ", ...";
        break;
      }
      out += (shown++ ? ", " : "") + describeAt(e, depth + 1);
    }
    return out + "]";
  }
  case Json::value_t::object:
    return v.empty() ? "{}" : "{...}";
  default:
    return "a binary value";
  }
}

} // namespace

std::string quote(std::string_view s) { return "'" + escape(s) + "'"; }

std::string describe(const Json &value) { return describeAt(value, 0); }

std::string formatNumber(double value) {
  if (std::isfinite(value) && value == std::floor(value) &&
      std::fabs(value) < 1e15)
    return std::to_string(static_cast<int64_t>(value));
  return Json(value).dump();
}

std::string didYouMean(std::string_view word,
                       const std::vector<std::string> &candidates) {
  std::string match = closestMatch(word, candidates);
  return match.empty() ? "" : "; did you mean " + quote(match) + "?";
}

std::optional<int64_t> asInteger(const Json &value) {
  if (value.is_number_integer() && !value.is_number_unsigned())
    return value.get<int64_t>();
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return static_cast<int64_t>(u);
    return std::nullopt;
  }
  if (value.is_number_float()) {
    double d = value.get<double>();
    // 2^63 is the first double outside int64_t.
    if (std::isfinite(d) && d == std::floor(d) && d >= -9.2233720368547758e18 &&
        d < 9.2233720368547758e18)
      return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<double> asNumber(const Json &value) {
  if (!value.is_number())
    return std::nullopt;
  double d = value.get<double>();
  if (!std::isfinite(d))
    return std::nullopt;
  return d;
}

bool Range::contains(double v) const {
  bool aboveLo = loOpen ? v > lo : v >= lo;
  bool belowHi = hiOpen ? v < hi : v <= hi;
  return aboveLo && belowHi;
}

std::string Range::text() const {
  bool hasLo = std::isfinite(lo), hasHi = std::isfinite(hi);
  if (hasLo && hasHi)
    return std::string("in ") + (loOpen ? "(" : "[") + formatNumber(lo) +
           ", " + formatNumber(hi) + (hiOpen ? ")" : "]");
  if (hasLo)
    return (loOpen ? "> " : ">= ") + formatNumber(lo);
  if (hasHi)
    return (hiOpen ? "< " : "<= ") + formatNumber(hi);
  return "";
}

//===----------------------------------------------------------------------===//
// ObjectReader
//===----------------------------------------------------------------------===//

ObjectReader::ObjectReader(const Json &value, std::string owner,
                           std::string path)
    : value(value), ownerName(std::move(owner)), pathName(std::move(path)) {
  if (!value.is_object()) {
    if (ownerName.empty() && pathName.empty())
      fail("the top level must be a JSON object {...}, got " +
           describe(value));
    fail(selfRef() + " must be an object {...}, got " + describe(value));
  }
}

std::string ObjectReader::fieldRef(std::string_view key) const {
  if (ownerName.empty())
    return joinPath(pathName, key);
  return ownerName + ": field " + quote(joinPath(pathName, key));
}

std::string ObjectReader::selfRef() const {
  if (ownerName.empty())
    return pathName.empty() ? "model" : pathName;
  if (pathName.empty())
    return ownerName;
  return ownerName + ": field " + quote(pathName);
}

void ObjectReader::failField(std::string_view key,
                             const std::string &what) const {
  fail(fieldRef(key) + " " + what);
}

void ObjectReader::failHere(const std::string &what) const {
  fail(selfRef() + ": " + what);
}

std::optional<std::string>
ObjectReader::firstUnknown(const std::vector<std::string> &allowed) const {
  for (const auto &item : value.items())
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
      return item.key();
  return std::nullopt;
}

void ObjectReader::failUnknown(const std::string &key,
                               const std::vector<std::string> &allowed,
                               std::string_view forWhat) const {
  std::string hint = didYouMean(key, allowed);
  if (hint.empty() && allowed.size() <= 16) {
    std::string list;
    for (const std::string &a : allowed)
      list += (list.empty() ? "" : ", ") + a;
    hint = allowed.empty() ? "; it takes no fields" : "; valid fields: " + list;
  }
  if (ownerName.empty() && pathName.empty())
    fail("unknown top-level field " + quote(key) + hint);
  if (ownerName.empty())
    fail(pathName + ": unknown field " + quote(key) + std::string(forWhat) +
         hint);
  if (pathName.empty())
    fail(ownerName + ": unknown field " + quote(key) + std::string(forWhat) +
         hint);
  fail(ownerName + ": unknown field " + quote(key) + " in " + quote(pathName) +
       std::string(forWhat) + hint);
}

void ObjectReader::allowOnly(const std::vector<std::string> &allowed,
                             std::string_view forWhat) const {
  if (auto key = firstUnknown(allowed))
    failUnknown(*key, allowed, forWhat);
}

std::string ObjectReader::variant(std::string_view typeKey,
                                  const Variants &byType,
                                  const std::vector<std::string> &common,
                                  std::string_view typeNoun) const {
  std::vector<std::string> types, all = common;
  all.emplace_back(typeKey);
  for (const auto &[type, fields] : byType) {
    types.push_back(type);
    all.insert(all.end(), fields.begin(), fields.end());
  }
  // Suggest among the fields that the given type accepts, if it is valid.
  const Json *typeValue = find(typeKey);
  std::vector<std::string> mine = all;
  for (const auto &[type, fields] : byType)
    if (typeValue && *typeValue == type) {
      mine = common;
      mine.emplace_back(typeKey);
      mine.insert(mine.end(), fields.begin(), fields.end());
    }
  if (auto key = firstUnknown(all))
    failUnknown(*key, mine);

  std::string type = choice(typeKey, std::nullopt, types);
  for (const auto &item : value.items()) {
    if (std::find(mine.begin(), mine.end(), item.key()) != mine.end())
      continue;
    std::vector<std::string> owners;
    for (const auto &[other, fields] : byType)
      if (std::find(fields.begin(), fields.end(), item.key()) != fields.end())
        owners.push_back(other);
    std::string list;
    for (size_t i = 0; i < owners.size(); ++i)
      list += (i == 0 ? "" : i + 1 == owners.size() ? " and " : ", ") +
              (typeNoun.empty() ? owners[i] : quote(owners[i]));
    failField(item.key(),
              "does not apply to " +
                  (typeNoun.empty() ? type
                                    : std::string(typeNoun) + " " + quote(type)) +
                  " (only to " + list + ")");
  }
  return type;
}

const Json *ObjectReader::find(std::string_view key) const {
  auto it = value.find(key);
  return it == value.end() ? nullptr : &*it;
}

const Json &ObjectReader::require(std::string_view key) const {
  if (const Json *v = find(key))
    return *v;
  if (ownerName.empty() && pathName.empty())
    fail("missing top-level field " + quote(key));
  if (ownerName.empty())
    fail(pathName + ": missing field " + quote(key));
  fail(ownerName + ": missing field " + quote(joinPath(pathName, key)));
}

ObjectReader ObjectReader::object(std::string_view key) const {
  return ObjectReader(require(key), ownerName, joinPath(pathName, key));
}

std::string ObjectReader::integerKind(int64_t min, int64_t max) {
  bool unbounded = max == std::numeric_limits<int64_t>::max();
  if (min == 1 && unbounded)
    return "a positive integer";
  if (min == 0 && unbounded)
    return "a non-negative integer";
  if (unbounded)
    return "an integer >= " + std::to_string(min);
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
         "]";
}

int64_t ObjectReader::checkInteger(std::string_view key, const Json &v,
                                   int64_t min, int64_t max,
                                   const std::string &expected) const {
  std::optional<int64_t> i = asInteger(v);
  std::optional<double> d = asNumber(v);
  // Above a finite max (one of tcc's limits) say so, whether or not the
  // number still fits an int64: "2^64" is too large, not "not an integer".
  if (max != std::numeric_limits<int64_t>::max() && d &&
      (i ? *i > max : *d > static_cast<double>(max)))
    failField(key, "must be at most " + std::to_string(max) + kLimitNote +
                       ", got " + describe(v));
  if (!i || *i < min || *i > max)
    failField(key, "must be " + expected + ", got " + describe(v));
  return *i;
}

int64_t ObjectReader::integer(std::string_view key,
                              std::optional<int64_t> dflt, int64_t min,
                              int64_t max) const {
  const Json *v = dflt ? find(key) : &require(key);
  if (!v)
    return *dflt;
  // The lower bound is the rule people read; the upper one has its own
  // message above.
  return checkInteger(key, *v, min, max,
                      integerKind(min, std::numeric_limits<int64_t>::max()));
}

double ObjectReader::number(std::string_view key, std::optional<double> dflt,
                            Range range) const {
  const Json *v = dflt ? find(key) : &require(key);
  if (!v)
    return *dflt;
  std::string rule = range.text();
  std::optional<double> d = asNumber(*v);
  if (!d)
    failField(key, "must be a number" + (rule.empty() ? "" : " " + rule) +
                       ", got " + describe(*v));
  if (!range.contains(*d))
    failField(key, "must be " + rule + ", got " + describe(*v));
  return *d;
}

bool ObjectReader::boolean(std::string_view key,
                           std::optional<bool> dflt) const {
  const Json *v = dflt ? find(key) : &require(key);
  if (!v)
    return *dflt;
  if (!v->is_boolean())
    failField(key, "must be true or false, got " + describe(*v));
  return v->get<bool>();
}

std::string ObjectReader::string(std::string_view key,
                                 std::optional<std::string> dflt) const {
  const Json *v = dflt ? find(key) : &require(key);
  if (!v)
    return *dflt;
  if (!v->is_string())
    failField(key, "must be a string, got " + describe(*v));
  return v->get<std::string>();
}

std::string ObjectReader::choice(std::string_view key,
                                 std::optional<std::string> dflt,
                                 const std::vector<std::string> &choices) const {
  const Json *v = dflt ? find(key) : &require(key);
  if (!v)
    return *dflt;
  std::string list;
  for (const std::string &c : choices)
    list += (list.empty() ? "\"" : ", \"") + c + "\"";
  if (!v->is_string())
    failField(key, "must be one of " + list + ", got " + describe(*v));
  const std::string &s = v->get_ref<const std::string &>();
  if (std::find(choices.begin(), choices.end(), s) == choices.end())
    failField(key, "must be one of " + list + ", got " + describe(*v) +
                       didYouMean(s, choices));
  return s;
}

} // namespace tcc::frontend::detail
