//===- JsonReader.h - Checked reading of model.json values ------*- C++ -*-===//
//
// Internal to the frontend: strict JSON parsing with line:column errors, and
// ObjectReader, which reads one JSON object field by field and words every
// complaint the same way ("node 'c1' (graph[0]): field 'stride' must be ...",
// "train.optimizer.lr must be > 0, got -0.1").
//
// Errors are thrown as SpecError and turned into the error string by
// parseModelSpec. nlohmann's own exceptions are never relied on: the text is
// parsed through SAX and values are type-checked before they are read, so the
// library behaves the same when another translation unit instantiates the
// nlohmann templates with -fno-exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_JSONREADER_H
#define TCC_FRONTEND_JSONREADER_H

#include "frontend/Limits.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::frontend::detail {

using Json = nlohmann::json;

/// A user error in model.json. `location` is "LINE:COL" for errors found in
/// the text, empty for errors found in the values.
class SpecError : public std::runtime_error {
public:
  explicit SpecError(const std::string &message, std::string location = "")
      : std::runtime_error(message), location(std::move(location)) {}
  std::string location;
};

[[noreturn]] void fail(const std::string &message);

using limits::kLimitNote;

/// Parses `text` as strict JSON (no comments, no duplicate keys, no
/// non-finite numbers, nesting at most 64 deep). Throws SpecError with a
/// location and a message "malformed JSON: ..." or "duplicate key '...'".
Json parseJsonText(std::string_view text);

/// `s` in single quotes, control characters escaped, long text shortened.
std::string quote(std::string_view s);
/// A short one-line rendering of a value for "got ..." ("two" with double
/// quotes, -0.1, [1, 2], {...}).
std::string describe(const Json &value);
/// A number as a person writes it: 1, 0.5, 1e-05.
std::string formatNumber(double value);
/// "; did you mean 'x'?" for the closest candidate, or "".
std::string didYouMean(std::string_view word,
                       const std::vector<std::string> &candidates);

/// `value` as an integer if it is one (3 and 3.0, not 3.5 or true).
std::optional<int64_t> asInteger(const Json &value);
/// `value` as a finite number if it is one (not a bool).
std::optional<double> asNumber(const Json &value);

/// An interval of allowed numbers, printed as "> 0", ">= 0" or "in [0, 1)".
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool loOpen = false, hiOpen = false;

  bool contains(double v) const;
  std::string text() const;

  static Range any() { return {}; }
  static Range positive() { return {0, infinity(), true, false}; }
  static Range nonNegative() { return {0, infinity(), false, false}; }
  /// [lo, hi], [lo, hi), (lo, hi) or (lo, hi].
  static Range closed(double lo, double hi) { return {lo, hi, false, false}; }
  static Range closedOpen(double lo, double hi) { return {lo, hi, false, true}; }
  static Range open(double lo, double hi) { return {lo, hi, true, true}; }
  static Range openClosed(double lo, double hi) { return {lo, hi, true, false}; }

private:
  static double infinity() { return std::numeric_limits<double>::infinity(); }
};

/// Reads one JSON object. Messages name the object in one of two styles:
/// inside a node, `owner` is "node 'c1' (graph[0])" and fields read
/// "node 'c1' (graph[0]): field 'weight.init'"; in a section, `owner` is
/// empty and fields read "train.optimizer.lr".
class ObjectReader {
public:
  /// Fails unless `value` is an object. `path` is the dotted path of the
  /// object below `owner` ("train.optimizer", "weight"; "" for the top).
  ObjectReader(const Json &value, std::string owner, std::string path);

  const Json &json() const { return value; }
  const std::string &owner() const { return ownerName; }
  const std::string &path() const { return pathName; }

  /// How messages name field `key` of this object.
  std::string fieldRef(std::string_view key) const;
  /// How messages name this object ("train.optimizer", "node 'c' (graph[0])").
  std::string selfRef() const;

  [[noreturn]] void failField(std::string_view key,
                              const std::string &what) const;
  /// `what` about the object as a whole: "<selfRef>: <what>".
  [[noreturn]] void failHere(const std::string &what) const;

  /// Fails on the first key not in `allowed`; `forWhat` completes the message
  /// (" for op conv2d").
  void allowOnly(const std::vector<std::string> &allowed,
                 std::string_view forWhat = "") const;
  /// The first key not in `allowed`, or nullopt.
  std::optional<std::string>
  firstUnknown(const std::vector<std::string> &allowed) const;
  [[noreturn]] void failUnknown(const std::string &key,
                                const std::vector<std::string> &allowed,
                                std::string_view forWhat = "") const;

  bool has(std::string_view key) const { return value.contains(key); }
  /// The value of `key`, or nullptr when absent (an explicit null is present).
  const Json *find(std::string_view key) const;
  /// The value of `key`; fails with "missing field" when absent.
  const Json &require(std::string_view key) const;
  /// A nested object; fails unless `key` holds one.
  ObjectReader object(std::string_view key) const;

  // Typed reads. An absent key gives `dflt`, or fails as missing when `dflt`
  // is nullopt. Wrong types and values outside the range fail with messages
  // that name the field, the rule and the value.
  int64_t integer(std::string_view key, std::optional<int64_t> dflt,
                  int64_t min,
                  int64_t max = std::numeric_limits<int64_t>::max()) const;
  double number(std::string_view key, std::optional<double> dflt,
                Range range = Range::any()) const;
  bool boolean(std::string_view key, std::optional<bool> dflt) const;
  std::string string(std::string_view key,
                     std::optional<std::string> dflt) const;
  std::string choice(std::string_view key, std::optional<std::string> dflt,
                     const std::vector<std::string> &choices) const;

  /// Fields by type, for objects whose valid fields depend on a type field.
  using Variants = std::vector<std::pair<std::string, std::vector<std::string>>>;
  /// Reads the type field `typeKey` (one of the types in `byType`) and
  /// checks the other fields: a field of no type is unknown (with a
  /// suggestion), a field of another type "does not apply to <typeNoun>
  /// 'type'" (to `type` alone when `typeNoun` is empty).
  std::string variant(std::string_view typeKey, const Variants &byType,
                      const std::vector<std::string> &common,
                      std::string_view typeNoun) const;

  /// Checks an integer value that came from `key` (for pairs and lists). A
  /// finite `max` is one of tcc's limits: a larger value is reported as
  /// "must be at most MAX (a limit of tcc ...)".
  int64_t checkInteger(std::string_view key, const Json &v, int64_t min,
                       int64_t max, const std::string &expected) const;

  /// "a positive integer", "a non-negative integer", "an integer >= 2".
  static std::string integerKind(int64_t min, int64_t max);

private:
  const Json &value;
  std::string ownerName, pathName;
};

/// Joins a dotted path: join("train", "lr") == "train.lr", join("", "x") == "x".
std::string joinPath(std::string_view base, std::string_view key);

} // namespace tcc::frontend::detail

#endif // TCC_FRONTEND_JSONREADER_H
