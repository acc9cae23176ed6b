//===- ContractionOps.cpp - Convolutions and linear layers on the cpu -----===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

void mlir::tcc::registerCpuContractionOps(CpuOpPrinters &t) {
  t.add<Conv2dOp>([](Conv2dOp o, CpuPrinter &p) {
    p.os << "  conv2d_forward<float>(" << cpp(kernel_args::conv2d(o)) << ", " << p(o.getInput())
         << ", " << p(o.getWeight()) << ", " << p.opt(o.getBias()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<Conv2dBackwardDataOp>([](Conv2dBackwardDataOp o, CpuPrinter &p) {
    p.os << "  conv2d_backward_data<float>(" << cpp(kernel_args::conv2d(o)) << ", "
         << p(o.getGrad()) << ", " << p(o.getWeight()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<Conv2dBackwardFilterOp>([](Conv2dBackwardFilterOp o, CpuPrinter &p) {
    p.os << "  conv2d_backward_filter<float>(" << cpp(kernel_args::conv2d(o)) << ", "
         << p(o.getInput()) << ", " << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<LinearOp>([](LinearOp o, CpuPrinter &p) {
    ArrayRef<int64_t> in = dimsOf(o.getInput());
    p.os << "  linear_forward<float>(" << product(in.drop_back()) << ", " << in.back() << ", "
         << dimsOf(o.getWeight())[0] << ", " << p(o.getInput()) << ", " << p(o.getWeight()) << ", "
         << p.opt(o.getBias()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<MatmulOp>([](MatmulOp o, CpuPrinter &p) {
    if (!cast<ShapedType>(o.getType()).getElementType().isF32())
      return cpuCannotRun(o);
    ArrayRef<int64_t> a = dimsOf(o.getLhs()), c = dimsOf(o.getResult());
    int64_t m = c[c.size() - 2], n = c.back();
    p.os << "  batched_matmul<float>(" << product(c.drop_back(2)) << ", " << m << ", "
         << numElements(o.getLhs()) / product(a.drop_back(2)) / m << ", " << n << ", "
         << (o.getTransposeA() ? "true" : "false") << ", "
         << (o.getTransposeB() ? "true" : "false") << ", " << p(o.getLhs()) << ", "
         << p(o.getRhs()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<LinearBackwardDataOp>([](LinearBackwardDataOp o, CpuPrinter &p) {
    ArrayRef<int64_t> w = dimsOf(o.getWeight());
    p.os << "  linear_backward_data<float>(" << numElements(o.getGrad()) / w[0] << ", " << w[1]
         << ", " << w[0] << ", " << p(o.getGrad()) << ", " << p(o.getWeight()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<LinearBackwardWeightOp>([](LinearBackwardWeightOp o, CpuPrinter &p) {
    ArrayRef<int64_t> w = dimsOf(o.getResult());
    p.os << "  linear_backward_weight<float>(" << numElements(o.getGrad()) / w[0] << ", " << w[1]
         << ", " << w[0] << ", " << p(o.getGrad()) << ", " << p(o.getInput()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
}
