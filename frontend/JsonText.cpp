//===- JsonText.cpp - Strict JSON parsing with line:column errors ---------===//
//
// nlohmann's SAX interface does the lexing; this file builds the DOM itself
// so that it can reject duplicate keys where they occur, and rewords
// nlohmann's syntax errors into messages that say what was expected.
//
//===----------------------------------------------------------------------===//

#include "frontend/JsonReader.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace tcc::frontend::detail {
namespace {

constexpr size_t kMaxDepth = 64;

/// A char iterator that publishes how far the lexer has read, so that SAX
/// callbacks (which get no position) can locate keys in the text.
struct TrackingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  const char *p;
  const char **cursor;

  reference operator*() const { return *p; }
  TrackingIterator &operator++() {
    *cursor = ++p;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIterator &o) const { return p == o.p; }
  bool operator!=(const TrackingIterator &o) const { return p != o.p; }
};

/// "LINE:COL" (1-based; columns count characters, not UTF-8 bytes).
std::string lineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

bool isNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
         c == '+' || c == '-';
}
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// Offset of the opening quote of the string whose closing quote is at `end`.
size_t stringStart(std::string_view text, size_t end) {
  for (size_t i = end; i-- > 0;) {
    if (text[i] != '"')
      continue;
    size_t slashes = 0;
    while (slashes < i && text[i - 1 - slashes] == '\\')
      ++slashes;
    if (slashes % 2 == 0)
      return i;
  }
  return end;
}

/// Turns "unexpected string literal" into "a string" and so on.
std::string tokenPhrase(std::string_view token) {
  if (token == "string literal")
    return "a string";
  if (token == "number literal")
    return "a number";
  if (token == "end of input")
    return "the end of the file";
  if (token.size() > 8 && token.substr(token.size() - 8) == " literal")
    return std::string(token.substr(0, token.size() - 8));
  return std::string(token);
}

/// nlohmann's message after "parse error at line L, column C: ", reworded.
std::string rewordSyntaxError(std::string msg) {
  static constexpr std::string_view kWhile = "syntax error while parsing ";
  // "; last read: '...'" repeats the text and may hold odd bytes.
  size_t lastRead = msg.find("; last read: '");
  if (lastRead != std::string::npos) {
    size_t expected = msg.rfind("; expected ");
    msg = msg.substr(0, lastRead) +
          (expected != std::string::npos && expected > lastRead
               ? msg.substr(expected)
               : "");
  }
  if (msg.compare(0, kWhile.size(), kWhile) != 0)
    return msg;
  size_t dash = msg.find(" - ");
  if (dash == std::string::npos)
    return msg;
  std::string context = msg.substr(kWhile.size(), dash - kWhile.size());
  std::string detail = msg.substr(dash + 3);
  std::string unexpected, expected;
  if (detail.compare(0, 11, "unexpected ") == 0) {
    size_t semi = detail.find("; expected ");
    unexpected = tokenPhrase(detail.substr(11, semi - 11));
    if (semi != std::string::npos)
      expected = detail.substr(semi + 11);
  } else {
    size_t semi = detail.find("; expected ");
    if (semi != std::string::npos)
      expected = detail.substr(semi + 11);
    detail = detail.substr(0, semi);
  }
  // Lexer errors say more than the parser's context does.
  if (detail.compare(0, 14, "invalid string") == 0 ||
      detail.compare(0, 14, "invalid number") == 0)
    return detail + (expected.empty() ? "" : "; expected " + expected);
  bool invalid = detail.compare(0, 15, "invalid literal") == 0;
  std::string got = !unexpected.empty() ? ", got " + unexpected
                    : invalid           ? ", got an invalid value"
                                        : "";
  if (expected == "end of input")
    return "unexpected text after the end of the top-level value";
  if (unexpected == "the end of the file")
    return "unexpected end of the file; a closing '}' or ']' or a value is "
           "missing";
  if (context == "object")
    return "expected ',' or '}' after object member" + got;
  if (context == "array")
    return "expected ',' or ']' after array element" + got;
  if (context == "object separator")
    return "expected ':' after object key" + got;
  if (context == "object key")
    return "expected a key in double quotes" + got +
           (unexpected == "'}'" ? " (trailing comma?)" : "");
  if (invalid)
    return "invalid value; expected a number, a \"string\", true, false, "
           "null, an object or an array (JSON has no comments, single "
           "quotes or NaN)";
  if (!unexpected.empty())
    return "expected a value" + got +
           (unexpected == "']'" || unexpected == "'}'" ? " (trailing comma?)"
                                                       : "");
  return detail + (expected.empty() ? "" : "; expected " + expected);
}

/// Builds the DOM from SAX events and records the first error.
class DomBuilder final : public nlohmann::json_sax<Json> {
public:
  DomBuilder(std::string_view text, const char *const *cursor)
      : text(text), cursor(cursor) {}

  Json root;
  std::string error, errorLocation;

  bool null() override { return add(Json(nullptr)); }
  bool boolean(bool v) override { return add(Json(v)); }
  bool number_integer(number_integer_t v) override { return add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(Json(v)); }
  bool number_float(number_float_t v, const string_t &) override {
    return add(Json(v));
  }
  bool string(string_t &v) override { return add(Json(std::move(v))); }
  bool binary(binary_t &) override { return add(Json(nullptr)); }

  bool start_object(std::size_t) override {
    return open(Json::object());
  }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t &k) override {
    Json &object = *stack.back();
    if (object.contains(k)) {
      // The lexer has just read the key's closing quote.
      size_t end = static_cast<size_t>(*cursor - text.data()) - 1;
      return setError(stringStart(text, end),
                      "duplicate key " + quote(k) +
                          "; a key may appear only once in an object");
    }
    slot = &object[k];
    return true;
  }

  bool parse_error(std::size_t position, const std::string &lastToken,
                   const nlohmann::detail::exception &ex) override {
    std::string what = ex.what();
    if (ex.id == 406) // number overflow
      return setError(tokenStart(position, "number literal"),
                      "malformed JSON: number " + quote(lastToken) +
                          " is out of range");
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
      return setError(0, "malformed JSON: the file is empty; a model is an "
                         "object {\"format\": \"tcc-model/1\", ...}");
    size_t colon = what.find(": ");
    std::string msg = colon == std::string::npos ? what : what.substr(colon + 2);
    return setError(tokenStart(position, msg),
                    "malformed JSON: " + rewordSyntaxError(msg));
  }

private:
  std::string_view text;
  const char *const *cursor;
  std::vector<Json *> stack;
  Json *slot = nullptr; ///< where the next object member goes

  Json *place(Json v) {
    if (stack.empty()) {
      root = std::move(v);
      return &root;
    }
    Json &parent = *stack.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot = std::move(v);
    return slot;
  }
  bool add(Json v) {
    place(std::move(v));
    return true;
  }
  bool open(Json container) {
    if (stack.size() >= kMaxDepth)
      return setError(static_cast<size_t>(*cursor - text.data()) - 1,
                      "malformed JSON: nested deeper than " +
                          std::to_string(kMaxDepth) + " levels");
    stack.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }
  bool setError(size_t offset, std::string msg) {
    error = std::move(msg);
    errorLocation = lineColumn(text, offset);
    return false;
  }

  /// Where the token that nlohmann complains about starts. `position` counts
  /// the characters read, the offending one included.
  size_t tokenStart(size_t position, const std::string &msg) const {
    if (position == 0)
      return 0;
    if (position > text.size()) {
      // End of input: point just after the last non-blank character.
      size_t end = text.size();
      while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1])))
        --end;
      return end;
    }
    size_t last = position - 1;
    if (msg.find("unexpected string literal") != std::string::npos)
      return stringStart(text, last);
    if (msg.find("number literal") != std::string::npos) {
      while (last > 0 && isNumberChar(text[last - 1]))
        --last;
      return last;
    }
    if (msg.find("invalid literal") != std::string::npos) {
      while (last > 0 && isAlpha(text[last - 1]))
        --last;
      return last;
    }
    return last;
  }
};

} // namespace

Json parseJsonText(std::string_view text) {
  const char *cursor = text.data();
  TrackingIterator first{text.data(), &cursor};
  TrackingIterator last{text.data() + text.size(), &cursor};
  DomBuilder builder(text, &cursor);
  if (!Json::sax_parse(first, last, &builder))
    throw SpecError(builder.error.empty() ? "malformed JSON" : builder.error,
                    builder.errorLocation.empty() ? "1:1"
                                                  : builder.errorLocation);
  return std::move(builder.root);
}

} // namespace tcc::frontend::detail
