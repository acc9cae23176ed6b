//===- Text.h - Small text helpers shared by the trainer ------*- C++ -*-===//
//
// Shape text for messages, "did you mean" suggestions, one-line errors.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_TEXT_H
#define TCC_RUNTIME_TRAINER_TEXT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::rt {

/// "[3, 32, 32]"; "[]" for a scalar.
std::string shapeText(const std::vector<int64_t> &shape);

/// Levenshtein distance (bytes).
size_t editDistance(std::string_view a, std::string_view b);

/// The candidate closest to `name` by edit distance (the first of equals);
/// empty when there are no candidates.
std::string closestMatch(std::string_view name,
                         const std::vector<std::string> &candidates);

/// `text` with control characters (newlines included) escaped, so that an
/// error message always stays on one line.
std::string oneLine(std::string_view text);

/// A decimal unsigned integer, the whole text (no sign, no spaces).
bool parseUnsigned(const std::string &text, uint64_t &out);

/// "0123456789abcdef": 16 lower-case hex digits.
std::string hex64(uint64_t value);
/// Parses what hex64 writes (1 to 16 hex digits); false otherwise.
bool parseHex64(std::string_view text, uint64_t &value);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_TEXT_H
