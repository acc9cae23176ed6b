//===- ObjectCache.h - Objects every trainer of one toolchain shares -*- C++ -*-===//
//
// A trainer's model-independent sources (TrainerBuild::sharedSources: the
// cpu kernels every step calls, the batch gathers) are compiled once with
// the trainer's compiler and flags and kept, so that each `tcc compile`
// compiles only its own step. An object is found by a hash of all that
// decides its bits: the compiler driver's plan for the flags (`-###`:
// -march=native resolved to this machine's CPU, the compiler's version),
// the flags, and the preprocessed source (every header it includes, tcc's
// runtime and the system's). Entries are written through a temporary and
// renamed: concurrent builds and a killed tcc never leave a partial object
// (docs/training.md, "The object cache").
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TOOLS_TCC_OBJECTCACHE_H
#define TCC_TOOLS_TCC_OBJECTCACHE_H

#include "target/TargetBackend.h"

#include <string>

namespace tcc {

/// The cache's folder: $TCC_CACHE_DIR (set but empty: no cache), else
/// $XDG_CACHE_HOME/tcc, else $HOME/.cache/tcc; "" when there is none.
std::string objectCacheFolder();

/// Where a shared object came from.
enum class CacheUse {
  Hit,    ///< taken from the cache
  Stored, ///< compiled into the cache
  Off,    ///< compiled for this build only
};

/// As the report spells it: "hit", "stored", "off".
const char *cacheUseName(CacheUse use);

/// What became of one shared source in a trainer's build (the report's
/// `trainer_build`).
struct SharedObject {
  std::string source; ///< as TrainerBuild::sharedSources names it
  std::string object; ///< the object linked
  CacheUse cache = CacheUse::Off;
  std::string why; ///< for Off: why the cache was not used
};

/// The object of `source` compiled by `build.compiler` with `build.flags`,
/// from the cache or compiled now: into the cache, or into `folder` (a
/// build's temporary folder, for the compiler's temporaries too) when the
/// cache cannot be used. When the compiler fails, returns false with its
/// exit status or `error` and its output in `log`.
bool sharedObject(const mlir::tcc::TrainerBuild &build, const std::string &source,
                  const std::string &folder, const std::string &log, SharedObject &result,
                  int &status, std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_OBJECTCACHE_H
