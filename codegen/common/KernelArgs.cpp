//===- KernelArgs.cpp - An op's kernel arguments, built once --------------===//

#include "codegen/common/KernelArgs.h"

#include "codegen/common/Emitter.h"
#include "ir/PhysicalLayout.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::kernel_args;

namespace {

ArrayRef<int64_t> dims(Value v) { return cast<ShapedType>(v.getType()).getShape(); }

int64_t product(ArrayRef<int64_t> values) {
  int64_t p = 1;
  for (int64_t v : values)
    p *= v;
  return p;
}

k::Conv2dShape conv(ArrayRef<int64_t> in, ArrayRef<int64_t> w, ArrayRef<int64_t> stride,
                    ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation, int64_t groups) {
  return k::make_conv2d_shape(in[0], in[1], in[2], in[3], w[0], w[2], w[3], stride[0],
                              stride[1], padding[0], padding[1], dilation[0], dilation[1],
                              groups);
}

k::Pool2dShape pool(ArrayRef<int64_t> in, ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                    ArrayRef<int64_t> padding) {
  return k::make_pool2d_shape(in[0], in[1], in[2], in[3], kernel[0], kernel[1], stride[0],
                              stride[1], padding[0], padding[1]);
}

/// An NHWC input (tcc-channels-last) is [n*h*w, C] to the kernels: the
/// same statistics over the same elements, each pixel a row and each
/// sample h*w consecutive rows.
k::BatchNormShape norm(Value input, int64_t ghost, bool strided = false) {
  ArrayRef<int64_t> in = dims(input);
  const int64_t hw = product(in.drop_front(2));
  if (isChannelsLast(input))
    return k::BatchNormShape{in[0] * hw, in[1], 1, ghost * hw, strided, hw};
  return k::BatchNormShape{in[0], in[1], hw, ghost, strided};
}

} // namespace

k::Conv2dShape kernel_args::conv2d(Conv2dOp o) {
  return conv(dims(o.getInput()), dims(o.getWeight()), o.getStride(), o.getPadding(),
              o.getDilation(), o.getGroups());
}
k::Conv2dShape kernel_args::conv2d(Conv2dBackwardDataOp o) {
  return conv(o.getInputShape(), dims(o.getWeight()), o.getStride(), o.getPadding(),
              o.getDilation(), o.getGroups());
}
k::Conv2dShape kernel_args::conv2d(Conv2dBackwardFilterOp o) {
  return conv(dims(o.getInput()), dims(o.getResult()), o.getStride(), o.getPadding(),
              o.getDilation(), o.getGroups());
}

k::Pool2dShape kernel_args::pool2d(MaxPool2dOp o) {
  return pool(dims(o.getInput()), o.getKernel(), o.getStride(), o.getPadding());
}
k::Pool2dShape kernel_args::pool2d(MaxPool2dBackwardOp o) {
  return pool(dims(o.getInput()), o.getKernel(), o.getStride(), o.getPadding());
}
k::Pool2dShape kernel_args::pool2d(AvgPool2dOp o) {
  return pool(dims(o.getInput()), o.getKernel(), o.getStride(), o.getPadding());
}
k::Pool2dShape kernel_args::pool2d(AvgPool2dBackwardOp o) {
  return pool(o.getInputShape(), o.getKernel(), o.getStride(), o.getPadding());
}

k::BatchNormShape kernel_args::batchNorm(BatchNormOp o) {
  return norm(o.getInput(), o.getGhostBatch(), o.getGhostStrided());
}
k::BatchNormShape kernel_args::batchNorm(BatchNormInferenceOp o) {
  return norm(o.getInput(), 0);
}
k::BatchNormShape kernel_args::batchNorm(BatchNormBackwardOp o) {
  return norm(o.getInput(), o.getGhostBatch(), o.getGhostStrided());
}
k::BatchNormShape kernel_args::batchNorm(BatchNormApplyOp o) {
  return norm(o.getInput(), o.getGhostBatch(), o.getGhostStrided());
}
// A synchronised batch norm's parts: whole-batch norms.
k::BatchNormShape kernel_args::batchNorm(BatchNormSumsOp o) { return norm(o.getInput(), 0); }
k::BatchNormShape kernel_args::batchNorm(BatchNormBackwardSumsOp o) {
  return norm(o.getInput(), 0);
}
k::BatchNormShape kernel_args::batchNorm(BatchNormBackwardInputOp o) {
  return norm(o.getInput(), 0);
}

namespace {
k::AttentionShape attentionOf(Value query, Value value, int64_t heads, bool causal,
                              const APFloat &scale) {
  ArrayRef<int64_t> q = dims(query), v = dims(value);
  return {q[0], heads, q[1], v[1], q[2] / heads, v[2] / heads, causal,
          scale.convertToDouble()};
}
} // namespace

k::AttentionShape kernel_args::attention(ScaledDotProductAttentionOp op) {
  return attentionOf(op.getQuery(), op.getValue(), op.getHeads(), op.getCausal(),
                     op.getScale());
}

k::AttentionShape kernel_args::attention(ScaledDotProductAttentionBackwardOp op) {
  return attentionOf(op.getQuery(), op.getValue(), op.getHeads(), op.getCausal(),
                     op.getScale());
}

Around kernel_args::around(ArrayRef<int64_t> dims, int64_t axis) {
  return {product(dims.take_front(axis)), dims[axis], product(dims.drop_front(axis + 1))};
}

std::optional<Around> kernel_args::keptAxis(ReduceSumOp op) {
  ArrayRef<int64_t> in = cast<RankedTensorType>(op.getInput().getType()).getShape();
  ArrayRef<int64_t> axes = op.getAxes();
  if (axes.size() + 1 != in.size())
    return std::nullopt;
  int64_t keep = 0;
  while (llvm::is_contained(axes, keep))
    ++keep;
  // An NHWC tensor summed to its channels: [n*h*w, C, 1].
  if (keep == 1 && isChannelsLast(op.getInput()))
    return Around{in[0] * in[2] * in[3], in[1], 1};
  return around(in, keep);
}

std::string kernel_args::cpp(const k::Conv2dShape &s) {
  std::string out = "make_conv2d_shape(";
  for (int64_t v : {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw})
    out += std::to_string(v) + ", ";
  return out + std::to_string(s.groups) + ")";
}

std::string kernel_args::cpp(const k::Pool2dShape &s) {
  std::string out = "make_pool2d_shape(";
  for (int64_t v : {s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph})
    out += std::to_string(v) + ", ";
  return out + std::to_string(s.pw) + ")";
}

std::string kernel_args::cpp(const k::BatchNormShape &s) {
  std::string tail = s.rows_per_sample != 1
                         ? std::string(s.strided ? ", true, " : ", false, ") +
                               std::to_string(s.rows_per_sample)
                         : std::string(s.strided ? ", true" : "");
  return "BatchNormShape{" + std::to_string(s.n) + ", " + std::to_string(s.c) + ", " +
         std::to_string(s.hw) + ", " + std::to_string(s.ghost) + tail + "}";
}

std::string kernel_args::cpp(const Around &a) {
  return std::to_string(a.outer) + ", " + std::to_string(a.axis) + ", " +
         std::to_string(a.inner);
}

std::string kernel_args::cpp(const k::AttentionShape &s) {
  std::string out = "AttentionShape{";
  for (int64_t v : {s.n, s.heads, s.tq, s.tk, s.d, s.dv})
    out += std::to_string(v) + ", ";
  return out + (s.causal ? "true, " : "false, ") + cppDouble(s.scale) + "}";
}
