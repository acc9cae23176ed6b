//===- SourceTree.cpp - A trainer's sources that build without tcc --------===//

#include "tools/tcc/SourceTree.h"

#include "runtime/AtomicFile.h"
#include "tools/tcc/RuntimePaths.h"

#include <nlohmann/json.hpp>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Signals.h"

using namespace llvm;

namespace {

/// Marks a directory as a tree tcc wrote, so that a later -o may replace it.
constexpr const char *kMarker = ".tcc-source-tree";

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

/// Copies the files under `from` whose names end in one of `suffixes` to
/// the same relative paths under `to`.
bool copyTree(StringRef from, StringRef to, ArrayRef<StringRef> suffixes, std::string &error) {
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(from, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef path = it->path();
    if (it->type() != sys::fs::file_type::regular_file ||
        llvm::none_of(suffixes, [&](StringRef s) { return path.ends_with(s); }))
      continue;
    SmallString<256> target(to);
    sys::path::append(target, path.drop_front(from.size()));
    if (std::error_code made = sys::fs::create_directories(sys::path::parent_path(target)))
      return fail(error, "cannot create " + sys::path::parent_path(target).str() + ": " +
                             made.message());
    if (std::error_code copied = sys::fs::copy_file(path, target))
      return fail(error, "cannot copy " + path.str() + ": " + copied.message());
  }
  if (ec)
    return fail(error, "cannot read " + from.str() + ": " + ec.message());
  return true;
}

/// A template of tools/tcc/source-tree with @NAME@ replaced; a name the
/// target gives no value (@MARCH@ in a cuda tree's cpu branch) is left
/// empty.
bool instantiate(StringRef name, ArrayRef<std::pair<StringRef, std::string>> values,
                 std::string &text, std::string &error) {
  std::string path = std::string(TCC_SOURCE_TREE_TEMPLATES) + "/" + name.str();
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return fail(error, "cannot read " + path + ": " + buffer.getError().message());
  text = (*buffer)->getBuffer().str();
  for (const auto &[key, value] : values) {
    std::string pattern = "@" + key.str() + "@";
    for (size_t at = text.find(pattern); at != std::string::npos;
         at = text.find(pattern, at + value.size()))
      text.replace(at, pattern.size(), value);
  }
  static const llvm::Regex unset("@[A-Z_]+@");
  while (unset.match(text)) // at most a few per template
    text = unset.sub("", text);
  return true;
}

bool writeFile(const std::string &dir, StringRef name, const std::string &text,
               std::string &error) {
  return tcc::writeFileAtomically(dir + "/" + name.str(), text, error);
}

} // namespace

bool tcc::writeSourceTree(const SourceTreeSpec &spec, const std::string &source,
                          const nlohmann::json &convPlans, const std::string &dir,
                          std::string &error) {
  StringRef parent = sys::path::parent_path(dir);
  if (!parent.empty() && !sys::fs::is_directory(parent))
    return fail(error, "-o " + dir + ": the folder " + parent.str() + " does not exist");
  if (sys::fs::exists(dir) && !sys::fs::exists(dir + "/" + kMarker))
    return fail(error, "-o " + dir + " exists and is not a source tree tcc wrote; "
                       "remove it or give another directory");
  const std::string stepFile = spec.model + "." + spec.parts.suffix;
  std::vector<std::pair<StringRef, std::string>> values = {
      {"MODEL", spec.model}, {"TARGET", spec.target}, {"SOURCE", stepFile}};
  for (const auto &[key, value] : spec.parts.values)
    values.push_back({key, value});
  std::string cmake, readme, section;
  if (!instantiate("CMakeLists.txt.in", values, cmake, error) ||
      !instantiate("README.md.in", values, readme, error) ||
      (!spec.parts.readmeSection.empty() &&
       !instantiate(spec.parts.readmeSection, values, section, error)))
    return false;
  readme += section;

  // Built beside `dir`, removed on any failure or signal.
  const std::string building = dir + ".tmp." + std::to_string(sys::Process::getProcessId());
  sys::RemoveFileOnSignal(building);
  struct Cleanup {
    const std::string &path;
    ~Cleanup() {
      sys::fs::remove_directories(path);
      sys::DontRemoveFileOnSignal(path);
    }
  } cleanup{building};
  if (std::error_code ec = sys::fs::create_directory(building))
    return fail(error, "cannot create " + building + ": " + ec.message());
  std::string runtime = std::string(TCC_RUNTIME_INCLUDE_DIR) + "/runtime";
  if (!writeFile(building, stepFile, source, error) ||
      !writeFile(building, "CMakeLists.txt", cmake, error) ||
      !writeFile(building, "README.md", readme, error) ||
      !writeFile(building, kMarker, "", error) ||
      (!convPlans.is_null() &&
       !writeFile(building, "conv-plans.json", convPlans.dump(2) + "\n", error)) ||
      !copyTree(runtime, building + "/runtime", {".h", ".cuh", ".cpp", ".md"}, error) ||
      !copyTree(TCC_NLOHMANN_INCLUDE_DIR "/nlohmann", building + "/third_party/include/nlohmann",
                {".hpp"}, error))
    return false;
  for (const std::string &headers : spec.parts.headerTrees)
    if (!copyTree(headers, building + "/third_party/include", {".h", ".hpp"}, error))
      return false;

  // Into place: an earlier tree is moved aside first, then removed.
  std::string old = dir + ".old." + std::to_string(sys::Process::getProcessId());
  bool replacing = sys::fs::exists(dir);
  if (replacing)
    if (std::error_code ec = sys::fs::rename(dir, old))
      return fail(error, "cannot replace " + dir + ": " + ec.message());
  if (std::error_code ec = sys::fs::rename(building, dir)) {
    if (replacing)
      (void)sys::fs::rename(old, dir);
    return fail(error, "cannot write " + dir + ": " + ec.message());
  }
  if (replacing)
    sys::fs::remove_directories(old);
  return true;
}
