//===- PoolOps.cpp - Pooling on the GPU -----------------------------------===//
//
// runtime/cuda/device/Pool.cuh: the cpu kernels' per-plane functions, one
// thread per plane.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/PhysicalLayout.h"

#include <optional>

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// cuda::KERNEL<T>(stream, shape, channels last, [count_include_pad,] args).
/// Max pools run in the tensors' stored type (a 16-bit one as half::F16 /
/// BF16: they select an element, and sum the backward's in f32); the other
/// pools in f32.
LogicalResult printPool(Operation *op, CudaPrinter &p, StringRef kernel, StringRef shape,
                        ArrayRef<Value> args, std::optional<bool> countIncludePad = std::nullopt) {
  bool stored = isa<MaxPool2dOp, MaxPool2dBackwardOp>(op);
  // The pool's input and output share a layout (tcc-channels-last); one
  // of them may be the same bytes in both ([n, c, 1, 1]).
  p.os << "  cuda::" << kernel << "<"
       << (stored ? updateElementType(op->getResult(0)) : std::string("float")) << ">(args.stream, "
       << shape << ", " << (touchesChannelsLast(op) ? "true" : "false");
  if (countIncludePad)
    p.os << ", " << (*countIncludePad ? "true" : "false");
  for (Value v : args)
    p.os << ", " << (stored ? updatePointer(p.e, v, v) : p(v));
  p.os << ");\n";
  return success();
}

/// A global pool's [n, c, h * w] planes, as the kernels take them.
std::string planes(ArrayRef<int64_t> nchw) { return cpp(kernel_args::around(nchw, /*axis=*/1)); }

} // namespace

void mlir::tcc::registerCudaPoolOps(CudaOpPrinters &t) {
  t.add<MaxPool2dOp>([](MaxPool2dOp o, CudaPrinter &p) {
    return printPool(o, p, "max_pool2d_forward", cpp(kernel_args::pool2d(o)),
                     {o.getInput(), o.getResult()});
  });
  t.add<MaxPool2dBackwardOp>([](MaxPool2dBackwardOp o, CudaPrinter &p) {
    return printPool(o, p, "max_pool2d_backward", cpp(kernel_args::pool2d(o)),
                     {o.getInput(), o.getGrad(), o.getResult()});
  });
  t.add<AvgPool2dOp>([](AvgPool2dOp o, CudaPrinter &p) {
    return printPool(o, p, "avg_pool2d_forward", cpp(kernel_args::pool2d(o)),
                     {o.getInput(), o.getResult()}, o.getCountIncludePad());
  });
  t.add<AvgPool2dBackwardOp>([](AvgPool2dBackwardOp o, CudaPrinter &p) {
    return printPool(o, p, "avg_pool2d_backward", cpp(kernel_args::pool2d(o)),
                     {o.getGrad(), o.getResult()}, o.getCountIncludePad());
  });
  t.add<GlobalAvgPoolOp>([](GlobalAvgPoolOp o, CudaPrinter &p) {
    return printPool(o, p, "global_avg_pool_forward", planes(dimsOf(o.getInput())),
                     {o.getInput(), o.getResult()});
  });
  t.add<GlobalMaxPoolOp>([](GlobalMaxPoolOp o, CudaPrinter &p) {
    return printPool(o, p, "global_max_pool_forward", planes(dimsOf(o.getInput())),
                     {o.getInput(), o.getResult()});
  });
  t.add<GlobalAvgPoolBackwardOp>([](GlobalAvgPoolBackwardOp o, CudaPrinter &p) {
    return printPool(o, p, "global_avg_pool_backward", planes(o.getInputShape()),
                     {o.getGrad(), o.getResult()});
  });
  t.add<GlobalMaxPoolBackwardOp>([](GlobalMaxPoolBackwardOp o, CudaPrinter &p) {
    return printPool(o, p, "global_max_pool_backward", planes(dimsOf(o.getInput())),
                     {o.getInput(), o.getGrad(), o.getResult()});
  });
}
