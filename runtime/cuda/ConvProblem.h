//===- ConvProblem.h - One convolution as cuDNN sees it ---------*- C++ -*-===//
//
// A convolution of the step in one direction (forward, backward-data,
// backward-filter), with everything cuDNN's choice of engine depends on:
// shapes, padding, stride, dilation, groups, data type and the physical
// layout of its tensors. The compiler collects the distinct problems of a
// step (codegen/cuda/CudaConvPlans.cpp), picks an engine for each and bakes it
// into the trainer; the trainer rebuilds the plan from the same problem
// (ConvPlans.h). Plain C++: no cuDNN, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CONVPROBLEM_H
#define TCC_RUNTIME_CUDA_CONVPROBLEM_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

namespace tcc::cuda {

enum class ConvDirection { Forward, BackwardData, BackwardFilter };
enum class ConvDataType { Float32, BFloat16, Float16 };
/// How a conv's activations (x, y and their gradients) are stored: NCHW is
/// the IR's logical layout; NHWC is what cuDNN's tensor-core engines read
/// without a transpose (tcc-channels-last decides). The weight is KCRS in
/// both, as the checkpoint holds it: next to NHWC activations cuDNN's
/// engines take it with a workspace about the weight's size.
enum class ConvLayout { NCHW, NHWC };
/// What a forward convolution applies to its f32 sums before it rounds and
/// stores them (cuDNN's fused engines): the channel bias, then a ReLU. The
/// ones cuDNN builds for a described GPU, with no GPU present: a GELU or
/// SiLU epilogue needs cuDNN's runtime compilation, which needs the driver
/// (docs/cuda.md, "Conv epilogues"). `Statistics`: no bias; cuDNN's
/// genstats gathers each output channel's f32 sum and sum of squares as the
/// convolution stores y (a batch norm's statistics, docs/cuda.md "Batch norm
/// statistics from the convolution"); fp16 NHWC only, and the weight KRSC:
/// with a KCRS weight cuDNN 9.19 has no engine for the graph.
enum class ConvEpilogue { None, Bias, BiasRelu, Statistics };

struct ConvProblem {
  ConvDirection direction = ConvDirection::Forward;
  ConvDataType dtype = ConvDataType::Float32;
  ConvLayout layout = ConvLayout::NCHW;
  /// Forward only; the bias is [k] in the problem's type.
  ConvEpilogue epilogue = ConvEpilogue::None;
  /// Input x [n, c, h, w], weight [k, c / groups, r, s], output
  /// y [n, k, p, q] whatever the direction: backward-data computes dx from
  /// dy and the weight, backward-filter dw from dy and x.
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, p = 0, q = 0;
  int64_t padH = 0, padW = 0, strideH = 1, strideW = 1, dilationH = 1,
          dilationW = 1, groups = 1;

  bool operator==(const ConvProblem &o) const { return key() == o.key(); }

  /// The weight's layout in the problem: KRSC for the statistics graph,
  /// which cuDNN 9.19 builds only so, else KCRS (as the checkpoint).
  bool weightChannelsLast() const { return epilogue == ConvEpilogue::Statistics; }

  /// The same convolution with no epilogue: what runs where cuDNN has no
  /// engine for the epilogue (the step then adds the bias itself).
  ConvProblem withoutEpilogue() const {
    ConvProblem plain = *this;
    plain.epilogue = ConvEpilogue::None;
    return plain;
  }

  /// A stable, readable identity: "fwd bf16 nhwc n512 c64 h32 w32 k128 r3 s3
  /// p32 q32 pad1,1 stride1,1 dil1,1 g1", followed by " +bias" or
  /// " +bias+relu" for an epilogue, " +genstats" for the statistics. Tuning files and the baked table are
  /// keyed by it.
  std::string key() const {
    static const char *const epilogues[] = {"", " +bias", " +bias+relu", " +genstats"};
    static const char *const directions[] = {"fwd", "bwd-data", "bwd-filter"};
    static const char *const dtypes[] = {"f32", "bf16", "f16"};
    auto pair = [](int64_t a, int64_t b) {
      return std::to_string(a) + "," + std::to_string(b);
    };
    return std::string(directions[int(direction)]) + " " + dtypes[int(dtype)] +
           (layout == ConvLayout::NCHW ? " nchw" : " nhwc") +
           " n" + std::to_string(n) + " c" + std::to_string(c) + " h" +
           std::to_string(h) + " w" + std::to_string(w) + " k" +
           std::to_string(k) + " r" + std::to_string(r) + " s" +
           std::to_string(s) + " p" + std::to_string(p) + " q" +
           std::to_string(q) + " pad" + pair(padH, padW) + " stride" +
           pair(strideH, strideW) + " dil" + pair(dilationH, dilationW) +
           " g" + std::to_string(groups) + epilogues[int(epilogue)];
  }

  /// Reads a key() back (the generated trainer's table holds keys). False
  /// if `text` is not a key.
  static bool fromKey(const std::string &text, ConvProblem &problem) {
    char direction[16], dtype[8], layout[8];
    long long v[16];
    int used = 0;
    int read = std::sscanf(
        text.c_str(),
        "%15s %7s %7s n%lld c%lld h%lld w%lld k%lld r%lld s%lld p%lld q%lld "
        "pad%lld,%lld stride%lld,%lld dil%lld,%lld g%lld%n",
        direction, dtype, layout, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
        &v[8], &v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &used);
    if (read != 19)
      return false;
    const std::string rest = text.substr(size_t(used));
    int e = rest.empty()               ? 0
            : rest == " +bias"         ? 1
            : rest == " +bias+relu"    ? 2
            : rest == " +genstats"     ? 3
                                       : -1;
    if (e < 0)
      return false;
    auto index = [](const char *word, std::initializer_list<const char *> names) {
      int i = 0;
      for (const char *name : names) {
        if (std::strcmp(word, name) == 0)
          return i;
        ++i;
      }
      return -1;
    };
    int d = index(direction, {"fwd", "bwd-data", "bwd-filter"});
    int t = index(dtype, {"f32", "bf16", "f16"});
    int l = index(layout, {"nchw", "nhwc"});
    if (d < 0 || t < 0 || l < 0 || (e != 0 && d != 0))
      return false;
    problem = ConvProblem{ConvDirection(d), ConvDataType(t), ConvLayout(l), ConvEpilogue(e),
                          v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
                          v[9], v[10], v[11], v[12], v[13], v[14], v[15]};
    return problem.key() == text;
  }
};

/// Where a statistics convolution (ConvEpilogue::Statistics) keeps what it
/// needs in its workspace: its weight transposed to KRSC (each step: the
/// parameter stays KCRS, as the checkpoint and the backward convolutions
/// take it), the f32 sum and sum of squares of y ([k] each), then the
/// engine's bytes (the rest of the workspace); each part 256-byte aligned.
struct StatisticsWorkspace {
  int64_t sumsOffset = 0, engineOffset = 0;

  explicit StatisticsWorkspace(const ConvProblem &p) {
    const int64_t element = p.dtype == ConvDataType::Float32 ? 4 : 2;
    sumsOffset = aligned(p.k * (p.c / p.groups) * p.r * p.s * element);
    engineOffset = sumsOffset + aligned(2 * p.k * int64_t(sizeof(float)));
  }
  /// The whole workspace for an engine that needs `engineBytes`.
  int64_t bytes(int64_t engineBytes) const { return engineOffset + engineBytes; }

private:
  static int64_t aligned(int64_t n) { return (n + 255) / 256 * 256; }
};

/// "forward", "backward-data", "backward-filter", for messages.
inline const char *directionName(ConvDirection direction) {
  static const char *const names[] = {"forward", "backward-data", "backward-filter"};
  return names[int(direction)];
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CONVPROBLEM_H
