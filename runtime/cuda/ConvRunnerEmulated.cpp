//===- ConvRunnerEmulated.cpp - The step's convolutions, emulated ---------===//
//
// ConvRunner under TCC_CUDA_HOST_EMULATION (runtime/cuda/device/
// HostEmulation.h; test/runtime/cuda/host_emulation.py compiles this file in
// place of ConvRunner.cpp): each convolution is its definition, summed in
// double and rounded once to the problem's type (f32, bf16 or f16, as
// cuDNN's f32 accumulation is), enqueued on the emulated stream. It reads
// only the baked table's
// problem keys, as cuDNN reads the problem, so a wrong geometry, a wrong
// table row or buffers bound to the wrong roles make the emulated trainer
// disagree with the cpu trainer. The engines themselves run on a GPU only.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_CUDA_HOST_EMULATION
#error "ConvRunnerEmulated.cpp is the host emulation's ConvRunner"
#endif

#include "runtime/cuda/ConvRunner.h"

#include "runtime/common/Float16.h"
#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/device/HostEmulation.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcc::cuda {

struct ConvRunner::Plans {
  cudaStream_t stream = nullptr;
  std::vector<ConvProblem> problems;
  std::vector<int64_t> workspaceBytes;
};

ConvRunner::ConvRunner() = default;
ConvRunner::~ConvRunner() = default;

void ConvRunner::prepare(const BakedTarget &target, void *stream) {
  plans = std::make_unique<Plans>();
  plans->stream = static_cast<cudaStream_t>(stream);
  for (int i = 0; i < target.count; ++i) {
    ConvProblem problem;
    if (!ConvProblem::fromKey(target.convs[i].problem, problem))
      throw std::runtime_error(std::string("the baked convolution table is damaged at [") +
                               target.convs[i].problem + "]");
    plans->problems.push_back(problem);
    plans->workspaceBytes.push_back(target.convs[i].workspaceBytes);
  }
}

namespace {

/// The problem's tensors as stored: f32, or 16-bit bits.
struct Tensor {
  ConvDataType type;
  void *data;

  double operator[](int64_t i) const {
    const uint16_t *bits = static_cast<const uint16_t *>(data);
    switch (type) {
    case ConvDataType::BFloat16:
      return rt::half::bf16ToFloat(bits[i]);
    case ConvDataType::Float16:
      return rt::half::f16ToFloat(bits[i]);
    default:
      return static_cast<const float *>(data)[i];
    }
  }
  /// Rounds through f32 (which moves no 16-bit result but a tie).
  void store(int64_t i, double v) const {
    const float f = float(v);
    if (type == ConvDataType::Float32)
      static_cast<float *>(data)[i] = f;
    else
      static_cast<uint16_t *>(data)[i] = type == ConvDataType::BFloat16
                                             ? rt::half::floatToBf16(f)
                                             : rt::half::floatToF16(f);
  }
};

/// `t`'s first `size` values, widened once: the sums below read each one
/// R·S·K (or N·P·Q) times, and widening a 16-bit value per read was most
/// of an emulated step's time. Widening is exact: the same sums.
std::vector<double> widened(const Tensor &t, int64_t size) {
  std::vector<double> values(size_t(size), 0.0);
#pragma omp parallel for
  for (int64_t i = 0; i < size; ++i)
    values[size_t(i)] = t[i];
  return values;
}

/// y[n, k, p, q] = sum over c in k's group, r, s of x[n, c, ...] w[k, c, r, s]
/// (zero outside x), in the direction's roles; x and y NCHW or NHWC (the
/// problem's layout: the same sums in the same order), w KCRS (KRSC for
/// the statistics problem); a forward epilogue adds bias[k] to each sum and
/// applies its ReLU before rounding once, as cuDNN's fused engines do on
/// their f32 sums.
void convolve(const ConvProblem &pb, Tensor x, Tensor w, Tensor y, Tensor bias) {
  const int64_t groupIn = pb.c / pb.groups, groupOut = pb.k / pb.groups;
  const bool last = pb.layout == ConvLayout::NHWC;
  auto xAt = [&](int64_t n, int64_t c, int64_t h, int64_t wc) {
    return last ? ((n * pb.h + h) * pb.w + wc) * pb.c + c : ((n * pb.c + c) * pb.h + h) * pb.w + wc;
  };
  auto yAt = [&](int64_t n, int64_t k, int64_t p, int64_t q) {
    return last ? ((n * pb.p + p) * pb.q + q) * pb.k + k : ((n * pb.k + k) * pb.p + p) * pb.q + q;
  };
  auto wAt = [&](int64_t k, int64_t ci, int64_t r, int64_t s) {
    return pb.weightChannelsLast() ? ((k * pb.r + r) * pb.s + s) * groupIn + ci
                                   : ((k * groupIn + ci) * pb.r + r) * pb.s + s;
  };
  // The input row and column of output (p, q)'s tap (r, s), or outside x.
  auto rowOf = [&](int64_t p, int64_t r) { return p * pb.strideH - pb.padH + r * pb.dilationH; };
  auto columnOf = [&](int64_t q, int64_t s) {
    return q * pb.strideW - pb.padW + s * pb.dilationW;
  };
  // The taps (c, r, s) of output row p whose input row h is inside x, in
  // the order every sum takes them.
  auto rowTaps = [&](int64_t p, auto &&visit) {
    for (int64_t ci = 0; ci < groupIn; ++ci)
      for (int64_t r = 0; r < pb.r; ++r) {
        const int64_t h = rowOf(p, r);
        if (h < 0 || h >= pb.h)
          continue;
        for (int64_t s = 0; s < pb.s; ++s)
          visit(ci, r, s, h);
      }
  };
  // Each output element of the direction is one sum, in that order.
  auto tap = [&](int64_t n, int64_t k, int64_t p, int64_t q, auto &&visit) {
    const int64_t g = k / groupOut;
    rowTaps(p, [&](int64_t ci, int64_t r, int64_t s, int64_t h) {
      const int64_t wc = columnOf(q, s);
      if (wc >= 0 && wc < pb.w)
        visit(xAt(n, g * groupIn + ci, h, wc), wAt(k, ci, r, s));
    });
  };
  const int64_t xSize = pb.n * pb.c * pb.h * pb.w, wSize = pb.k * groupIn * pb.r * pb.s,
                ySize = pb.n * pb.k * pb.p * pb.q;
  switch (pb.direction) {
  case ConvDirection::Forward: {
    // Each output's sum takes its taps in tap()'s order (c, r, s); the q
    // sums of a row advance side by side, independent chains, not one
    // after the other (the same sums, a fraction of the time).
    const std::vector<double> xs = widened(x, xSize), ws = widened(w, wSize);
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < pb.n; ++n)
      for (int64_t k = 0; k < pb.k; ++k) {
        const int64_t g = k / groupOut;
        std::vector<double> row(size_t(pb.q));
        for (int64_t p = 0; p < pb.p; ++p) {
          std::fill(row.begin(), row.end(), 0.0);
          rowTaps(p, [&](int64_t ci, int64_t r, int64_t s, int64_t h) {
            const double weight = ws[size_t(wAt(k, ci, r, s))];
            for (int64_t q = 0; q < pb.q; ++q) {
              const int64_t wc = columnOf(q, s);
              if (wc >= 0 && wc < pb.w)
                row[size_t(q)] += xs[size_t(xAt(n, g * groupIn + ci, h, wc))] * weight;
            }
          });
          for (int64_t q = 0; q < pb.q; ++q) {
            double sum = row[size_t(q)];
            if (pb.epilogue == ConvEpilogue::Bias || pb.epilogue == ConvEpilogue::BiasRelu)
              sum += bias[k];
            // kernels::Relu's: a NaN stays NaN.
            if (pb.epilogue == ConvEpilogue::BiasRelu && sum <= 0)
              sum = 0;
            y.store(yAt(n, k, p, q), sum);
          }
        }
      }
    return;
  }
  case ConvDirection::BackwardData:
  case ConvDirection::BackwardFilter: {
    // Scatter in double, then round once: each element of dx or dw is the
    // exact sum of its products before rounding, as in the definition.
    // dx[n] gathers from image n only, dw[k] from output channel k only: a
    // thread per image (per channel) adds each element's products in the
    // order (k, p, q, tap) (resp. (n, p, q, tap)) on any number of threads.
    const bool data = pb.direction == ConvDirection::BackwardData;
    std::vector<double> sums(size_t(data ? xSize : wSize), 0.0);
    const std::vector<double> dys = widened(y, ySize);
    if (data) {
      const std::vector<double> ws = widened(w, wSize);
#pragma omp parallel for
      for (int64_t n = 0; n < pb.n; ++n)
        for (int64_t k = 0; k < pb.k; ++k)
          for (int64_t p = 0; p < pb.p; ++p)
            for (int64_t q = 0; q < pb.q; ++q) {
              const double dy = dys[size_t(yAt(n, k, p, q))];
              tap(n, k, p, q, [&](int64_t xi, int64_t wi) {
                sums[size_t(xi)] += dy * ws[size_t(wi)];
              });
            }
    } else {
      // Each dw element's products still in the order (n, p, q): q
      // innermost, the element's sum held in a register across it.
      const std::vector<double> xs = widened(x, xSize);
#pragma omp parallel for
      for (int64_t k = 0; k < pb.k; ++k) {
        const int64_t g = k / groupOut;
        for (int64_t n = 0; n < pb.n; ++n)
          for (int64_t p = 0; p < pb.p; ++p)
            rowTaps(p, [&](int64_t ci, int64_t r, int64_t s, int64_t h) {
              double &sum = sums[size_t(wAt(k, ci, r, s))];
              double acc = sum;
              for (int64_t q = 0; q < pb.q; ++q) {
                const int64_t wc = columnOf(q, s);
                if (wc >= 0 && wc < pb.w)
                  acc += dys[size_t(yAt(n, k, p, q))] *
                         xs[size_t(xAt(n, g * groupIn + ci, h, wc))];
              }
              sum = acc;
            });
      }
    }
    const Tensor &out = data ? x : w;
#pragma omp parallel for
    for (int64_t i = 0; i < int64_t(sums.size()); ++i)
      out.store(i, sums[size_t(i)]);
    return;
  }
  }
}

/// What cuDNN's genstats gives for y [n, k, p, q] (the stored, rounded
/// values): per channel, f32 sums of y and of y*y, each sample's p*q values
/// added in order, then the samples' partial sums in order (one pass, as a
/// GPU's blocks add tiles; a GPU adds in another order, within the bound of
/// docs/cuda.md "Batch norm statistics from the convolution").
void gatherStatistics(const ConvProblem &pb, Tensor y, float *sum, float *squares) {
  const bool last = pb.layout == ConvLayout::NHWC;
#pragma omp parallel for
  for (int64_t k = 0; k < pb.k; ++k) {
    float total = 0, totalSquares = 0;
    for (int64_t n = 0; n < pb.n; ++n) {
      float part = 0, partSquares = 0;
      for (int64_t i = 0; i < pb.p * pb.q; ++i) {
        const float v = float(y[last ? (n * pb.p * pb.q + i) * pb.k + k
                                     : (n * pb.k + k) * pb.p * pb.q + i]);
        part += v;
        partSquares += v * v;
      }
      total += part;
      totalSquares += partSquares;
    }
    sum[k] = total;
    squares[k] = totalSquares;
  }
}

} // namespace

void ConvRunner::runWithStatistics(int index, const void *x, const void *weight, const void *y,
                                   float *sum, float *squares, void *workspace,
                                   int64_t workspaceBytes) {
  const ConvProblem problem = plans->problems.at(size_t(index));
  if (problem.epilogue != ConvEpilogue::Statistics || workspaceBytes <
      plans->workspaceBytes[size_t(index)])
    throw std::runtime_error("convolution [" + problem.key() + "] is run for statistics " +
                             "it does not gather, or with less workspace than its plan's");
  auto tensor = [&](const void *p) { return Tensor{problem.dtype, const_cast<void *>(p)}; };
  const Tensor xs = tensor(x), ws = tensor(weight), ys = tensor(y);
  rt::cuda::emulation::enqueue(plans->stream, [=] {
    rt::cuda::emulation::scribble(workspace, workspaceBytes);
    convolve(problem, xs, ws, ys, Tensor{problem.dtype, nullptr});
    gatherStatistics(problem, ys, sum, squares);
  });
}

void ConvRunner::run(int index, const void *x, const void *weight, const void *y,
                     void *workspace, int64_t workspaceBytes, const void *bias) {
  const ConvProblem problem = plans->problems.at(size_t(index));
  if (workspaceBytes < plans->workspaceBytes[size_t(index)])
    throw std::runtime_error("the step gives convolution [" + problem.key() + "] " +
                             std::to_string(workspaceBytes) + " bytes of workspace, its plan "
                             "asks for " + std::to_string(plans->workspaceBytes[size_t(index)]));
  auto tensor = [&](const void *p) { return Tensor{problem.dtype, const_cast<void *>(p)}; };
  if (problem.epilogue == ConvEpilogue::Statistics)
    throw std::runtime_error("convolution [" + problem.key() + "] is run without its statistics");
  if ((problem.epilogue != ConvEpilogue::None) != (bias != nullptr))
    throw std::runtime_error("convolution [" + problem.key() + "] is given " +
                             (bias ? "a bias it has no epilogue for" : "no bias"));
  const Tensor xs = tensor(x), ws = tensor(weight), ys = tensor(y), bs = tensor(bias);
  rt::cuda::emulation::enqueue(plans->stream, [=] {
    // cuDNN may write anything there: a value the memory plan placed in an
    // op's workspace is overwritten, as it would be on a GPU.
    rt::cuda::emulation::scribble(workspace, workspaceBytes);
    convolve(problem, xs, ws, ys, bs);
  });
}

} // namespace tcc::cuda
