//===- ContractionOps.cpp - Convolutions, linear layers, attention on the cpu ===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// The dropout arguments of the attention kernels (runtime/cpu/StepOps.h):
/// p, the seed (null without dropout), the stream (in a micro-batch loop,
/// each iteration's own, as tcc.dropout's) and the control block (the rank).
template <class AttentionOp> std::string attentionDropout(AttentionOp o, CpuPrinter &p) {
  std::string stream = std::to_string(o.getStream());
  if (auto loop = o->template getParentOfType<MicroBatchesOp>())
    stream += " + uint64_t(args.micro) * " + std::to_string(loop.getDropoutStreams());
  std::string seed =
      o.getSeed() ? p(o.getSeed()) : std::string("static_cast<const int64_t *>(nullptr)");
  return cppDouble(o.getDropout()) + ", " + seed + ", " + stream + ", args.control";
}

} // namespace

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
  t.add<ScaledDotProductAttentionOp>([](ScaledDotProductAttentionOp o, CpuPrinter &p) {
    p.os << "  cpu::attention_forward<float>(" << cpp(kernel_args::attention(o)) << ", "
         << attentionDropout(o, p) << ", " << p(o.getQuery()) << ", " << p(o.getKey()) << ", "
         << p(o.getValue()) << ", " << p(o.getResult()) << ", " << p(o.getLogsumexp()) << ");\n";
    return success();
  });
  t.add<ScaledDotProductAttentionBackwardOp>(
      [](ScaledDotProductAttentionBackwardOp o, CpuPrinter &p) {
        p.os << "  cpu::attention_backward<float>(" << cpp(kernel_args::attention(o)) << ", "
             << attentionDropout(o, p) << ", " << p(o.getGrad()) << ", " << p(o.getQuery())
             << ", " << p(o.getKey()) << ", " << p(o.getValue()) << ", "
             << p(o.getResultValue()) << ", " << p(o.getLogsumexp()) << ", "
             << p(o.getGradQuery()) << ", " << p(o.getGradKey()) << ", " << p(o.getGradValue())
             << ");\n";
        return success();
      });
}
