//===- GradientRuleTest.cpp - Every gradient rule vs finite differences ---===//
//
// For each configuration of each op implementing DifferentiableOpInterface:
//   f(inputs..., R) = sum(op(inputs...) * R)        (R: a fixed random cotangent)
// (for the loss ops, which return a scalar, f = op(inputs...) * R with a
// scalar R, so the rules must also use the incoming gradient). The function
// is parsed from text, reverse-mode AD (mlir::tcc::buildGradients, i.e. the
// op's rule) appends the gradient ops (from %y * R, seeded with ones: the
// final tcc.reduce_sum is a backward op without a rule), and the test
// interpreter (Interpreter.h: the CPU kernels in double) runs it. Each gradient element
// of each float input is compared with a central finite difference of f
// (the fourth-order 5-point stencil, so that a step of 1e-4 leaves
// truncation and rounding errors both near 1e-11; the tolerance is 1e-6
// relative + 1e-8 absolute). Inputs are drawn away from the kinks of the op
// (0 for relu-like ops, ties for max pooling). Small inputs are checked
// element by element, large ones (the GEMM-blocked conv and linear cases) on
// a fixed random subset of their elements.
//
// Labels, running statistics and seeds must get no gradient from the rules
// (they are passed to buildGradients too, so a null gradient comes from the
// rule); running statistics are also checked to have zero finite
// differences.
//
// Negative controls at the end corrupt a built gradient op (an attribute of
// the backward op) and check that the comparison catches it.
//
//===----------------------------------------------------------------------===//

#include "test/gradients/Interpreter.h"

#include "ir/TccDialect.h"
#include "ir/TccOps.h"
#include "passes/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using ::tcc::test::Tensor;

namespace {

//===----------------------------------------------------------------------===//
// Test configurations
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

/// What an input is to the op, which decides its expected gradient.
enum class Role {
  Diff,   ///< a float input: gradient checked against finite differences
  Stat,   ///< running statistics: no gradient, zero finite differences
  Labels, ///< class indices (i64): no gradient
  Seed,   ///< a dropout seed (i64 scalar): no gradient
  Ids,    ///< token ids (f32 integers in [0, classes)): no gradient
};

/// How an input is drawn.
enum class Dist {
  Uniform,      ///< U(-1, 1)
  AwayFromZero, ///< +-U(0.2, 2.5): no kink of relu-like ops within reach
  Distinct,     ///< a shuffled grid of step 0.04 (+-0.005): no max-pool ties
  Positive,     ///< U(0.5, 1.5)
};

struct Arg {
  std::string name;
  Shape shape;
  Role role = Role::Diff;
  Dist dist = Dist::Uniform;
  int64_t classes = 0; ///< for Labels and Ids: drawn from [0, classes)
};

struct Case {
  std::string name; ///< the gtest parameter name
  std::string op;   ///< the op under test ("" for compositions of ops)
  std::vector<Arg> args;
  std::string body; ///< MLIR lines defining %y from the arguments
  Shape yShape;     ///< the shape of %y ({} for a loss op's scalar)
  /// Rows of a float input that PyTorch's rule leaves without a gradient
  /// although the output reads them (an embedding's padding_idx): there the
  /// rule must give exactly 0 instead of the finite difference. {arg, row}.
  std::vector<std::pair<size_t, int64_t>> frozenRows = {};
};

std::string dims(const Shape &s) {
  std::string out;
  for (int64_t d : s)
    out += std::to_string(d) + "x";
  return out;
}
std::string ty(const Shape &s, const std::string &element = "f32") {
  return "tensor<" + dims(s) + element + ">";
}
std::string tyOf(const Arg &a) {
  return ty(a.shape, a.role == Role::Labels || a.role == Role::Seed ? "i64" : "f32");
}
std::string i64s(const Shape &s) {
  std::string out = "array<i64";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : ": ") + std::to_string(s[i]);
  return out + ">";
}
/// An MLIR float literal (which needs a '.').
std::string fl(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find('.') == std::string::npos) {
    size_t e = s.find_first_of("eE");
    s.insert(e == std::string::npos ? s.size() : e, ".0");
  }
  return s;
}
std::string f64(double v) { return fl(v) + " : f64"; }

/// "(%a, %b : Ta, Tb)"-style pieces of an op from its argument list.
std::string typesOf(const std::vector<Arg> &args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i)
    out += (i ? ", " : "") + tyOf(args[i]);
  return out;
}
std::string namesOf(const std::vector<Arg> &args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i)
    out += (i ? ", %" : "%") + args[i].name;
  return out;
}

Case conv2d(const std::string &name, Shape x, int64_t o, Shape k, Shape stride,
            Shape pad, Shape dil, int64_t groups, bool bias) {
  Shape w{o, x[1] / groups, k[0], k[1]};
  Shape y{x[0], o, (x[2] + 2 * pad[0] - dil[0] * (k[0] - 1) - 1) / stride[0] + 1,
          (x[3] + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) / stride[1] + 1};
  std::vector<Arg> args{{"x", x}, {"w", w}};
  if (bias)
    args.push_back({"b", {o}});
  std::string body = "%y = tcc.conv2d " + namesOf(args) + " {dilation = " + i64s(dil) +
                     ", groups = " + std::to_string(groups) + " : i64, padding = " +
                     i64s(pad) + ", stride = " + i64s(stride) + "} : (" +
                     typesOf(args) + ") -> " + ty(y);
  return {name, "tcc.conv2d", args, body, y};
}

Case linear(const std::string &name, Shape x, int64_t o, bool bias) {
  Shape y = x;
  y.back() = o;
  std::vector<Arg> args{{"x", x}, {"w", {o, x.back()}}};
  if (bias)
    args.push_back({"b", {o}});
  std::string body = "%y = tcc.linear " + namesOf(args) + " : (" + typesOf(args) +
                     ") -> " + ty(y);
  return {name, "tcc.linear", args, body, y};
}

Case batchNorm(const std::string &name, Shape x, bool weight, bool bias,
               int64_t ghost, bool strided = false) {
  int64_t c = x[1];
  int64_t groups = ghost > 0 && ghost < x[0] ? x[0] / ghost : 1;
  std::vector<Arg> args{{"x", x}};
  std::string operands = "%x";
  if (weight) {
    args.push_back({"g", {c}});
    operands += " weight %g";
  }
  if (bias) {
    args.push_back({"b", {c}});
    operands += " bias %b";
  }
  args.push_back({"rm", {c}, Role::Stat, Dist::Uniform});
  args.push_back({"rv", {c}, Role::Stat, Dist::Positive});
  Shape saved{groups, c};
  std::string body = "%y, %mean, %invstd, %nrm, %nrv = tcc.batch_norm " + operands +
                     " running %rm, %rv {eps = " + f64(1e-5) + ", ghost_batch = " +
                     std::to_string(ghost) + " : i64, " +
                     (strided ? "ghost_strided = true, " : "") + "momentum = " + f64(0.1) +
                     "} : (" + typesOf(args) + ") -> (" + ty(x) + ", " + ty(saved) +
                     ", " + ty(saved) + ", " + ty({c}) + ", " + ty({c}) + ")";
  return {name, "tcc.batch_norm", args, body, x};
}

Case layerNorm(const std::string &name, Shape x, int64_t normalizedDims,
               bool weight, bool bias) {
  Shape param(x.end() - normalizedDims, x.end());
  Shape lead(x.begin(), x.end() - normalizedDims);
  std::vector<Arg> args{{"x", x}};
  std::string operands = "%x";
  if (weight) {
    args.push_back({"g", param});
    operands += " weight %g";
  }
  if (bias) {
    args.push_back({"b", param});
    operands += " bias %b";
  }
  std::string body = "%y, %mean, %invstd = tcc.layer_norm " + operands + " {eps = " +
                     f64(1e-5) + ", normalized_dims = " +
                     std::to_string(normalizedDims) + " : i64} : (" +
                     typesOf(args) + ") -> (" + ty(x) + ", " + ty(lead) + ", " +
                     ty(lead) + ")";
  return {name, "tcc.layer_norm", args, body, x};
}

/// A unary elementwise op `%y = tcc.<mnemonic> %x {attrs} : T`.
Case activation(const std::string &name, const std::string &mnemonic,
                const std::string &attrs, Dist dist, Shape x = {3, 7}) {
  std::string body = "%y = tcc." + mnemonic + " %x " +
                     (attrs.empty() ? "" : "{" + attrs + "} ") + ": " + ty(x);
  return {name, "tcc." + mnemonic, {{"x", x, Role::Diff, dist}}, body, x};
}

Shape poolOut(const Shape &x, Shape k, Shape s, Shape p) {
  return {x[0], x[1], (x[2] + 2 * p[0] - k[0]) / s[0] + 1,
          (x[3] + 2 * p[1] - k[1]) / s[1] + 1};
}

Case maxPool(const std::string &name, Shape x, Shape k, Shape s, Shape p) {
  Shape y = poolOut(x, k, s, p);
  std::string body = "%y = tcc.max_pool2d %x {kernel = " + i64s(k) + ", padding = " +
                     i64s(p) + ", stride = " + i64s(s) + "} : (" + ty(x) + ") -> " +
                     ty(y);
  return {name, "tcc.max_pool2d", {{"x", x, Role::Diff, Dist::Distinct}}, body, y};
}

Case avgPool(const std::string &name, Shape x, Shape k, Shape s, Shape p,
             bool includePad) {
  Shape y = poolOut(x, k, s, p);
  std::string body = "%y = tcc.avg_pool2d %x {count_include_pad = " +
                     std::string(includePad ? "true" : "false") + ", kernel = " +
                     i64s(k) + ", padding = " + i64s(p) + ", stride = " + i64s(s) +
                     "} : (" + ty(x) + ") -> " + ty(y);
  return {name, "tcc.avg_pool2d", {{"x", x}}, body, y};
}

Case globalPool(const std::string &name, const std::string &mnemonic, Shape x,
                Dist dist) {
  Shape y{x[0], x[1]};
  std::string body = "%y = tcc." + mnemonic + " %x : (" + ty(x) + ") -> " + ty(y);
  return {name, "tcc." + mnemonic, {{"x", x, Role::Diff, dist}}, body, y};
}

Case binary(const std::string &name, const std::string &mnemonic, Shape x,
            bool sameOperand) {
  std::vector<Arg> args{{"a", x}};
  if (!sameOperand)
    args.push_back({"b", x});
  std::string body = "%y = tcc." + mnemonic + " %a, " +
                     (sameOperand ? "%a" : "%b") + " : " + ty(x) + ", " + ty(x);
  return {name, "tcc." + mnemonic, args, body, x};
}

Case channelMul(const std::string &name, Shape x) {
  Shape gate{x[0], x[1]};
  std::string body = "%y = tcc.channel_mul %x, %g : (" + ty(x) + ", " + ty(gate) + ") -> " + ty(x);
  return {name, "tcc.channel_mul", {{"x", x}, {"g", gate}}, body, x};
}

Case concat(const std::string &name, std::vector<Shape> inputs, int64_t axis) {
  std::vector<Arg> args;
  Shape y = inputs[0];
  y[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args.push_back({"in" + std::to_string(i), inputs[i]});
    y[axis] += inputs[i][axis];
  }
  std::string body = "%y = tcc.concat " + namesOf(args) + " {axis = " +
                     std::to_string(axis) + " : i64} : (" + typesOf(args) + ") -> " +
                     ty(y);
  return {name, "tcc.concat", args, body, y};
}

Case padChannels(const std::string &name, Shape x, int64_t channels) {
  Shape y = x;
  y[1] = channels;
  std::string body = "%y = tcc.pad_channels %x {channels = " + std::to_string(channels) +
                     " : i64} : (" + ty(x) + ") -> " + ty(y);
  return {name, "tcc.pad_channels", {{"x", x}}, body, y};
}

Case flatten(const std::string &name, Shape x) {
  Shape y{x[0], 1};
  for (size_t i = 1; i < x.size(); ++i)
    y[1] *= x[i];
  std::string body = "%y = tcc.flatten %x : (" + ty(x) + ") -> " + ty(y);
  return {name, "tcc.flatten", {{"x", x}}, body, y};
}

Case reshape(const std::string &name, Shape x, Shape y) {
  std::string body = "%y = tcc.reshape %x {shape = " + i64s(y) + "} : (" + ty(x) +
                     ") -> " + ty(y);
  return {name, "tcc.reshape", {{"x", x}}, body, y};
}

Case transpose(const std::string &name, Shape x, Shape perm) {
  Shape y;
  for (int64_t p : perm)
    y.push_back(x[p]);
  std::string body = "%y = tcc.transpose %x {perm = " + i64s(perm) + "} : (" + ty(x) +
                     ") -> " + ty(y);
  return {name, "tcc.transpose", {{"x", x}}, body, y};
}

Case slice(const std::string &name, Shape x, int64_t axis, int64_t offset, int64_t size) {
  Shape y = x;
  y[axis] = size;
  std::string body = "%y = tcc.slice %x {axis = " + std::to_string(axis) +
                     " : i64, offset = " + std::to_string(offset) +
                     " : i64, size = " + std::to_string(size) + " : i64} : (" + ty(x) +
                     ") -> " + ty(y);
  return {name, "tcc.slice", {{"x", x}}, body, y};
}

/// ids [N, T] of `rows` tokens (few rows: ids repeat, so the scatter-add
/// sums), a table [rows, d].
Case embedding(const std::string &name, Shape ids, int64_t rows, int64_t d,
               int64_t paddingIdx) {
  Shape y = ids;
  y.push_back(d);
  std::vector<Arg> args{{"ids", ids, Role::Ids, Dist::Uniform, rows}, {"w", {rows, d}}};
  std::string body = "%y = tcc.embedding %ids, %w {padding_idx = " +
                     std::to_string(paddingIdx) + " : i64} : (" + typesOf(args) + ") -> " +
                     ty(y);
  Case c{name, "tcc.embedding", args, body, y};
  if (paddingIdx >= 0)
    c.frozenRows.push_back({1, paddingIdx});
  return c;
}

Case matmul(const std::string &name, Shape batch, int64_t m, int64_t k, int64_t n, bool ta,
            bool tb) {
  Shape a = batch, b = batch, y = batch;
  a.insert(a.end(), {ta ? k : m, ta ? m : k});
  b.insert(b.end(), {tb ? n : k, tb ? k : n});
  y.insert(y.end(), {m, n});
  std::vector<Arg> args{{"a", a}, {"b", b}};
  std::string body = "%y = tcc.matmul %a, %b {transpose_a = " +
                     std::string(ta ? "true" : "false") + ", transpose_b = " +
                     std::string(tb ? "true" : "false") + "} : (" + typesOf(args) + ") -> " +
                     ty(y);
  return {name, "tcc.matmul", args, body, y};
}

Case expand(const std::string &name, Shape x, int64_t axis, int64_t size) {
  Shape y = x;
  y[axis] = size;
  std::string body = "%y = tcc.expand %x {axis = " + std::to_string(axis) +
                     " : i64, size = " + std::to_string(size) + " : i64} : (" + ty(x) +
                     ") -> " + ty(y);
  return {name, "tcc.expand", {{"x", x}}, body, y};
}

Case reduceSum(const std::string &name, Shape x, Shape axes) {
  Shape y;
  for (size_t d = 0; d < x.size(); ++d)
    if (std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end())
      y.push_back(x[d]);
  std::string body = "%y = tcc.reduce_sum %x {axes = " + i64s(axes) + "} : (" + ty(x) +
                     ") -> " + ty(y);
  return {name, "tcc.reduce_sum", {{"x", x}}, body, y};
}

Case castSame(const std::string &name, Shape x) {
  std::string body = "%y = tcc.cast %x to f32 : (" + ty(x) + ") -> " + ty(x);
  return {name, "tcc.cast", {{"x", x}}, body, x};
}

Case dropout(const std::string &name, Shape x, double p, int64_t stream) {
  std::string body = "%y = tcc.dropout %x, %seed {p = " + f64(p) + ", stream = " +
                     std::to_string(stream) + " : i64} : (" + ty(x) +
                     ", tensor<i64>) -> " + ty(x);
  return {name, "tcc.dropout", {{"x", x}, {"seed", {}, Role::Seed}}, body, x};
}

Case softmaxLike(const std::string &name, const std::string &mnemonic, Shape x,
                 int64_t axis) {
  std::string body = "%y = tcc." + mnemonic + " %x {axis = " + std::to_string(axis) +
                     " : i64} : (" + ty(x) + ") -> " + ty(x);
  return {name, "tcc." + mnemonic, {{"x", x}}, body, x};
}

/// scaled_dot_product_attention of q [n, tq, heads*d] with k and v
/// [n, tk, heads*d] (v's head width dv), scale 1/sqrt(d); with dropout p > 0
/// it reads a seed.
Case attention(const std::string &name, int64_t n, int64_t tq, int64_t tk, int64_t heads,
               int64_t d, int64_t dv, bool causal, double p = 0, int64_t stream = 0) {
  Shape q{n, tq, heads * d}, k{n, tk, heads * d}, v{n, tk, heads * dv}, y{n, tq, heads * dv};
  std::vector<Arg> args{{"q", q}, {"k", k}, {"v", v}};
  std::string seed, seedType;
  if (p > 0) {
    args.push_back({"seed", {}, Role::Seed});
    seed = " seed %seed";
    seedType = ", tensor<i64>";
  }
  std::string body = "%y, %lse = tcc.scaled_dot_product_attention %q, %k, %v" + seed +
                     " {causal = " + (causal ? "true" : "false") + ", dropout = " + f64(p) +
                     ", heads = " + std::to_string(heads) + " : i64, scale = " +
                     f64(1 / std::sqrt(double(d))) + ", stream = " + std::to_string(stream) +
                     " : i64} : (" + ty(q) + ", " + ty(k) + ", " + ty(v) + seedType + ") -> (" +
                     ty(y) + ", " + ty({n, heads, tq}) + ")";
  return {name, "tcc.scaled_dot_product_attention", args, body, y};
}

Case crossEntropy(const std::string &name, int64_t n, int64_t k, double smoothing,
                  const std::string &reduction) {
  Arg logits{"x", {n, k}};
  logits.dist = Dist::Uniform;
  Arg labels{"labels", {n}, Role::Labels, Dist::Uniform, k};
  std::string body = "%y = tcc.cross_entropy %x, %labels {label_smoothing = " +
                     f64(smoothing) + ", reduction = \"" + reduction + "\"} : (" +
                     ty({n, k}) + ", " + ty({n}, "i64") + ") -> tensor<f32>";
  return {name, "tcc.cross_entropy", {logits, labels}, body, {}};
}

/// Cross entropy at every position of [n, t] sequences; ignore_index is a
/// real class (PyTorch allows that), so the drawn labels hit it.
Case tokenCrossEntropy(const std::string &name, int64_t n, int64_t t, int64_t k,
                       int64_t ignoreIndex, double smoothing, const std::string &reduction) {
  Arg logits{"x", {n, t, k}};
  Arg labels{"labels", {n, t}, Role::Labels, Dist::Uniform, k};
  std::string body = "%y = tcc.token_cross_entropy %x, %labels {ignore_index = " +
                     std::to_string(ignoreIndex) + " : i64, label_smoothing = " +
                     f64(smoothing) + ", reduction = \"" + reduction + "\"} : (" +
                     ty({n, t, k}) + ", " + ty({n, t}, "i64") + ") -> tensor<f32>";
  return {name, "tcc.token_cross_entropy", {logits, labels}, body, {}};
}

Case mseLoss(const std::string &name, Shape x, const std::string &reduction) {
  std::string body = "%y = tcc.mse_loss %x, %t {reduction = \"" + reduction +
                     "\"} : (" + ty(x) + ", " + ty(x) + ") -> tensor<f32>";
  return {name, "tcc.mse_loss", {{"x", x}, {"t", x}}, body, {}};
}

std::vector<Case> allCases() {
  const Dist away = Dist::AwayFromZero;
  std::vector<Case> c;
  // Convolution: stride, padding, dilation, groups (depthwise), rectangular
  // kernels, bias or not; some with input rows/columns no window reaches.
  c.push_back(conv2d("Conv3x3Pad1Bias", {2, 3, 5, 5}, 4, {3, 3}, {1, 1}, {1, 1},
                     {1, 1}, 1, true));
  c.push_back(conv2d("Conv3x3Stride2NoBias", {2, 2, 6, 7}, 3, {3, 3}, {2, 2},
                     {0, 0}, {1, 1}, 1, false));
  c.push_back(conv2d("Conv3x3Dilation2Pad2Bias", {1, 2, 7, 7}, 2, {3, 3}, {1, 1},
                     {2, 2}, {2, 2}, 1, true));
  c.push_back(conv2d("ConvGroups2Bias", {2, 4, 5, 5}, 6, {3, 3}, {1, 1}, {1, 1},
                     {1, 1}, 2, true));
  c.push_back(conv2d("ConvDepthwiseStride2NoBias", {2, 3, 6, 6}, 3, {3, 3}, {2, 2},
                     {1, 1}, {1, 1}, 3, false));
  c.push_back(conv2d("ConvDepthwiseMultiplier2Bias", {2, 3, 5, 5}, 6, {3, 3},
                     {1, 1}, {1, 1}, {1, 1}, 3, true));
  c.push_back(conv2d("Conv2x3Stride2x1Pad0x1Dilation1x2Bias", {2, 2, 5, 6}, 3,
                     {2, 3}, {2, 1}, {0, 1}, {1, 2}, 1, true));
  c.push_back(conv2d("Conv1x1Stride2Bias", {2, 4, 5, 5}, 2, {1, 1}, {2, 2}, {0, 0},
                     {1, 1}, 1, true));
  // Sizes that cross the blocking of the GEMM-based kernels (Conv.h,
  // Gemm.h): 288 = 32*3*3 rows of the column matrix (two k blocks), 256
  // output positions (two column blocks), 70 output channels (two channel
  // blocks of the filter gradient), output channels not a multiple of the
  // register tile.
  c.push_back(conv2d("ConvGemmTwoKBlocksTwoColumnBlocksBias", {2, 32, 16, 16}, 5,
                     {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true));
  c.push_back(conv2d("ConvGemm70OutputChannelsGroups2", {2, 4, 5, 4}, 70, {3, 3},
                     {1, 1}, {1, 1}, {1, 1}, 2, true));
  c.push_back(conv2d("ConvGroups2Stride2Pad2Dilation2NoBias", {1, 4, 7, 6}, 2,
                     {3, 2}, {2, 2}, {2, 1}, {2, 2}, 2, false));
  // Linear, rank 2 and 3.
  c.push_back(linear("Linear2dBias", {3, 5}, 4, true));
  c.push_back(linear("Linear2dNoBias", {3, 5}, 4, false));
  c.push_back(linear("Linear3dBias", {2, 3, 5}, 4, true));
  c.push_back(linear("Linear3dNoBias", {2, 3, 5}, 4, false));
  c.push_back(linear("Linear2dBiasRows5Outputs6", {5, 3}, 6, true));
  c.push_back(linear("Linear3dBiasWide", {3, 7, 37}, 70, true));
  // Batch norm: every weight/bias combination, ghost batches, rank 2 and 4.
  c.push_back(batchNorm("BatchNormWeightBias", {4, 3, 2, 2}, true, true, 0));
  c.push_back(batchNorm("BatchNormBiasOnly", {4, 3, 2, 2}, false, true, 0));
  c.push_back(batchNorm("BatchNormWeightOnly", {4, 3, 2, 2}, true, false, 0));
  c.push_back(batchNorm("BatchNormNoAffine", {4, 3, 2, 2}, false, false, 0));
  c.push_back(batchNorm("BatchNormGhost2WeightBias", {6, 2, 2, 2}, true, true, 2));
  c.push_back(batchNorm("BatchNormGhost3BiasOnly", {6, 2, 2, 2}, false, true, 3));
  c.push_back(batchNorm("BatchNormGhost2NoAffine", {4, 3, 2, 2}, false, false, 2));
  c.push_back(batchNorm("BatchNormGhostEqualsBatch", {4, 2, 2, 2}, true, true, 4));
  c.push_back(batchNorm("BatchNorm2dWeightBias", {6, 4}, true, true, 0));
  c.push_back(batchNorm("BatchNorm2dGhost4BiasOnly", {8, 3}, false, true, 4));
  c.push_back(batchNorm("BatchNormGhost2StridedWeightBias", {6, 2, 2, 2}, true, true, 2, true));
  c.push_back(batchNorm("BatchNorm2dGhost4StridedBiasOnly", {8, 3}, false, true, 4, true));
  // Layer norm.
  c.push_back(layerNorm("LayerNormWeightBias", {3, 6}, 1, true, true));
  c.push_back(layerNorm("LayerNormNoAffine", {3, 6}, 1, false, false));
  c.push_back(layerNorm("LayerNormWeightOnly", {3, 6}, 1, true, false));
  c.push_back(layerNorm("LayerNormBiasOnly", {3, 6}, 1, false, true));
  c.push_back(layerNorm("LayerNorm3dDims2WeightBias", {2, 3, 4}, 2, true, true));
  c.push_back(layerNorm("LayerNormWide70WeightBias", {3, 70}, 1, true, true));
  c.push_back(layerNorm("LayerNorm4dDims3NoAffine", {2, 3, 2, 2}, 3, false, false));
  // Activations, away from their kinks.
  c.push_back(activation("Relu", "relu", "", away));
  c.push_back(activation("LeakyReluSlope0p1", "leaky_relu",
                         "negative_slope = " + f64(0.1), away));
  c.push_back(activation("LeakyReluSlopeMinus0p3", "leaky_relu",
                         "negative_slope = " + f64(-0.3), away));
  c.push_back(activation("EluAlpha1", "elu", "alpha = " + f64(1.0), away));
  c.push_back(activation("EluAlpha0p5", "elu", "alpha = " + f64(0.5), away));
  c.push_back(activation("CeluAlpha1", "celu", "alpha = " + f64(1.0), away));
  c.push_back(activation("CeluAlpha0p3", "celu", "alpha = " + f64(0.3), away));
  c.push_back(activation("GeluNone", "gelu", "", away));
  c.push_back(activation("GeluNoneExplicit", "gelu", "approximate = \"none\"", away));
  c.push_back(activation("GeluTanh", "gelu", "approximate = \"tanh\"", away));
  c.push_back(activation("Silu", "silu", "", away));
  c.push_back(activation("Sigmoid", "sigmoid", "", away));
  c.push_back(activation("Tanh", "tanh", "", away));
  c.push_back(activation("Scale0p7", "scale", "factor = " + f64(0.7), Dist::Uniform));
  c.push_back(activation("ScaleMinus2p5", "scale", "factor = " + f64(-2.5),
                         Dist::Uniform, {2, 3, 2}));
  // scale_by: a run-time factor (fp16 loss scaling scales the loss, a 0-d
  // tensor, by it); both operands have a gradient.
  for (Shape x : {Shape{3, 4}, Shape{}}) {
    std::string body = "%y = tcc.scale_by %x, %factor : (" + ty(x) +
                       ", tensor<f32>) -> " + ty(x);
    c.push_back({x.empty() ? "ScaleByScalar" : "ScaleBy", "tcc.scale_by",
                 {{"x", x}, {"factor", {}, Role::Diff, Dist::Positive}}, body, x});
  }
  // Pooling: overlapping windows, padding, rectangular windows, inputs no
  // window reaches (floor mode).
  c.push_back(maxPool("MaxPool2x2Stride2", {2, 2, 4, 5}, {2, 2}, {2, 2}, {0, 0}));
  c.push_back(maxPool("MaxPool3x3Stride2Pad1", {2, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}));
  c.push_back(maxPool("MaxPool3x3Stride1Pad1", {1, 2, 4, 5}, {3, 3}, {1, 1}, {1, 1}));
  c.push_back(maxPool("MaxPool2x3Stride1x2Pad1", {1, 2, 5, 6}, {2, 3}, {1, 2}, {1, 1}));
  c.push_back(avgPool("AvgPool3x3Stride2Pad1IncludePad", {2, 2, 5, 5}, {3, 3}, {2, 2},
                      {1, 1}, true));
  c.push_back(avgPool("AvgPool3x3Stride2Pad1ExcludePad", {2, 2, 5, 5}, {3, 3}, {2, 2},
                      {1, 1}, false));
  c.push_back(avgPool("AvgPool3x3Stride1Pad1IncludePad", {1, 2, 4, 4}, {3, 3}, {1, 1},
                      {1, 1}, true));
  c.push_back(avgPool("AvgPool3x3Stride1Pad1ExcludePad", {1, 2, 4, 4}, {3, 3}, {1, 1},
                      {1, 1}, false));
  c.push_back(avgPool("AvgPool2x2Stride2IncludePad", {2, 2, 4, 5}, {2, 2}, {2, 2},
                      {0, 0}, true));
  c.push_back(avgPool("AvgPool2x3Stride1x2Pad1ExcludePad", {1, 2, 5, 6}, {2, 3},
                      {1, 2}, {1, 1}, false));
  c.push_back(avgPool("AvgPool2x3Stride1x2Pad1IncludePad", {1, 2, 5, 6}, {2, 3},
                      {1, 2}, {1, 1}, true));
  c.push_back(globalPool("GlobalAvgPool", "global_avg_pool", {2, 3, 3, 4},
                         Dist::Uniform));
  c.push_back(globalPool("GlobalMaxPool", "global_max_pool", {2, 3, 3, 4},
                         Dist::Distinct));
  // Binary ops, also with one value as both operands (gradients add up).
  c.push_back(binary("Add", "add", {3, 4}, false));
  c.push_back(binary("AddSameOperand", "add", {3, 4}, true));
  c.push_back(binary("Mul", "mul", {2, 3, 2}, false));
  c.push_back(binary("MulSameOperand", "mul", {3, 4}, true));
  c.push_back(channelMul("ChannelMul", {2, 3, 2, 3}));
  c.push_back(channelMul("ChannelMulRank3", {3, 2, 5}));
  // Shape ops.
  c.push_back(concat("ConcatAxis1", {{2, 3, 2, 2}, {2, 1, 2, 2}, {2, 2, 2, 2}}, 1));
  c.push_back(concat("ConcatAxis3", {{2, 2, 2, 3}, {2, 2, 2, 1}}, 3));
  c.push_back(concat("ConcatAxis0", {{2, 3}, {1, 3}}, 0));
  c.push_back(padChannels("PadChannels", {2, 3, 2, 2}, 8));
  c.push_back(padChannels("PadChannelsRank2", {2, 3}, 5));
  c.push_back(flatten("Flatten4d", {2, 3, 2, 2}));
  c.push_back(reshape("Reshape2dTo3d", {2, 12}, {2, 4, 3}));
  c.push_back(reshape("Reshape3dTo2d", {2, 3, 4}, {6, 4}));
  c.push_back(transpose("TransposeNchwToNhwc", {2, 3, 2, 4}, {0, 2, 3, 1}));
  c.push_back(transpose("Transpose3d201", {2, 3, 4}, {2, 0, 1}));
  // Slices: a middle range, the class token (offset 0, size 1), the last
  // axis (q, k, v of a fused projection), a range that ends at the end.
  c.push_back(slice("SliceTokensMiddle", {2, 5, 3}, 1, 1, 3));
  c.push_back(slice("SliceClassToken", {2, 5, 3}, 1, 0, 1));
  c.push_back(slice("SliceLastAxis", {2, 3, 6}, 2, 2, 2));
  c.push_back(slice("SliceToEnd4d", {2, 4, 2, 3}, 1, 2, 2));
  c.push_back(castSame("CastF32ToF32", {3, 4}));
  // Token embeddings: repeated ids summed; the padding row gets zero (its
  // finite difference is 0 only if the rule leaves it out).
  c.push_back(embedding("Embedding", {2, 5}, 4, 3, -1));
  c.push_back(embedding("EmbeddingPaddingIdx", {3, 4}, 3, 2, 1));
  // Products of two activations: each transposition, a 4-d batch (heads).
  c.push_back(matmul("Matmul3d", {2}, 3, 4, 5, false, false));
  c.push_back(matmul("Matmul3dTransposeB", {2}, 3, 4, 5, false, true));
  c.push_back(matmul("Matmul3dTransposeA", {2}, 3, 4, 5, true, false));
  c.push_back(matmul("Matmul3dTransposeBoth", {2}, 3, 4, 5, true, true));
  c.push_back(matmul("Matmul4dHeads", {2, 3}, 4, 2, 4, false, true));
  // Expansion (a parameter over the batch, the gradient of a sum) and
  // sums over the axes of a mean.
  c.push_back(expand("ExpandBatch", {1, 2, 3}, 0, 4));
  c.push_back(expand("ExpandMiddle", {2, 1, 3}, 1, 5));
  c.push_back(reduceSum("ReduceSumTokens", {2, 4, 3}, {1}));
  c.push_back(reduceSum("ReduceSumLast", {2, 3, 4}, {2}));
  c.push_back(reduceSum("ReduceSumTwoAxes", {2, 3, 2, 2}, {0, 2}));
  // Dropout: linear for a fixed seed (the mask is recomputed).
  c.push_back(dropout("DropoutP0p3", {4, 6}, 0.3, 2));
  c.push_back(dropout("DropoutP0p5Stream0", {3, 5}, 0.5, 0));
  // Probabilities.
  c.push_back(softmaxLike("SoftmaxAxis1", "softmax", {3, 5}, 1));
  c.push_back(softmaxLike("SoftmaxAxis1Inner4", "softmax", {2, 3, 2, 2}, 1));
  c.push_back(softmaxLike("SoftmaxLastAxis", "softmax", {2, 3, 4}, 2));
  c.push_back(softmaxLike("LogSoftmaxAxis1", "log_softmax", {3, 5}, 1));
  c.push_back(softmaxLike("LogSoftmaxAxis1Inner4", "log_softmax", {2, 3, 2, 2}, 1));
  c.push_back(softmaxLike("LogSoftmaxLastAxis", "log_softmax", {2, 3, 4}, 2));
  // Attention: one and several heads, causal or not, more or fewer keys
  // than queries (causal: PyTorch's top-left mask), a value head width of
  // its own, dropout on the probabilities (the backward must draw the
  // forward's mask).
  c.push_back(attention("AttentionOneHead", 2, 3, 3, 1, 4, 4, false));
  c.push_back(attention("AttentionHeads3", 2, 4, 4, 3, 2, 2, false));
  c.push_back(attention("AttentionHeads2Causal", 2, 4, 4, 2, 3, 3, true));
  c.push_back(attention("AttentionCrossTq3Tk5", 1, 3, 5, 2, 3, 3, false));
  c.push_back(attention("AttentionCrossTq5Tk3Causal", 1, 5, 3, 2, 2, 2, true));
  c.push_back(attention("AttentionValueWidth5", 2, 3, 4, 2, 3, 5, false));
  c.push_back(attention("AttentionDropout0p3", 2, 4, 5, 2, 3, 3, false, 0.3, 1));
  c.push_back(attention("AttentionDropout0p5Causal", 1, 5, 5, 2, 2, 2, true, 0.5, 0));
  // Losses.
  c.push_back(crossEntropy("CrossEntropyMean", 4, 5, 0.0, "mean"));
  c.push_back(crossEntropy("CrossEntropySmoothing0p2Mean", 4, 5, 0.2, "mean"));
  c.push_back(crossEntropy("CrossEntropySum", 4, 5, 0.0, "sum"));
  c.push_back(crossEntropy("CrossEntropySmoothing0p1Sum", 3, 6, 0.1, "sum"));
  c.push_back(tokenCrossEntropy("TokenCrossEntropyIgnoreMean", 2, 5, 3, 1, 0.0, "mean"));
  c.push_back(tokenCrossEntropy("TokenCrossEntropyNoneIgnored", 2, 3, 4, -100, 0.0, "mean"));
  c.push_back(tokenCrossEntropy("TokenCrossEntropyIgnoreSmoothingSum", 2, 4, 3, 0, 0.1, "sum"));
  c.push_back(mseLoss("MseLossMean", {3, 4}, "mean"));
  c.push_back(mseLoss("MseLossSum", {2, 3, 2}, "sum"));

  // Compositions: fan-out (gradient accumulation) and a small network.
  {
    Shape x{3, 4};
    std::string body = "%t = tcc.tanh %x : " + ty(x) +
                       "\n  %s = tcc.mul %t, %x : " + ty(x) + ", " + ty(x) +
                       "\n  %y = tcc.add %s, %x : " + ty(x) + ", " + ty(x);
    c.push_back({"ComposedFanOut", "", {{"x", x}}, body, x});
  }
  {
    // conv -> batch_norm -> silu -> avg_pool -> flatten -> linear ->
    // cross_entropy (no kinks anywhere).
    std::vector<Arg> args{{"x", {4, 2, 4, 4}},
                          {"w", {3, 2, 3, 3}},
                          {"cb", {3}},
                          {"g", {3}},
                          {"b", {3}},
                          {"rm", {3}, Role::Stat},
                          {"rv", {3}, Role::Stat, Dist::Positive},
                          {"lw", {5, 12}},
                          {"lb", {5}},
                          {"labels", {4}, Role::Labels, Dist::Uniform, 5}};
    std::string body =
        "%c = tcc.conv2d %x, %w, %cb {dilation = array<i64: 1, 1>, groups = 1 : i64, "
        "padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<4x2x4x4xf32>, "
        "tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<4x3x4x4xf32>\n"
        "  %n, %m, %i, %nrm, %nrv = tcc.batch_norm %c weight %g bias %b running %rm, "
        "%rv {eps = 1.0e-05 : f64, ghost_batch = 2 : i64, momentum = 0.1 : f64} : "
        "(tensor<4x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
        "tensor<3xf32>) -> (tensor<4x3x4x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, "
        "tensor<3xf32>, tensor<3xf32>)\n"
        "  %a = tcc.silu %n : tensor<4x3x4x4xf32>\n"
        "  %p = tcc.avg_pool2d %a {count_include_pad = false, kernel = array<i64: 3, 3>, "
        "padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<4x3x4x4xf32>) "
        "-> tensor<4x3x2x2xf32>\n"
        "  %f = tcc.flatten %p : (tensor<4x3x2x2xf32>) -> tensor<4x12xf32>\n"
        "  %l = tcc.linear %f, %lw, %lb : (tensor<4x12xf32>, tensor<5x12xf32>, "
        "tensor<5xf32>) -> tensor<4x5xf32>\n"
        "  %y = tcc.cross_entropy %l, %labels {label_smoothing = 0.1 : f64, reduction = "
        "\"mean\"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>";
    c.push_back({"ComposedSmallConvNet", "", args, body, {}});
  }
  {
    // linear (rank 3) -> layer_norm -> gelu(tanh) -> transpose -> mse_loss.
    std::vector<Arg> args{{"x", {2, 3, 4}}, {"w", {5, 4}}, {"g", {5}}, {"b", {5}},
                          {"t", {2, 5, 3}}};
    std::string body =
        "%l = tcc.linear %x, %w : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> "
        "tensor<2x3x5xf32>\n"
        "  %n, %m, %i = tcc.layer_norm %l weight %g bias %b {eps = 1.0e-05 : f64, "
        "normalized_dims = 1 : i64} : (tensor<2x3x5xf32>, tensor<5xf32>, tensor<5xf32>) "
        "-> (tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>)\n"
        "  %a = tcc.gelu %n {approximate = \"tanh\"} : tensor<2x3x5xf32>\n"
        "  %p = tcc.transpose %a {perm = array<i64: 0, 2, 1>} : (tensor<2x3x5xf32>) -> "
        "tensor<2x5x3xf32>\n"
        "  %y = tcc.mse_loss %p, %t {reduction = \"mean\"} : (tensor<2x5x3xf32>, "
        "tensor<2x5x3xf32>) -> tensor<f32>";
    c.push_back({"ComposedLinearLayerNormGelu", "", args, body, {}});
  }
  return c;
}

//===----------------------------------------------------------------------===//
// Building, differentiating and running one case
//===----------------------------------------------------------------------===//

/// f(args..., %cotangent) -> tensor<f32>: sum(%y * %cotangent) (a product of
/// scalars for a loss op).
std::string functionText(const Case &c) {
  std::string s = "func.func @f(";
  for (const Arg &a : c.args)
    s += "%" + a.name + ": " + tyOf(a) + ", ";
  s += "%cotangent: " + ty(c.yShape) + ") -> tensor<f32> {\n  " + c.body + "\n";
  std::string t = ty(c.yShape);
  s += "  %weighted = tcc.mul %y, %cotangent : " + t + ", " + t + "\n";
  if (c.yShape.empty()) {
    s += "  return %weighted : tensor<f32>\n}\n";
    return s;
  }
  Shape all(c.yShape.size());
  std::iota(all.begin(), all.end(), 0);
  s += "  %loss = tcc.reduce_sum %weighted {axes = " + i64s(all) + "} : (" + t +
       ") -> tensor<f32>\n  return %loss : tensor<f32>\n}\n";
  return s;
}

void loadDialects(MLIRContext &ctx) {
  ctx.loadDialect<mlir::tcc::TccDialect, func::FuncDialect, arith::ArithDialect>();
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s)
    h = (h ^ ch) * 1099511628211ull;
  return h;
}

std::vector<double> sample(Dist dist, int64_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  switch (dist) {
  case Dist::Uniform:
    for (double &x : v)
      x = u(rng);
    break;
  case Dist::AwayFromZero: {
    std::uniform_real_distribution<double> mag(0.2, 2.5);
    for (double &x : v)
      x = (u(rng) < 0 ? -1.0 : 1.0) * mag(rng);
    break;
  }
  case Dist::Distinct: {
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t i = 0; i < n; ++i)
      v[i] = (double(perm[i]) - double(n) / 2) * 0.04 + 0.005 * u(rng);
    break;
  }
  case Dist::Positive:
    for (double &x : v)
      x = 1.0 + 0.5 * u(rng);
    break;
  }
  return v;
}

/// The element at flat index `i` of `shape`, as "[a, b, c]".
std::string coords(const Shape &shape, int64_t i) {
  Shape c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < c.size(); ++d)
    s += (d ? ", " : "") + std::to_string(c[d]);
  return s + "]";
}

const char *roleName(Role r) {
  switch (r) {
  case Role::Diff:
    return "float input";
  case Role::Stat:
    return "running statistic";
  case Role::Labels:
    return "label tensor";
  case Role::Seed:
    return "seed";
  case Role::Ids:
    return "token id tensor";
  }
  return "?";
}

/// Finite-difference settings and tolerance.
constexpr double kStep = 1e-4;    ///< relative to max(1, |x|)
constexpr double kRelTol = 1e-6;  ///< of max(|rule|, |finite difference|)
constexpr double kAbsTol = 1e-8;
/// Inputs with more elements are checked on a random subset of this size.
constexpr int64_t kMaxCheckedPerInput = 160;

/// |rule - numeric| in units of the tolerance: they agree when <= 1.
double errorRatio(double rule, double numeric) {
  return std::fabs(rule - numeric) /
         (kAbsTol + kRelTol * std::max(std::fabs(rule), std::fabs(numeric)));
}
bool agrees(double rule, double numeric) { return errorRatio(rule, numeric) <= 1; }

struct Report {
  std::string setupError;             ///< parse/autodiff/verify/run failures
  int64_t checkedElements = 0;        ///< gradient elements compared
  int64_t failureCount = 0;           ///< mismatches and missing/extra grads
  double worstError = 0;              ///< max |rule - numeric| / tolerance
  std::vector<std::string> failures;  ///< the first few, described
  std::string ir;                     ///< the differentiated function

  void fail(const std::string &what) {
    ++failureCount;
    if (failures.size() < 12)
      failures.push_back(what);
  }
  std::string describe() const {
    std::string s;
    for (const std::string &f : failures)
      s += "  " + f + "\n";
    if (failureCount > static_cast<int64_t>(failures.size()))
      s += "  ... and " + std::to_string(failureCount - failures.size()) + " more\n";
    return s + "differentiated function:\n" + ir;
  }
};

/// Optional corruption of the differentiated function (negative controls).
using Mutation = std::function<void(func::FuncOp)>;

Report checkCase(const Case &c, const Mutation &mutate = {},
                 const std::function<void(std::vector<Tensor> &)> &mutateGrads = {}) {
  Report report;
  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  loadDialects(ctx);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });

  const std::string text = functionText(c);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module) {
    report.setupError = "parse failed:\n" + diagnostics + text;
    return report;
  }
  auto f = module->lookupSymbol<func::FuncOp>("f");
  if (!c.op.empty()) {
    bool found = false;
    f.walk([&](Operation *op) { found |= op->getName().getStringRef() == c.op; });
    if (!found) {
      report.setupError = "the function does not use " + c.op + ":\n" + text;
      return report;
    }
  }
  // The forward function, kept for the finite differences.
  func::FuncOp fwd = f.clone();
  fwd.setName("fwd");
  module->push_back(fwd);

  // Gradients with respect to every argument but the cotangent.
  Block &block = f.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(0);
  // tcc.reduce_sum is a backward op without a rule of its own, so AD starts
  // from %weighted = %y * R: buildGradients seeds its loss with ones, which
  // for a non-scalar value is the gradient of the sum of its elements, i.e.
  // of %loss. Only the (separately checked) tcc.mul rule lies between the
  // loss and the op under test.
  Value seed = loss;
  if (auto sum = loss.getDefiningOp<mlir::tcc::ReduceSumOp>())
    seed = sum.getInput();
  SmallVector<Value> wrt;
  for (size_t i = 0; i < c.args.size(); ++i)
    wrt.push_back(block.getArgument(i));
  OpBuilder b(ret);
  FailureOr<SmallVector<Value>> grads = mlir::tcc::buildGradients(b, seed, wrt);
  if (failed(grads)) {
    report.setupError = "buildGradients failed:\n" + diagnostics + text;
    return report;
  }
  // Return the loss and every gradient.
  SmallVector<Value> returned{loss};
  std::vector<int> resultOf(c.args.size(), -1);
  for (size_t i = 0; i < c.args.size(); ++i) {
    Value g = (*grads)[i];
    if (!g)
      continue;
    resultOf[i] = static_cast<int>(returned.size());
    returned.push_back(g);
  }
  b.create<func::ReturnOp>(ret.getLoc(), returned);
  ret.erase();
  f.setFunctionType(
      FunctionType::get(&ctx, f.getArgumentTypes(), ValueRange(returned).getTypes()));
  if (mutate)
    mutate(f);
  {
    llvm::raw_string_ostream os(report.ir);
    f.print(os);
  }
  if (failed(verify(*module))) {
    report.setupError = "the differentiated module does not verify:\n" + diagnostics +
                        report.ir;
    return report;
  }

  // Which inputs get a gradient.
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Arg &a = c.args[i];
    bool has = resultOf[i] >= 0;
    if (a.role == Role::Diff && !has)
      report.fail("no gradient for %" + a.name);
    if (a.role != Role::Diff && has)
      report.fail("the rule gives a gradient to %" + a.name + " (a " +
                  roleName(a.role) + ")");
  }

  // Random inputs, the same for every run of the case.
  std::mt19937_64 rng(fnv1a(c.name));
  std::vector<Tensor> inputs;
  for (const Arg &a : c.args) {
    int64_t n = 1;
    for (int64_t d : a.shape)
      n *= d;
    if (a.role == Role::Labels) {
      std::uniform_int_distribution<int64_t> label(0, a.classes - 1);
      std::vector<int64_t> v(n);
      for (int64_t &l : v)
        l = label(rng);
      inputs.push_back(Tensor::ints(a.shape, v));
    } else if (a.role == Role::Seed) {
      inputs.push_back(Tensor::ints(a.shape, std::vector<int64_t>(n, 1234)));
    } else if (a.role == Role::Ids) {
      std::uniform_int_distribution<int64_t> id(0, a.classes - 1);
      std::vector<double> v(n);
      for (double &x : v)
        x = double(id(rng));
      inputs.push_back(Tensor::floats(a.shape, v));
    } else {
      inputs.push_back(Tensor::floats(a.shape, sample(a.dist, n, rng)));
    }
  }
  {
    int64_t n = 1;
    for (int64_t d : c.yShape)
      n *= d;
    inputs.push_back(Tensor::floats(c.yShape, sample(Dist::Uniform, n, rng)));
  }

  std::string error;
  std::vector<Tensor> results;
  if (!::tcc::test::interpret(f, inputs, results, error)) {
    report.setupError = error + "\n" + report.ir;
    return report;
  }
  if (mutateGrads)
    mutateGrads(results);
  auto lossAt = [&](const std::vector<Tensor> &in, double &value) {
    std::vector<Tensor> out;
    if (!::tcc::test::interpret(fwd, in, out, error))
      return false;
    value = out[0].f[0];
    return true;
  };
  double base = 0;
  if (!lossAt(inputs, base)) {
    report.setupError = error;
    return report;
  }
  if (!agrees(results[0].f[0], base))
    report.fail("the differentiated function's loss " + std::to_string(results[0].f[0]) +
                " differs from the forward function's " + std::to_string(base));

  // Each float input: gradient vs finite differences.
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Arg &a = c.args[i];
    if (a.role == Role::Labels || a.role == Role::Seed || a.role == Role::Ids)
      continue;
    if (a.role == Role::Diff && resultOf[i] < 0)
      continue; // reported above
    const int64_t n = inputs[i].numElements();
    std::vector<double> rule(n, 0.0); // a running statistic: no gradient
    if (resultOf[i] >= 0) {
      const Tensor &g = results[resultOf[i]];
      if (g.isInt || g.numElements() != n ||
          Shape(g.shape.begin(), g.shape.end()) != a.shape) {
        report.fail("the gradient of %" + a.name + " does not have its shape");
        continue;
      }
      rule = g.f;
    }
    // Every element of small inputs; a fixed random subset of large ones.
    std::vector<int64_t> elements(n);
    std::iota(elements.begin(), elements.end(), 0);
    if (n > kMaxCheckedPerInput) {
      std::shuffle(elements.begin(), elements.end(), rng);
      elements.resize(kMaxCheckedPerInput);
      std::sort(elements.begin(), elements.end());
    }
    std::vector<Tensor> probe = inputs;
    for (int64_t j : elements) {
      const double x = inputs[i].f[j];
      const double h = kStep * std::max(1.0, std::fabs(x));
      double at[4];
      const double offsets[4] = {-2 * h, -h, h, 2 * h};
      for (int s = 0; s < 4; ++s) {
        probe[i].f[j] = x + offsets[s];
        if (!lossAt(probe, at[s])) {
          report.setupError = error;
          return report;
        }
      }
      probe[i].f[j] = x;
      double numeric = (at[0] - 8 * at[1] + 8 * at[2] - at[3]) / (12 * h);
      const int64_t row = a.shape.empty() ? 0 : j / (n / a.shape[0]);
      if (llvm::is_contained(c.frozenRows, std::pair<size_t, int64_t>{i, row})) {
        // The case must reach the frozen row, or the check proves nothing.
        if (numeric == 0)
          report.fail("%" + a.name + coords(a.shape, j) +
                      " is frozen but the output does not read it; draw other inputs");
        numeric = 0;
      }
      ++report.checkedElements;
      report.worstError = std::max(report.worstError, errorRatio(rule[j], numeric));
      if (!agrees(rule[j], numeric)) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "d loss / d %%%s%s: rule %.12g, finite differences %.12g "
                      "(difference %.3g)",
                      a.name.c_str(), coords(a.shape, j).c_str(), rule[j], numeric,
                      rule[j] - numeric);
        report.fail(buf);
      }
    }
  }
  return report;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

class GradientRule : public ::testing::TestWithParam<Case> {};

TEST_P(GradientRule, MatchesFiniteDifferences) {
  const Case &c = GetParam();
  Report r = checkCase(c);
  ASSERT_TRUE(r.setupError.empty()) << c.name << ": " << r.setupError;
  RecordProperty("checked_elements", std::to_string(r.checkedElements));
  RecordProperty("worst_error_in_tolerances", std::to_string(r.worstError));
  EXPECT_GT(r.checkedElements, 0);
  EXPECT_EQ(r.failureCount, 0) << c.name << " (" << (c.op.empty() ? "composition" : c.op)
                               << "): " << r.failureCount << " of "
                               << r.checkedElements << " gradient elements wrong:\n"
                               << r.describe();
}

INSTANTIATE_TEST_SUITE_P(AllOps, GradientRule, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

/// Every op that declares a gradient rule has at least one configuration.
TEST(GradientRuleCoverage, EveryDifferentiableOpIsTested) {
  MLIRContext ctx;
  loadDialects(ctx);
  std::set<std::string> tested, names;
  for (const Case &c : allCases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name " << c.name;
    if (!c.op.empty())
      tested.insert(c.op);
  }
  int differentiable = 0;
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "tcc" ||
        !name.hasInterface<mlir::tcc::DifferentiableOpInterface>())
      continue;
    ++differentiable;
    EXPECT_TRUE(tested.count(name.getStringRef().str()))
        << name.getStringRef().str()
        << " implements DifferentiableOpInterface but has no gradient test case";
  }
  // The 29 ops with rules when this test was written; more is fine.
  EXPECT_GE(differentiable, 29);
}

/// Integer operands of the shape ops that also take floats get no gradient
/// (rules only: the interpreter does not run casts between types).
TEST(GradientRuleNoGradient, IntegerOperandsOfCastAndConcat) {
  MLIRContext ctx;
  loadDialects(ctx);
  const char *text = R"mlir(
func.func @f(%u: tensor<2x3xui8>, %i: tensor<2x3xi64>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = tcc.cast %u to f32 : (tensor<2x3xui8>) -> tensor<2x3xf32>
  %j = tcc.concat %i, %i {axis = 0 : i64} : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<4x3xi64>
  %k = tcc.slice %j {axis = 0 : i64, offset = 1 : i64, size = 2 : i64} : (tensor<4x3xi64>) -> tensor<2x3xi64>
  %d = tcc.cast %k to f32 : (tensor<2x3xi64>) -> tensor<2x3xf32>
  %e = tcc.mul %c, %d : tensor<2x3xf32>, tensor<2x3xf32>
  %y = tcc.mul %e, %x : tensor<2x3xf32>, tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  OpBuilder b(ret);
  FailureOr<SmallVector<Value>> grads = mlir::tcc::buildGradients(
      b, ret.getOperand(0), SmallVector<Value>(f.getArguments()));
  ASSERT_TRUE(succeeded(grads));
  EXPECT_FALSE((*grads)[0]) << "a gradient for the ui8 operand of tcc.cast";
  EXPECT_FALSE((*grads)[1]) << "a gradient for the i64 operands of tcc.concat";
  EXPECT_TRUE((*grads)[2]);
  // The rules on the way must not have built ops on integer tensors
  // either: the differentiated function still verifies.
  b.create<func::ReturnOp>(ret.getLoc(), ret.getOperands());
  ret.erase();
  EXPECT_TRUE(succeeded(verify(*module)));
}

//===----------------------------------------------------------------------===//
// Negative controls: the check must fail when a rule is wrong
//===----------------------------------------------------------------------===//

/// Finds the case called `name`.
Case caseNamed(const std::string &name) {
  for (const Case &c : allCases())
    if (c.name == name)
      return c;
  ADD_FAILURE() << "no case " << name;
  return {};
}

/// The check must report the corruption (and nothing must break before it).
void expectCaught(const Report &r) {
  ::testing::Test::RecordProperty("wrong_elements", std::to_string(r.failureCount));
  EXPECT_GT(r.failureCount, 0) << "a corrupted gradient passed the check:\n"
                               << r.ir;
}

/// Sets attribute `attr` of every `opName` op of the function.
Mutation setAttr(const std::string &opName, const std::string &attr,
                 std::function<Attribute(Builder &)> value) {
  return [=](func::FuncOp f) {
    Builder b(f.getContext());
    f.walk([&](Operation *op) {
      if (op->getName().getStringRef() == opName)
        op->setAttr(attr, value(b));
    });
  };
}

TEST(GradientRuleNegativeControl, WrongLeakyReluSlopeIsCaught) {
  Report r = checkCase(caseNamed("LeakyReluSlope0p1"),
                       setAttr("tcc.leaky_relu_backward", "negative_slope",
                               [](Builder &b) { return b.getF64FloatAttr(0.1001); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, GeluTanhDerivativeForExactGeluIsCaught) {
  Report r = checkCase(caseNamed("GeluNone"),
                       setAttr("tcc.gelu_backward", "approximate",
                               [](Builder &b) { return b.getStringAttr("tanh"); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, WrongAvgPoolDivisorIsCaught) {
  Report r = checkCase(caseNamed("AvgPool3x3Stride2Pad1ExcludePad"),
                       setAttr("tcc.avg_pool2d_backward", "count_include_pad",
                               [](Builder &b) { return b.getBoolAttr(true); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, WrongSliceBackwardOffsetIsCaught) {
  Report r = checkCase(caseNamed("SliceTokensMiddle"),
                       setAttr("tcc.slice_backward", "offset",
                               [](Builder &b) { return b.getI64IntegerAttr(2); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, EmbeddingBackwardWithoutPaddingIdxIsCaught) {
  Report r = checkCase(caseNamed("EmbeddingPaddingIdx"),
                       setAttr("tcc.embedding_backward", "padding_idx",
                               [](Builder &b) { return b.getI64IntegerAttr(-1); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}
TEST(GradientRuleNegativeControl, TokenLossBackwardWithoutIgnoreIndexIsCaught) {
  Report r = checkCase(caseNamed("TokenCrossEntropyIgnoreMean"),
                       setAttr("tcc.token_cross_entropy_backward", "ignore_index",
                               [](Builder &b) { return b.getI64IntegerAttr(-100); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}
TEST(GradientRuleNegativeControl, WrongLabelSmoothingIsCaught) {
  Report r = checkCase(caseNamed("CrossEntropySmoothing0p2Mean"),
                       setAttr("tcc.cross_entropy_backward", "label_smoothing",
                               [](Builder &b) { return b.getF64FloatAttr(0.0); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, WrongDropoutStreamIsCaught) {
  // The backward must recompute the forward's mask.
  Report r = checkCase(caseNamed("DropoutP0p3"), [](func::FuncOp f) {
    bool forward = true;
    f.walk([&](mlir::tcc::DropoutOp op) {
      if (!forward)
        op.setStream(op.getStream() + 1);
      forward = false;
    });
  });
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, AttentionBackwardWithAnotherMaskIsCaught) {
  // The backward must draw the forward's dropout mask.
  Report r = checkCase(caseNamed("AttentionDropout0p3"),
                       setAttr("tcc.scaled_dot_product_attention_backward", "stream",
                               [](Builder &b) { return b.getI64IntegerAttr(2); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, AttentionBackwardWithoutCausalMaskIsCaught) {
  Report r = checkCase(caseNamed("AttentionHeads2Causal"),
                       setAttr("tcc.scaled_dot_product_attention_backward", "causal",
                               [](Builder &b) { return b.getBoolAttr(false); }));
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  expectCaught(r);
}

TEST(GradientRuleNegativeControl, SmallErrorInOneGradientElementIsCaught) {
  // A relative error of 1e-5 in one element of the conv weight gradient.
  Report r = checkCase(caseNamed("ConvGroups2Bias"), {},
                       [](std::vector<Tensor> &results) {
                         results[2].f[7] *= 1.0 + 1e-5;
                       });
  ASSERT_TRUE(r.setupError.empty()) << r.setupError;
  EXPECT_EQ(r.failureCount, 1);
}

} // namespace
