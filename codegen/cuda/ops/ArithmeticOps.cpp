//===- ArithmeticOps.cpp - Sums, products, channel gates, dropout on the GPU ===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/KernelArgs.h"

#include <optional>

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// An f32 sum over one axis that keeps several (a `mean` over the tokens
/// of [N, T, D]): one thread per result element, the axis in order.
/// Correct, not fast: the inputs are small next to the matmuls around them.
LogicalResult printAxisSum(ReduceSumOp o, CudaPrinter &p) {
  if (o.getAxes().size() != 1 || !cast<ShapedType>(o.getType()).getElementType().isF32())
    return cudaCannotRun(o);
  kernel_args::Around a = kernel_args::around(dimsOf(o.getInput()), o.getAxes()[0]);
  const std::string inner = std::to_string(a.inner), axis = std::to_string(a.axis);
  p.forEach(numElements(o.getResult()),
            "const float *x = " + p(o.getInput()) + " + i / " + inner + " * " +
                std::to_string(a.axis * a.inner) + " + i % " + inner +
                "; float s = 0; for (int64_t t = 0; t < " + axis + "; ++t) s += x[t * " + inner +
                "]; " + p(o.getResult()) + "[i] = s;");
  return success();
}

/// A sum that keeps one axis (a bias's gradient), or printAxisSum's. A 16-bit bias
/// gradient sums the stored 16-bit gradient (half::F16 / BF16 widen as they
/// load and round through f32 as they store: the bits of the sum of f32
/// copies, cast), so no f32 copy is written.
LogicalResult printReduceSum(ReduceSumOp o, CudaPrinter &p) {
  std::optional<kernel_args::Around> a = kernel_args::keptAxis(o);
  Value in = o.getInput(), out = o.getResult();
  if (!a)
    return printAxisSum(o, p);
  p.os << "  cuda::reduce_sum_keep<" << updateElementType(out) << ">(args.stream, "
       << workspaceOf(o) << ", " << a->outer << ", " << a->axis << ", " << a->inner << ", "
       << updatePointer(p.e, in, in) << ", " << updatePointer(p.e, out, out) << ");\n";
  return success();
}

/// Channel gates: the cpu kernels' element and plane functions.
void registerChannelGates(CudaOpPrinters &t) {
  t.add<ChannelMulOp>([](ChannelMulOp o, CudaPrinter &p) {
    int64_t planes = numElements(o.getGate()), hw = numElements(o.getInput()) / planes;
    p.os << "  { const float *x = " << p(o.getInput()) << ", *gate = " << p(o.getGate())
         << "; float *y = " << p(o.getResult()) << ";\n    cuda::for_each(args.stream, "
         << planes * hw << ", [=] __device__(int64_t k) { y[k] = channel_mul_at(" << hw
         << ", x, gate, k); }); }\n";
    return success();
  });
  t.add<ChannelMulBackwardGateOp>([](ChannelMulBackwardGateOp o, CudaPrinter &p) {
    int64_t planes = numElements(o.getResult()), hw = numElements(o.getInput()) / planes;
    p.os << "  { const float *dy = " << p(o.getGrad()) << ", *x = " << p(o.getInput())
         << "; float *dgate = " << p(o.getResult()) << ";\n    cuda::for_each(args.stream, "
         << planes << ", [=] __device__(int64_t q) { dgate[q] = channel_mul_gate_grad_at(" << hw
         << ", dy, x, q); }); }\n";
    return success();
  });
}

} // namespace

void mlir::tcc::registerCudaArithmeticOps(CudaOpPrinters &t) {
  t.add<AddOp, MulOp>([](auto o, CudaPrinter &p) {
    const bool same = p(o.getLhs()) == p(o.getRhs());
    p.forEachChunk(numElements(o.getResult()),
                   same ? std::vector<std::string>{p(o.getLhs())}
                        : std::vector<std::string>{p(o.getLhs()), p(o.getRhs())},
                   {p(o.getResult())},
                   std::string("s0[k] = c0[k]") + (isa<AddOp>(o.getOperation()) ? " + " : " * ") +
                       (same ? "c0[k];" : "c1[k];"));
    return success();
  });
  t.add<ScaleOp>([](ScaleOp o, CudaPrinter &p) {
    p.os << "  cuda::scale<float>(args.stream, " << numElements(o.getResult()) << ", float("
         << cppDouble(o.getFactor()) << "), " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<ScaleByOp>([](ScaleByOp o, CudaPrinter &p) {
    p.forEachChunk(numElements(o.getResult()), {p(o.getInput())}, {p(o.getResult())},
                   "s0[k] = *" + p(o.getFactor()) + " * c0[k];");
    return success();
  });
  t.add<ReduceSumOp>(printReduceSum);
  registerChannelGates(t);
  t.add<DropoutOp>([](DropoutOp o, CudaPrinter &p) {
    // In a micro-batch loop each iteration draws streams of its own.
    std::string stream = std::to_string(o.getStream());
    if (auto loop = o->getParentOfType<MicroBatchesOp>())
      stream += " + uint64_t(args.micro) * " + std::to_string(loop.getDropoutStreams());
    p.os << "  cuda::apply_dropout<float>(args.stream, " << numElements(o.getResult()) << ", "
         << cppDouble(o.getP()) << ", " << p(o.getSeed()) << ", " << stream
         << ", args.control, " << p(o.getInput()) << ", " << p(o.getResult()) << ");\n";
    return success();
  });
}
