//===- Vocabulary.h - A character vocabulary for sampling -------*- C++ -*-===//
//
// The id -> character list scripts/text_to_npy.py writes as vocab.json (a
// JSON array of one-character strings, code-point order), and the UTF-8
// text <-> ids conversions of `./train sample`.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_VOCABULARY_H
#define TCC_RUNTIME_TRAINER_VOCABULARY_H

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

class Vocabulary {
public:
  /// Reads `path`; false with `error` one line naming the file when it is
  /// not a JSON array of distinct one-character strings.
  bool load(const std::string &path, std::string &error);
  int64_t size() const { return static_cast<int64_t>(characters.size()); }
  /// The ids of the UTF-8 `text`; false with `error` naming the first
  /// character not in the vocabulary and its position (1-based, in
  /// characters), or the byte where the text stops being UTF-8.
  bool encode(const std::string &text, std::vector<int64_t> &ids, std::string &error) const;
  /// The UTF-8 text of `ids` (each in [0, size())).
  std::string decode(const std::vector<int64_t> &ids) const;
  /// The id of `character` (UTF-8), or -1.
  int64_t find(const std::string &character) const;

private:
  std::vector<std::string> characters; ///< UTF-8, one code point each
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_VOCABULARY_H
