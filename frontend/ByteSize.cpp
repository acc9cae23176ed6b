//===- ByteSize.cpp - "8GiB" -> bytes -------------------------------------===//

#include "frontend/ModelSpec.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

bool tcc::frontend::parseByteSize(std::string_view text, int64_t &bytes) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                             text[i] == '.'))
    ++i;
  std::string number(text.substr(0, i));
  std::string unit(text.substr(i));
  if (number.empty() || number.front() == '.' || number.back() == '.' ||
      number.find('.') != number.rfind('.'))
    return false;
  for (char &c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "KB")
    scale = 1e3;
  else if (unit == "M" || unit == "MB")
    scale = 1e6;
  else if (unit == "G" || unit == "GB")
    scale = 1e9;
  else if (unit == "T" || unit == "TB")
    scale = 1e12;
  else if (unit == "KIB")
    scale = 1024.0;
  else if (unit == "MIB")
    scale = 1024.0 * 1024;
  else if (unit == "GIB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "TIB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return false;
  if (scale == 1 && number.find('.') != std::string::npos)
    return false; // a fraction of a byte
  // strtod, not stod: an absurdly long number is just out of range.
  double value = std::strtod(number.c_str(), nullptr) * scale;
  if (!(value >= 1) || value > 9.0e18)
    return false;
  bytes = static_cast<int64_t>(std::llround(value));
  return true;
}
