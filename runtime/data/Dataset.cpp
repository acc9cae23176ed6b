//===- Dataset.cpp - loadDataset: dispatch on the format
//-------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/data/Readers.h"

#include <new>

namespace tcc::rt {

bool loadDataset(const std::string &format, const std::string &path,
                 DataSplit &out, std::string &error) {
  error.clear();
  bool ok = false;
  try {
    if (format == "idx")
      ok = data::loadIdx(path, out, error);
    else if (format == "cifar10")
      ok = data::loadCifar10(path, out, error);
    else if (format == "npy")
      ok = data::loadNpy(path, out, error);
    else
      error = path + ": unknown dataset format '" + format +
              "' (expected idx, cifar10 or npy)";
  } catch (const std::bad_alloc &) {
    error = path + ": out of memory while loading the dataset";
    ok = false;
  } catch (const std::exception &e) {
    error = path + ": cannot load the dataset: " + e.what();
    ok = false;
  }
  if (!ok) {
    if (error.empty())
      error = path + ": cannot load the dataset";
    // One line, whatever the file names hold.
    for (char &c : error)
      if (c == '\n' || c == '\r')
        c = ' ';
  }
  return ok;
}

} // namespace tcc::rt
