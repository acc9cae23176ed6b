//===- SourceTree.cpp - A trainer's sources that build without tcc --------===//

#include "tools/tcc/SourceTree.h"

#include "runtime/AtomicFile.h"
#include "runtime/InputFile.h"
#include "tools/tcc/Temporaries.h"
#include "tools/tcc/RuntimePaths.h"

#include <nlohmann/json.hpp>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/xxhash.h"

#include <map>

using namespace llvm;
using namespace tcc;

namespace {

/// The manifest: the files tcc wrote into the tree, each with a hash of
/// what it wrote. A later -o replaces those and nothing else.
constexpr const char *kManifest = ".tcc-source-tree";
constexpr uint64_t kMaxManifestBytes = 64 << 20; // it lists a few hundred files
constexpr const char *kManifestHeader =
    "# tcc source tree: the files tcc wrote here (hash path); a later "
    "--emit=source-tree -o over this folder replaces these and nothing else\n";

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

/// A manifest entry's hash of the file at `path`, or "" if unreadable.
std::string hashOf(const std::string &path) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return buffer ? utohexstr(xxh3_64bits((*buffer)->getBuffer()), /*LowerCase=*/true) : "";
}

/// Relative path -> hash of every file under `dir` (a freshly built tree).
bool listFiles(const std::string &dir, std::map<std::string, std::string> &files,
               std::string &error) {
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (it->type() == sys::fs::file_type::regular_file)
      files[it->path().substr(dir.size() + 1)] = hashOf(it->path());
  if (ec)
    return fail(error, "cannot read " + dir + ": " + ec.message());
  return true;
}

std::string manifestText(const std::map<std::string, std::string> &files) {
  std::string text = kManifestHeader;
  for (const auto &[path, hash] : files)
    text += (hash.empty() ? "*" : hash) + " " + path + "\n";
  return text;
}

/// The manifest of the tree at `dir`; empty for an older tcc's marker,
/// which listed nothing.
bool readManifest(const std::string &dir, std::map<std::string, std::string> &files,
                  std::string &error) {
  std::string text;
  if (!tcc::readInputFile(dir + "/" + kManifest, "source-tree manifest", kMaxManifestBytes, text,
                           error))
    return false;
  for (StringRef line : llvm::split(StringRef(text), '\n')) {
    if (line.empty() || line.starts_with("#"))
      continue;
    auto [hash, path] = line.split(' ');
    // Only plain relative paths inside the tree: a damaged manifest must not
    // name a file elsewhere.
    if (path.empty() || path.starts_with("/") || path.contains("..") || path == kManifest)
      return fail(error, "-o " + dir + ": its " + kManifest + " is damaged (line '" +
                             line.take_front(80).str() + "'); move the folder away or give "
                             "another -o");
    files[path.str()] = hash.str();
  }
  return true;
}

/// Why writing the new tree over `dir` would lose something that is not
/// tcc's, or "": a file at a new file's path that the manifest does not
/// list, or a listed file changed since tcc wrote it.
std::string conflict(const std::string &dir, const std::map<std::string, std::string> &old,
                     const std::map<std::string, std::string> &fresh) {
  for (const auto &[path, hash] : fresh) {
    std::string at = dir + "/" + path;
    if (!old.count(path) && sys::fs::exists(at))
      return at + " exists and tcc did not write it (it is not in " + kManifest + ")";
  }
  for (const auto &[path, hash] : old) {
    std::string at = dir + "/" + path;
    if (hash != "*" && sys::fs::exists(at) && hashOf(at) != hash)
      return at + " was changed since tcc wrote it";
  }
  return "";
}

/// Moves the built tree `building` into the earlier tree `dir`, file by
/// file: the new files replace tcc's old ones, old ones the new tree lacks
/// go, everything else stays. The manifest lists the union (unchecked)
/// while files move, so an interrupted update is still tcc's to redo.
bool update(const std::string &building, const std::string &dir,
            const std::map<std::string, std::string> &old,
            const std::map<std::string, std::string> &fresh, std::string &error) {
  std::map<std::string, std::string> both;
  for (const auto *files : {&old, &fresh})
    for (const auto &entry : *files)
      both[entry.first] = "*";
  if (!writeFile(dir, kManifest, manifestText(both), error))
    return false;
  for (const auto &entry : fresh) {
    std::string to = dir + "/" + entry.first;
    if (std::error_code ec = sys::fs::create_directories(sys::path::parent_path(to)))
      return fail(error, "cannot create " + sys::path::parent_path(to).str() + ": " +
                             ec.message());
    if (std::error_code ec = sys::fs::rename(building + "/" + entry.first, to))
      return fail(error, "cannot write " + to + ": " + ec.message());
  }
  for (const auto &entry : old) {
    if (fresh.count(entry.first))
      continue;
    SmallString<256> path(dir + "/" + entry.first);
    sys::fs::remove(path);
    // Folders it leaves empty go too (remove() keeps a folder with files).
    for (sys::path::remove_filename(path); path.size() > dir.size();
         sys::path::remove_filename(path))
      if (sys::fs::remove(path))
        break;
  }
  return writeFile(dir, kManifest, manifestText(fresh), error);
}

} // namespace

bool tcc::writeSourceTree(const SourceTreeSpec &spec, const std::string &source,
                          const nlohmann::json &convPlans, const std::string &requested,
                          std::string &error) {
  std::string dir = requested;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  removeStaleBuildTemporaries(dir);
  StringRef parent = sys::path::parent_path(dir);
  if (!parent.empty() && !sys::fs::is_directory(parent))
    return fail(error, "-o " + dir + ": the folder " + parent.str() + " does not exist");
  std::map<std::string, std::string> old;
  const bool earlier = sys::fs::exists(dir);
  if (earlier) {
    std::error_code ec;
    bool empty = sys::fs::is_directory(dir) &&
                 sys::fs::directory_iterator(dir, ec) == sys::fs::directory_iterator();
    if (!sys::fs::exists(dir + "/" + kManifest) && !empty)
      return fail(error, "-o " + dir + " exists and is not a source tree tcc wrote; "
                         "remove it or give another directory");
    if (!empty && !readManifest(dir, old, error))
      return false;
  }
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
  removeOnSignal(building);
  struct Cleanup {
    const std::string &path;
    ~Cleanup() {
      sys::fs::remove_directories(path);
      dontRemoveOnSignal(path);
    }
  } cleanup{building};
  if (std::error_code ec = sys::fs::create_directory(building))
    return fail(error, "cannot create " + building + ": " + ec.message());
  std::string runtime = std::string(TCC_RUNTIME_INCLUDE_DIR) + "/runtime";
  if (!writeFile(building, stepFile, source, error) ||
      !writeFile(building, "CMakeLists.txt", cmake, error) ||
      !writeFile(building, "README.md", readme, error) ||
      (!convPlans.is_null() &&
       !writeFile(building, "conv-plans.json", convPlans.dump(2) + "\n", error)) ||
      !copyTree(runtime, building + "/runtime", {".h", ".cuh", ".cpp", ".md"}, error) ||
      !copyTree(TCC_NLOHMANN_INCLUDE_DIR "/nlohmann", building + "/third_party/include/nlohmann",
                {".hpp"}, error))
    return false;
  for (const std::string &headers : spec.parts.headerTrees)
    if (!copyTree(headers, building + "/third_party/include", {".h", ".hpp"}, error))
      return false;
  std::map<std::string, std::string> fresh;
  if (!listFiles(building, fresh, error))
    return false;
  // An older tcc's tree lists nothing: its files at the new tree's paths
  // are tcc's to replace, and nothing else is known to be tcc's to delete.
  if (earlier && old.empty())
    for (const auto &entry : fresh)
      old[entry.first] = "*";

  if (!earlier) {
    // A new tree appears whole, by one rename.
    if (!writeFile(building, kManifest, manifestText(fresh), error))
      return false;
    if (std::error_code ec = sys::fs::rename(building, dir))
      return fail(error, "cannot write " + dir + ": " + ec.message());
    return true;
  }
  if (std::string why = conflict(dir, old, fresh); !why.empty())
    return fail(error, "-o " + dir + ": " + why + "; tcc replaces only the files it wrote: "
                       "move that file away, then compile again");
  return update(building, dir, old, fresh, error);
}
