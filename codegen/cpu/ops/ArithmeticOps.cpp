//===- ArithmeticOps.cpp - Sums, products, channel gates, dropout on the cpu ===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;
using kernel_args::cpp;

namespace {

/// A sum over any set of axes: the generic kernel, unless it keeps one
/// axis (a bias's gradient).
LogicalResult printReduceSum(ReduceSumOp o, CpuPrinter &p) {
  if (std::optional<kernel_args::Around> kept = kernel_args::keptAxis(o)) {
    p.os << "  reduce_sum_keep<float>(" << cpp(*kept) << ", " << p(o.getInput()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  }
  ArrayRef<int64_t> in = dimsOf(o.getInput());
  ArrayRef<int64_t> axes = o.getAxes();
  p.os << "  { const int64_t shape[] = {";
  llvm::interleaveComma(in, p.os);
  p.os << "}; const bool reduced[] = {";
  for (size_t d = 0; d < in.size(); ++d)
    p.os << (d ? ", " : "")
         << (llvm::is_contained(axes, static_cast<int64_t>(d)) ? "true" : "false");
  p.os << "}; reduce_sum_dims<float>(" << in.size() << ", shape, reduced, " << p(o.getInput())
       << ", " << p(o.getResult()) << ", " << numElements(o.getResult()) << "); }\n";
  return success();
}

} // namespace

void mlir::tcc::registerCpuArithmeticOps(CpuOpPrinters &t) {
  t.add<AddOp, MulOp>([](auto o, CpuPrinter &p) {
    p.os << "  " << (isa<AddOp>(o.getOperation()) ? "add" : "mul") << "<float>("
         << numElements(o.getResult()) << ", " << p(o.getLhs()) << ", " << p(o.getRhs()) << ", "
         << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<ScaleOp>([](ScaleOp o, CpuPrinter &p) {
    p.os << "  scale<float>(" << numElements(o.getResult()) << ", float("
         << cppDouble(o.getFactor()) << "), " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<ScaleByOp>([](ScaleByOp o, CpuPrinter &p) {
    p.os << "  cpu::scale_by<float>(" << numElements(o.getResult()) << ", " << p(o.getFactor())
         << ", " << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<ReduceSumOp>(printReduceSum);
  // Channel gates (runtime/kernels/ChannelMul.h): [N * C] planes.
  t.add<ChannelMulOp>([](ChannelMulOp o, CpuPrinter &p) {
    int64_t planes = numElements(o.getGate());
    p.os << "  channel_mul<float>(" << planes << ", " << numElements(o.getInput()) / planes << ", "
         << p(o.getInput()) << ", " << p(o.getGate()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<ChannelMulBackwardGateOp>([](ChannelMulBackwardGateOp o, CpuPrinter &p) {
    int64_t planes = numElements(o.getResult());
    p.os << "  channel_mul_backward_gate<float>(" << planes << ", "
         << numElements(o.getInput()) / planes << ", " << p(o.getGrad()) << ", " << p(o.getInput())
         << ", " << p(o.getResult()) << ");\n";
    return success();
  });
  t.add<DropoutOp>([](DropoutOp o, CpuPrinter &p) {
    // In a micro-batch loop each iteration draws streams of its own.
    std::string stream = std::to_string(o.getStream());
    if (auto loop = o->getParentOfType<MicroBatchesOp>())
      stream += " + uint64_t(args.micro) * " + std::to_string(loop.getDropoutStreams());
    p.os << "  cpu::dropout_forward<float>(" << numElements(o.getResult()) << ", "
         << cppDouble(o.getP()) << ", " << p(o.getSeed()) << ", " << stream
         << ", args.control, " << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
