//===- PoolOps.cpp - Pooling on the cpu -----------------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// A global pool's [n, c, h * w] planes, as the kernels take them.
std::string planes(ArrayRef<int64_t> nchw) { return cpp(kernel_args::around(nchw, /*axis=*/1)); }

} // namespace

void mlir::tcc::registerCpuPoolOps(CpuOpPrinters &t) {
  t.add<MaxPool2dOp>([](MaxPool2dOp o, CpuPrinter &p) {
    p.os << "  max_pool2d_forward<float>(" << cpp(kernel_args::pool2d(o)) << ", " << p(o.getInput())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<MaxPool2dBackwardOp>([](MaxPool2dBackwardOp o, CpuPrinter &p) {
    p.os << "  max_pool2d_backward<float>(" << cpp(kernel_args::pool2d(o)) << ", "
         << p(o.getInput()) << ", " << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<AvgPool2dOp>([](AvgPool2dOp o, CpuPrinter &p) {
    p.os << "  avg_pool2d_forward<float>(" << cpp(kernel_args::pool2d(o)) << ", "
         << (o.getCountIncludePad() ? "true" : "false") << ", " << p(o.getInput()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<AvgPool2dBackwardOp>([](AvgPool2dBackwardOp o, CpuPrinter &p) {
    p.os << "  avg_pool2d_backward<float>(" << cpp(kernel_args::pool2d(o)) << ", "
         << (o.getCountIncludePad() ? "true" : "false") << ", " << p(o.getGrad()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<GlobalAvgPoolOp, GlobalMaxPoolOp>([](auto o, CpuPrinter &p) {
    p.os << "  global_" << (isa<GlobalAvgPoolOp>(o.getOperation()) ? "avg" : "max")
         << "_pool_forward<float>(" << planes(dimsOf(o.getInput())) << ", " << p(o.getInput())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<GlobalAvgPoolBackwardOp>([](GlobalAvgPoolBackwardOp o, CpuPrinter &p) {
    p.os << "  global_avg_pool_backward<float>(" << planes(o.getInputShape()) << ", "
         << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<GlobalMaxPoolBackwardOp>([](GlobalMaxPoolBackwardOp o, CpuPrinter &p) {
    p.os << "  global_max_pool_backward<float>(" << planes(dimsOf(o.getInput())) << ", "
         << p(o.getInput()) << ", " << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
