//===- FakeModel.cpp - A hand-written CompiledModel for the trainer tests -===//

#include "FakeModel.h"

#include "runtime/cpu/Batch.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tcc::test {

using namespace tcc::rt;

Recipe fakeRecipe(const std::string &dataPath, double epochs, const std::string &precision) {
  Recipe r;
  r.train.batchSize = 8;
  r.train.epochs = epochs;
  r.train.seed = 7;
  r.train.dropLast = true;
  if (!precision.empty())
    r.train.precision = *Precision::parse(precision);
  r.data.format = DataRecipe::Npy;
  r.data.path = dataPath;
  r.data.augment.flip = true;
  r.data.augment.translate = 1;
  r.data.mean = {0.5f};
  r.data.std = {0.25f};
  r.eval.batchSize = 5;
  return r;
}

FakeModel::FakeModel(Recipe recipe, int64_t side, int64_t classes,
                     int64_t batch, int64_t evalBatch)
    : d(side * side), k(classes) {
  mi.name = "fake_linear";
  mi.target = "cpu";
  mi.inputShape = {1, side, side};
  mi.classes = classes;
  mi.batchSize = batch;
  mi.evalBatchSize = evalBatch;
  mi.recipe = std::move(recipe);
  size_t offset = 0;
  auto add = [&](std::string name, std::vector<int64_t> shape, DType dtype,
                 StateRole role, InitDesc init) {
    StateTensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.role = role;
    t.trainable = role == StateRole::Parameter;
    t.init = std::move(init);
    t.offset = offset;
    offset = (offset + t.numBytes() + 63) / 64 * 64;
    mi.state.push_back(t);
  };
  auto constant = [](double a) { return InitDesc{"constant", a, 0, ""}; };
  add("fc.weight", {k, d}, DType::F32, StateRole::Parameter,
      {"uniform", -0.25, 0.25, ""});
  add("fc.bias", {k}, DType::F32, StateRole::Parameter, constant(0));
  add("norm.weight", {d}, DType::F32, StateRole::Parameter, constant(1));
  add("norm.bias", {d}, DType::F32, StateRole::Parameter, constant(0));
  add("norm.running_mean", {d}, DType::F32, StateRole::Buffer, constant(0));
  add("norm.running_var", {d}, DType::F32, StateRole::Buffer, constant(1));
  add("optimizer.fc.weight.momentum_buffer", {k, d}, DType::F32,
      StateRole::OptimizerState, constant(0));
  add("optimizer.fc.bias.momentum_buffer", {k}, DType::F32,
      StateRole::OptimizerState, constant(0));
  add("ema.fc.weight", {k, d}, DType::F32, StateRole::Ema,
      {"copy", 0, 0, "fc.weight"});
  add("step", {}, DType::I64, StateRole::Counter, constant(0));
  mi.stateBytes = offset;
  mi.scratchBytes = static_cast<size_t>(k * (d + 1)) * sizeof(float);
  uint64_t h = 0xcbf29ce484222325ull;
  for (const StateTensor &t : mi.state) {
    std::string key = t.name + dtypeName(t.dtype);
    for (int64_t x : t.shape)
      key += "," + std::to_string(x);
    for (char c : key)
      h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  }
  mi.fingerprint = h;
}

template <typename T> T *FakeModel::at(void *state, const char *name) {
  for (const StateTensor &t : mi.state)
    if (t.name == name)
      return reinterpret_cast<T *>(static_cast<uint8_t *>(state) + t.offset);
  throw std::logic_error(std::string("no state tensor ") + name);
}

namespace {
/// Softmax cross-entropy of one sample; fills p; returns the loss.
double softmaxLoss(const float *w, const float *b, const float *x, int64_t d,
                   int64_t k, int64_t label, std::vector<double> &p,
                   int64_t &argmax) {
  double maxLogit = -1e300;
  argmax = 0;
  for (int64_t c = 0; c < k; ++c) {
    double z = b[c];
    for (int64_t i = 0; i < d; ++i)
      z += static_cast<double>(w[c * d + i]) * x[i];
    p[c] = z;
    if (z > maxLogit) {
      maxLogit = z;
      argmax = c;
    }
  }
  double sum = 0;
  for (int64_t c = 0; c < k; ++c)
    sum += p[c] = std::exp(p[c] - maxLogit);
  for (int64_t c = 0; c < k; ++c)
    p[c] /= sum;
  return -std::log(std::max(p[label], 1e-300));
}
} // namespace

void FakeModel::trainStep() {
  ++trainCalls;
  void *state = buffers().state, *scratch = buffers().scratch;
  const RunConstants &run = buffers().control->run;
  StepTotals &totals = buffers().control->totals;
  images.resize(static_cast<size_t>(mi.batchSize * d));
  labels.resize(static_cast<size_t>(mi.batchSize));
  cpu::gather_train_batch(buffers(), at<int64_t>(state, "step"), mi.batchSize,
                          images.data(), labels.data());
  float *w = at<float>(state, "fc.weight");
  float *b = at<float>(state, "fc.bias");
  float *mw = at<float>(state, "optimizer.fc.weight.momentum_buffer");
  float *mb = at<float>(state, "optimizer.fc.bias.momentum_buffer");
  float *ema = at<float>(state, "ema.fc.weight");
  float *rm = at<float>(state, "norm.running_mean");
  float *rv = at<float>(state, "norm.running_var");
  int64_t *step = at<int64_t>(state, "step");
  // Gradients live in the scratch arena, as generated code would keep them.
  float *grad = static_cast<float *>(scratch);
  std::memset(grad, 0, static_cast<size_t>(k * (d + 1)) * sizeof(float));
  const int64_t batch = mi.batchSize;
  std::vector<double> p(k);
  for (int64_t n = 0; n < batch; ++n) {
    const float *x = images.data() + n * d;
    int64_t argmax;
    totals.lossSum += softmaxLoss(w, b, x, d, k, labels[n], p, argmax);
    totals.correct += argmax == labels[n];
    totals.count += 1;
    for (int64_t c = 0; c < k; ++c) {
      float g = static_cast<float>((p[c] - (c == labels[n])) / batch);
      for (int64_t i = 0; i < d; ++i)
        grad[c * d + i] += g * x[i];
      grad[k * d + c] += g;
    }
  }
  const float lr = static_cast<float>(
      learningRate *
      (1.0 - static_cast<double>(*step) / std::max<int64_t>(run.totalSteps, 1)));
  for (int64_t i = 0; i < k * d; ++i) {
    mw[i] = 0.9f * mw[i] + grad[i];
    w[i] -= lr * mw[i];
    ema[i] = 0.9f * ema[i] + 0.1f * w[i];
  }
  for (int64_t c = 0; c < k; ++c) {
    mb[c] = 0.9f * mb[c] + grad[k * d + c];
    b[c] -= lr * mb[c];
  }
  for (int64_t i = 0; i < d; ++i) {
    double mean = 0, var = 0;
    for (int64_t n = 0; n < batch; ++n)
      mean += images[n * d + i];
    mean /= batch;
    for (int64_t n = 0; n < batch; ++n)
      var += (images[n * d + i] - mean) * (images[n * d + i] - mean);
    var /= batch - 1;
    rm[i] = 0.9f * rm[i] + 0.1f * static_cast<float>(mean);
    rv[i] = 0.9f * rv[i] + 0.1f * static_cast<float>(var);
  }
  *step += 1;
  if (afterStep)
    afterStep(*step);
}

void FakeModel::evalStep() {
  ++evalCalls;
  void *state = buffers().state;
  StepTotals &totals = buffers().control->totals;
  images.resize(static_cast<size_t>(mi.evalBatchSize * d));
  labels.resize(static_cast<size_t>(mi.evalBatchSize));
  cpu::gather_eval_batch(buffers(), mi.evalBatchSize, images.data(),
                         labels.data());
  const int64_t valid = buffers().control->valid;
  // As a compiled model's evaluation: the EMA copy of the weight.
  float *w = at<float>(state, "ema.fc.weight");
  float *b = at<float>(state, "fc.bias");
  std::vector<double> p(k);
  for (int64_t n = 0; n < valid; ++n) {
    int64_t argmax;
    totals.lossSum += softmaxLoss(w, b, images.data() + n * d, d, k,
                                  labels[n], p, argmax);
    totals.correct += argmax == labels[n];
    totals.count += 1;
  }
}

DataSplit makeFakeData(int64_t train, int64_t test, int64_t side,
                       int64_t classes) {
  DataSplit split;
  uint32_t lcg = 12345;
  auto fill = [&](Dataset &ds, int64_t n) {
    ds.n = n;
    ds.c = 1;
    ds.h = side;
    ds.w = side;
    const int64_t plane = side * side;
    ds.u8.resize(static_cast<size_t>(n * plane));
    ds.labels.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t label = i % classes;
      ds.labels[i] = label;
      for (int64_t j = 0; j < plane; ++j) {
        lcg = lcg * 1664525u + 1013904223u;
        // Linearly separable, and robust to flips and 1-pixel shifts: the
        // first class dark, the last bright, the others bright in the top
        // half.
        int noise = static_cast<int>(lcg >> 27); // 0..31
        bool bright = label == classes - 1 || (label > 0 && j / side < side / 2);
        int base = bright ? 200 : 40;
        ds.u8[i * plane + j] = static_cast<uint8_t>(base + noise);
      }
    }
  };
  fill(split.train, train);
  fill(split.test, test);
  return split;
}

namespace {
void writeNpy(const std::string &path, const std::string &descr,
              const std::vector<int64_t> &shape, const void *data,
              size_t bytes) {
  std::string shapeText = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    shapeText += (i ? ", " : "") + std::to_string(shape[i]);
  shapeText += shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shapeText +
                       ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  uint16_t len = static_cast<uint16_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  out += header;
  out.append(static_cast<const char *>(data), bytes);
  writeFile(path, out);
}
} // namespace

void writeNpyDataset(const std::string &dir, const DataSplit &data) {
  auto one = [&](const Dataset &ds, const std::string &prefix) {
    writeNpy(dir + "/" + prefix + "_x.npy", "|u1", {ds.n, ds.c, ds.h, ds.w},
             ds.u8.data(), ds.u8.size());
    writeNpy(dir + "/" + prefix + "_y.npy", "<i8", {ds.n}, ds.labels.data(),
             ds.labels.size() * 8);
  };
  one(data.train, "train");
  one(data.test, "test");
}

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tcc-trainer-test-XXXXXX")
          .string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp failed");
  dir = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Restore permissions a test may have removed, then delete.
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(dir, ec);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

} // namespace tcc::test
