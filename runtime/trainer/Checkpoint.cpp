//===- Checkpoint.cpp - Save and load the state arena ----------------------===//

#include "runtime/trainer/Checkpoint.h"

#include "runtime/trainer/Init.h"
#include "runtime/trainer/Safetensors.h"
#include "runtime/trainer/Text.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

namespace tcc::rt {

namespace {

const std::string kTracked = ".num_batches_tracked";
const std::string kRunningMean = ".running_mean";

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isStateDictRole(StateRole role) {
  return role == StateRole::Parameter || role == StateRole::Buffer;
}

bool parseInt(const std::string &text, int64_t &out) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = v;
  return true;
}

bool parseDouble(const std::string &text, double &out) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno || *end)
    return false;
  out = v;
  return true;
}

std::string numberText(double v) { return nlohmann::json(v).dump(); }

/// A checkpoint of this model holds its state at most four times as wide
/// (f64 weights for a 16-bit model) plus the header: a larger file is not
/// one, and is refused before it is read (docs/reliability.md).
uint64_t checkpointLimit(const ModelInfo &info) {
  return kMaxSafetensorsHeader + 8 + 4 * static_cast<uint64_t>(info.stateBytes);
}

std::string roleWord(StateRole role) {
  return role == StateRole::Buffer ? "buffer" : "parameter";
}

/// "nan", "inf" or "-inf".
std::string nonFiniteText(DType dtype, const void *element) {
  double v = loadValue(dtype, element);
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

/// "<name> holds nan (element 3)" when tensor data is not finite, else "".
std::string nonFiniteTensor(const std::string &name, DType dtype,
                            const void *data, int64_t count) {
  int64_t i = firstNonFinite(dtype, data, count);
  if (i < 0)
    return "";
  return name + " holds " +
         nonFiniteText(dtype, static_cast<const uint8_t *>(data) +
                                  i * dtypeSize(dtype)) +
         " (element " + std::to_string(i) + ")";
}

} // namespace

int64_t firstNonFinite(DType dtype, const void *data, int64_t count) {
  // An all-ones exponent is infinity or NaN in each format.
  const auto *bytes = static_cast<const uint8_t *>(data);
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == DType::F32) {
      uint32_t bits;
      std::memcpy(&bits, bytes + 4 * i, 4);
      if ((bits & 0x7f800000u) == 0x7f800000u)
        return i;
    } else if (dtype == DType::F16 || dtype == DType::BF16) {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * i, 2);
      uint16_t exponent = dtype == DType::F16 ? 0x7c00 : 0x7f80;
      if ((bits & exponent) == exponent)
        return i;
    } else {
      return -1;
    }
  }
  return -1;
}

std::string nonFiniteStateTensor(const ModelInfo &info, const void *state) {
  const auto *base = static_cast<const uint8_t *>(state);
  for (const StateTensor &t : info.state)
    if (std::string found = nonFiniteTensor(t.name, t.dtype, base + t.offset,
                                            t.numElements());
        !found.empty())
      return found;
  return "";
}

bool saveCheckpoint(const std::string &path, const ModelInfo &info,
                    const void *state, const CheckpointMeta &meta,
                    std::string &error) {
  const auto *base = static_cast<const uint8_t *>(state);
  if (std::string bad = nonFiniteStateTensor(info, state); !bad.empty()) {
    error = "not writing '" + oneLine(path) + "': state tensor " + bad +
            "; a checkpoint never holds NaN or infinity (the file keeps its "
            "previous contents)";
    return false;
  }
  std::vector<TensorRef> tensors;
  std::set<std::string> names;
  for (const StateTensor &t : info.state) {
    if (t.offset + t.numBytes() > info.stateBytes) {
      error = "cannot write '" + oneLine(path) + "': internal error: state "
              "tensor '" + t.name + "' lies outside the state arena";
      return false;
    }
    tensors.push_back({t.name, t.dtype, t.shape, base + t.offset,
                       t.numBytes()});
    names.insert(t.name);
  }
  // PyTorch's BatchNorm has num_batches_tracked; a strict load_state_dict
  // wants it. One scalar per batch norm (identified by its running_mean).
  std::vector<int64_t> tracked;
  std::vector<std::string> trackedNames;
  for (const StateTensor &t : info.state)
    if (t.role == StateRole::Buffer && endsWith(t.name, kRunningMean)) {
      std::string name =
          t.name.substr(0, t.name.size() - kRunningMean.size()) + kTracked;
      if (!names.count(name))
        trackedNames.push_back(name);
    }
  tracked.assign(trackedNames.size(), meta.step);
  for (size_t i = 0; i < trackedNames.size(); ++i)
    tensors.push_back({trackedNames[i], DType::I64, {}, &tracked[i],
                       sizeof(int64_t)});

  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"producer", "tcc"},
      {"model", info.name},
      {"fingerprint", hex64(info.fingerprint)},
      {"epoch", std::to_string(meta.epoch)},
      {"step", std::to_string(meta.step)},
      {"seed", std::to_string(meta.seed)},
      {"epochs", numberText(meta.epochs)},
      {"total_steps", std::to_string(meta.totalSteps)},
      {"precision", meta.precision},
      {"shuffle", meta.shuffle ? "true" : "false"},
  };
  return writeSafetensors(path, tensors, metadata, error);
}

bool loadCheckpoint(const std::string &path, const ModelInfo &info,
                    void *state, CheckpointMeta &meta, std::string &error) {
  SafetensorsFile file;
  if (!readSafetensors(path, file, error, checkpointLimit(info)))
    return false;
  const std::string where = oneLine(path) + ": ";
  auto get = [&](const char *key) -> const std::string * {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? nullptr : &it->second;
  };
  const std::string *fingerprintText = get("fingerprint");
  uint64_t fingerprint = 0;
  if (!fingerprintText) {
    error = where + "not a tcc checkpoint (its metadata has no "
                    "'fingerprint'); to start from PyTorch weights use --init";
    return false;
  }
  if (!parseHex64(*fingerprintText, fingerprint)) {
    error = where + "invalid fingerprint '" + oneLine(*fingerprintText) +
            "' in the metadata";
    return false;
  }
  CheckpointMeta m;
  m.fingerprint = fingerprint;
  if (const std::string *v = get("model"))
    m.model = *v;
  struct IntField {
    const char *key;
    int64_t *value;
  } ints[] = {{"epoch", &m.epoch}, {"step", &m.step},
              {"total_steps", &m.totalSteps}};
  for (const IntField &f : ints)
    if (const std::string *v = get(f.key); v && !parseInt(*v, *f.value)) {
      error = where + "invalid '" + f.key + "' '" + oneLine(*v) +
              "' in the metadata";
      return false;
    }
  if (const std::string *v = get("seed"); v && !parseUnsigned(*v, m.seed)) {
    error = where + "invalid 'seed' '" + oneLine(*v) + "' in the metadata";
    return false;
  }
  if (const std::string *v = get("epochs"); v && !parseDouble(*v, m.epochs)) {
    error = where + "invalid 'epochs' '" + oneLine(*v) + "' in the metadata";
    return false;
  }
  if (const std::string *v = get("precision"))
    m.precision = oneLine(*v);
  if (const std::string *v = get("shuffle"))
    m.shuffle = *v != "false";

  // Same name, another precision (a recompile with --precision): say so, or
  // the message names one model twice.
  const std::string precision = info.recipe.train.precision.name();
  const bool otherPrecision = !m.precision.empty() && !precision.empty() && m.precision != precision;

  auto mismatch = [&](const std::string &detail) {
    error = where + "checkpoint of model '" +
            oneLine(m.model.empty() ? std::string("?") : m.model) + "'" +
            (otherPrecision ? " in " + m.precision : "") +
            " does not match this trainer's model '" + info.name + "'" +
            (otherPrecision ? " in " + precision : "") + " (" + detail + ")";
    return false;
  };
  std::set<std::string> known;
  for (const StateTensor &t : info.state) {
    known.insert(t.name);
    const Tensor *f = file.find(t.name);
    if (!f)
      return mismatch("tensor " + t.name + " is missing from the file");
    if (f->shape != t.shape)
      return mismatch("tensor " + t.name + " has shape " + shapeText(t.shape) +
                      " here, " + shapeText(f->shape) + " in the file");
    if (f->dtype != t.dtype)
      return mismatch("tensor " + t.name + " is " + dtypeName(t.dtype) +
                      " here, " + dtypeName(f->dtype) + " in the file");
  }
  for (const Tensor &f : file.tensors)
    if (!known.count(f.name) && !endsWith(f.name, kTracked))
      return mismatch("the file has tensor " + oneLine(f.name) +
                      ", which this model does not");
  if (fingerprint != info.fingerprint)
    return mismatch("fingerprint " + hex64(info.fingerprint) + " here, " +
                    hex64(fingerprint) + " in the file");
  // Same architecture, another model: resuming would mix two runs. --init
  // takes the weights alone.
  if (!m.model.empty() && m.model != info.name)
    return mismatch("the same tensors, but its metadata names another "
                    "model; to start from its weights use --init");
  for (const StateTensor &t : info.state) {
    const Tensor *f = file.find(t.name);
    if (std::string bad = nonFiniteTensor(t.name, t.dtype, f->data.data(),
                                          t.numElements());
        !bad.empty()) {
      error = where + "tensor " + bad +
              ": the checkpoint comes from a diverged run; resume from an "
              "earlier checkpoint";
      return false;
    }
    if (t.role == StateRole::Counter && get("step")) {
      double counter = loadValue(t.dtype, f->data.data());
      if (counter != static_cast<double>(m.step)) {
        error = where + "its metadata says step " + std::to_string(m.step) +
                " but tensor '" + t.name + "' holds " +
                std::to_string(static_cast<long long>(counter)) +
                " (an edited or corrupt checkpoint)";
        return false;
      }
    }
  }

  auto *base = static_cast<uint8_t *>(state);
  for (const StateTensor &t : info.state) {
    const Tensor *f = file.find(t.name);
    if (t.numBytes())
      std::memcpy(base + t.offset, f->data.data(), t.numBytes());
  }
  meta = m;
  return true;
}

namespace {

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

/// `f`'s elements as `t` stores them, rounded to nearest.
std::vector<uint8_t> roundedTo(const StateTensor &t, const Tensor &f) {
  std::vector<uint8_t> out(t.numBytes());
  convertValues(t.dtype, out.data(), f.dtype, f.data.data(), t.numElements());
  return out;
}

} // namespace

bool loadStateDict(const std::string &path, const ModelInfo &info,
                   void *state, std::vector<std::string> *loaded,
                   std::string &error, std::vector<std::string> *converted) {
  SafetensorsFile file;
  if (!readSafetensors(path, file, error, checkpointLimit(info)))
    return false;
  // A checkpoint of another tcc model fails on some tensor; its metadata
  // says which model it is, which is the useful part of the error.
  auto model = file.metadata.find("model");
  const std::string where =
      oneLine(path) + ": " +
      (model != file.metadata.end() && model->second != info.name
           ? "this checkpoint is of model '" + oneLine(model->second) + "', not '" +
                 info.name + "': "
           : "");
  std::map<std::string, const StateTensor *> byName;
  std::vector<std::string> valid;
  for (const StateTensor &t : info.state) {
    byName[t.name] = &t;
    if (isStateDictRole(t.role))
      valid.push_back(t.name);
  }

  // Names the model does not know, in file order.
  size_t found = 0;
  for (const Tensor &f : file.tensors) {
    auto it = byName.find(f.name);
    if (it == byName.end()) {
      if (endsWith(f.name, kTracked))
        continue; // PyTorch's batch-norm counter: tcc has its own "step".
      std::string closest = closestMatch(f.name, valid);
      error = where + "tensor '" + oneLine(f.name) +
              "' is not a parameter or buffer of model '" + info.name + "'" +
              (closest.empty() ? std::string()
                               : "; the closest is '" + closest + "'");
      return false;
    }
    found += isStateDictRole(it->second->role);
  }
  // Then every parameter and buffer, in the model's order: present, same
  // shape, same dtype (or a float type, rounded). Optimizer state, EMA and
  // the counter of a tcc checkpoint are skipped (they keep their
  // initialisation).
  std::vector<std::pair<const StateTensor *, const uint8_t *>> copies;
  std::vector<std::vector<uint8_t>> conversions; // the bytes copies point into
  conversions.reserve(info.state.size());
  for (const StateTensor &t : info.state) {
    if (!isStateDictRole(t.role))
      continue;
    const Tensor *f = file.find(t.name);
    if (!f) {
      error = where + roleWord(t.role) + " '" + t.name + "' of model '" +
              info.name + "' is missing from the file (" +
              std::to_string(found) + " of " + std::to_string(valid.size()) +
              " parameters and buffers found)";
      return false;
    }
    if (f->shape != t.shape) {
      error = where + "tensor '" + t.name + "' has shape " +
              shapeText(f->shape) + " in the file, but model '" + info.name +
              "' needs " + shapeText(t.shape);
      return false;
    }
    if (f->dtype != t.dtype && !(isFloat(f->dtype) && isFloat(t.dtype))) {
      error = where + "tensor '" + t.name + "' is " + dtypeName(f->dtype) +
              " in the file, but model '" + info.name + "' stores it as " +
              dtypeName(t.dtype) + " (convert it before saving)";
      return false;
    }
    if (std::string bad = nonFiniteTensor(t.name, f->dtype, f->data.data(),
                                          t.numElements());
        !bad.empty()) {
      error = where + "tensor " + bad +
              ": these weights come from a diverged run; start from other "
              "weights";
      return false;
    }
    const uint8_t *bytes = f->data.data();
    if (f->dtype != t.dtype) {
      // A float tensor of another width (a pure-16-bit model started from
      // f32 weights, or the reverse) is rounded to the model's type.
      bytes = conversions.emplace_back(roundedTo(t, *f)).data();
      if (std::string bad = nonFiniteTensor(t.name, t.dtype, bytes, t.numElements());
          !bad.empty()) {
        error = where + "tensor " + bad + " once rounded to " + dtypeName(t.dtype) +
                ", the type model '" + info.name + "' stores it in: its " +
                dtypeName(f->dtype) + " value is out of that range; scale the weights down "
                "or compile the model with another train.precision";
        return false;
      }
      if (converted)
        converted->push_back(t.name + " (" + dtypeName(f->dtype) + " to " +
                             dtypeName(t.dtype) + ")");
    }
    copies.push_back({&t, bytes});
  }

  auto *base = static_cast<uint8_t *>(state);
  for (auto [t, bytes] : copies) {
    if (t->numBytes())
      std::memcpy(base + t->offset, bytes, t->numBytes());
    if (loaded)
      loaded->push_back(t->name);
  }
  return true;
}

} // namespace tcc::rt
