//===- LossOps.cpp - Losses and metrics on the GPU ------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::registerCudaLossOps(CudaOpPrinters &t) {
  t.add<CrossEntropyOp>([](CrossEntropyOp o, CudaPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cuda::cross_entropy_forward(args.stream, " << l[0] << ", " << l[1] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", " << cppDouble(o.getLabelSmoothing())
         << ", " << cppReduction(o.getReduction()) << ", " << p(o.getResult()) << ", "
         << (o.getValid() ? p(o.getValid()) : "nullptr") << ");\n";
    return success();
  });
  t.add<CrossEntropyBackwardOp>([](CrossEntropyBackwardOp o, CudaPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cuda::cross_entropy_backward(args.stream, " << l[0] << ", " << l[1] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", " << cppDouble(o.getLabelSmoothing())
         << ", " << cppReduction(o.getReduction()) << ", " << p(o.getGrad()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  // Sequence targets: [N, T, K] logits as N * T rows, in f32
  // (runtime/cuda/device/TokenLoss.cuh).
  t.add<TokenCrossEntropyOp>([](TokenCrossEntropyOp o, CudaPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cuda::token_cross_entropy_forward(args.stream, " << l[0] * l[1]
         << ", " << l[2] << ", " << p(o.getLogits()) << ", " << p(o.getLabels())
         << ", " << static_cast<int64_t>(o.getIgnoreIndex()) << ", "
         << cppDouble(o.getLabelSmoothing()) << ", "
         << cppReduction(o.getReduction()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<TokenCrossEntropyBackwardOp>(
      [](TokenCrossEntropyBackwardOp o, CudaPrinter &p) {
        ArrayRef<int64_t> l = dimsOf(o.getLogits());
        p.os << "  cuda::token_cross_entropy_backward(args.stream, "
             << workspaceOf(o) << ", " << l[0] * l[1] << ", " << l[2] << ", "
             << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
             << static_cast<int64_t>(o.getIgnoreIndex()) << ", "
             << cppDouble(o.getLabelSmoothing()) << ", "
             << cppReduction(o.getReduction()) << ", " << p(o.getGrad()) << ", "
             << p(o.getResult()) << ");\n";
        return success();
      });
  t.add<CountCorrectTokensOp>([](CountCorrectTokensOp o, CudaPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cuda::count_correct_tokens(args.stream, " << l[0] * l[1] << ", "
         << l[2] << ", " << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
         << static_cast<int64_t>(o.getIgnoreIndex()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<MseLossOp>([](MseLossOp o, CudaPrinter &p) {
    p.os << "  cuda::mse_loss_forward(args.stream, " << numElements(o.getInput()) << ", "
         << p(o.getInput()) << ", " << p(o.getTarget()) << ", " << cppReduction(o.getReduction())
         << ", " << p(o.getResult()) << ", " << (o.getValid() ? p(o.getValid()) : "nullptr") << ", "
         << product(dimsOf(o.getInput()).drop_front()) << ");\n";
    return success();
  });
  t.add<MseLossBackwardOp>([](MseLossBackwardOp o, CudaPrinter &p) {
    p.os << "  cuda::mse_loss_backward(args.stream, " << numElements(o.getInput()) << ", "
         << p(o.getInput()) << ", " << p(o.getTarget()) << ", " << cppReduction(o.getReduction())
         << ", " << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<OneHotOp>([](OneHotOp o, CudaPrinter &p) {
    p.forEach(numElements(o.getResult()), p(o.getResult()) + "[i] = one_hot_at<float>(" +
                                              std::to_string(o.getClasses()) + ", " +
                                              p(o.getLabels()) + ", i);");
    return success();
  });
  t.add<CountCorrectOp>([](CountCorrectOp o, CudaPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cuda::count_correct(args.stream, " << l[0] << ", " << l[1] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", " << p(o.getValid()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
}
