//===- Vocabulary.cpp - A character vocabulary for sampling ---------------===//

#include "runtime/trainer/Vocabulary.h"

#include "runtime/trainer/Text.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tcc::rt {

namespace {

/// The length of the UTF-8 sequence at text[i], or 0 if it is not one.
size_t sequenceLength(const std::string &text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2)
      return 0;
  return n;
}

/// A character for a message: printable as itself, else as U+XXXX.
std::string shown(const std::string &character) {
  unsigned char c = static_cast<unsigned char>(character[0]);
  if (character.size() > 1 || (c >= 0x20 && c != 0x7F))
    return "'" + character + "'";
  char code[16];
  std::snprintf(code, sizeof code, "U+%04X", c);
  return code;
}

} // namespace

bool Vocabulary::load(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  const std::string file = "'" + oneLine(path) + "'";
  if (!in) {
    error = "--vocab " + file + ": cannot read it";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_array() || json.empty()) {
    error = "--vocab " + file +
            ": expected a JSON array of the vocabulary's characters (scripts/text_to_npy.py's "
            "vocab.json)";
    return false;
  }
  characters.clear();
  for (size_t i = 0; i < json.size(); ++i) {
    const nlohmann::json &entry = json[i];
    if (!entry.is_string() || entry.get<std::string>().empty() ||
        sequenceLength(entry.get<std::string>(), 0) != entry.get<std::string>().size()) {
      error = "--vocab " + file + ": entry " + std::to_string(i) +
              " is not a string of one character";
      return false;
    }
    std::string character = entry.get<std::string>();
    if (find(character) >= 0) {
      error = "--vocab " + file + ": character " + shown(character) + " is listed twice";
      return false;
    }
    characters.push_back(character);
  }
  return true;
}

int64_t Vocabulary::find(const std::string &character) const {
  for (size_t i = 0; i < characters.size(); ++i)
    if (characters[i] == character)
      return static_cast<int64_t>(i);
  return -1;
}

bool Vocabulary::encode(const std::string &text, std::vector<int64_t> &ids,
                        std::string &error) const {
  ids.clear();
  for (size_t i = 0, position = 1; i < text.size(); ++position) {
    size_t n = sequenceLength(text, i);
    if (n == 0) {
      error = "--prompt: not UTF-8 text at byte " + std::to_string(i + 1);
      return false;
    }
    std::string character = text.substr(i, n);
    int64_t id = find(character);
    if (id < 0) {
      error = "--prompt: character " + std::to_string(position) + ", " + shown(character) +
              ", is not in the vocabulary";
      return false;
    }
    ids.push_back(id);
    i += n;
  }
  return true;
}

std::string Vocabulary::decode(const std::vector<int64_t> &ids) const {
  std::string text;
  for (int64_t id : ids)
    text += characters[static_cast<size_t>(id)];
  return text;
}

} // namespace tcc::rt
