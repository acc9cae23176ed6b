//===- LossOps.cpp - Losses and metrics on the cpu ------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::registerCpuLossOps(CpuOpPrinters &t) {
  t.add<CrossEntropyOp>([](CrossEntropyOp o, CpuPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cross_entropy_forward<float>(" << l[0] << ", " << l[1] << ", " << p(o.getLogits())
         << ", " << p(o.getLabels()) << ", " << cppDouble(o.getLabelSmoothing()) << ", "
         << cppReduction(o.getReduction()) << ", " << p(o.getResult())
         << ", static_cast<float *>(nullptr)"
         << (o.getValid() ? ", " + p(o.getValid()) : std::string()) << ");\n";
    return success();
  });
  t.add<CrossEntropyBackwardOp>([](CrossEntropyBackwardOp o, CpuPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cpu::cross_entropy_backward<float>(" << l[0] << ", " << l[1] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", " << cppDouble(o.getLabelSmoothing())
         << ", " << cppReduction(o.getReduction()) << ", " << p(o.getGrad()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  // Sequence targets: [N, T, K] logits as N * T rows (runtime/kernels/TokenLoss.h).
  t.add<TokenCrossEntropyOp>([](TokenCrossEntropyOp o, CpuPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  token_cross_entropy_forward<float>(" << l[0] * l[1] << ", " << l[2] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
         << static_cast<int64_t>(o.getIgnoreIndex()) << ", "
         << cppDouble(o.getLabelSmoothing()) << ", " << cppReduction(o.getReduction()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<TokenCrossEntropyBackwardOp>([](TokenCrossEntropyBackwardOp o, CpuPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cpu::token_cross_entropy_backward<float>(" << l[0] * l[1] << ", " << l[2] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
         << static_cast<int64_t>(o.getIgnoreIndex()) << ", "
         << cppDouble(o.getLabelSmoothing()) << ", " << cppReduction(o.getReduction()) << ", "
         << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<CountCorrectTokensOp>([](CountCorrectTokensOp o, CpuPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cpu::count_correct_tokens<float>(" << l[0] * l[1] << ", " << l[2] << ", "
         << p(o.getLogits()) << ", " << p(o.getLabels()) << ", "
         << static_cast<int64_t>(o.getIgnoreIndex()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<MseLossOp>([](MseLossOp o, CpuPrinter &p) {
    p.os << "  mse_loss_forward<float>(" << numElements(o.getInput()) << ", " << p(o.getInput())
         << ", " << p(o.getTarget()) << ", " << cppReduction(o.getReduction()) << ", "
         << p(o.getResult());
    if (o.getValid())
      p.os << ", " << p(o.getValid()) << ", " << product(dimsOf(o.getInput()).drop_front());
    p.os << ");\n";
    return success();
  });
  t.add<MseLossBackwardOp>([](MseLossBackwardOp o, CpuPrinter &p) {
    p.os << "  cpu::mse_loss_backward<float>(" << numElements(o.getInput()) << ", "
         << p(o.getInput()) << ", " << p(o.getTarget()) << ", " << cppReduction(o.getReduction())
         << ", " << p(o.getGrad()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<OneHotOp>([](OneHotOp o, CpuPrinter &p) {
    p.os << "  one_hot<float>(" << dimsOf(o.getLabels())[0] << ", " << o.getClasses() << ", "
         << p(o.getLabels()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<CountCorrectOp>([](CountCorrectOp o, CpuPrinter &p) {
    ArrayRef<int64_t> l = dimsOf(o.getLogits());
    p.os << "  cpu::count_correct<float>(" << l[0] << ", " << l[1] << ", " << p(o.getLogits())
         << ", " << p(o.getLabels()) << ", " << p(o.getValid()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
}
