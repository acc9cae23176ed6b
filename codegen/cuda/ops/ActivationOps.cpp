//===- ActivationOps.cpp - Activations on the GPU -------------------------===//
//
// Every activation of common/Activations.cpp: its element functor mapped
// over the tensor (runtime/cuda/device/StepOps.cuh).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ops/CudaPrinter.h"

#include "codegen/common/Activations.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

LogicalResult printActivation(Operation *op, CudaPrinter &p) {
  std::string functor = elementFunctorOf(op);
  int64_t n = numElements(op->getResult(0));
  if (op->getNumOperands() == 1)
    p.os << "  cuda::map_forward(args.stream, " << n << ", " << functor << ", "
         << p(op->getOperand(0)) << ", " << p(op->getResult(0)) << ");\n";
  else // backward ops take (grad, value); their functors (value, grad)
    p.os << "  cuda::map_backward(args.stream, " << n << ", " << functor << ", "
         << p(op->getOperand(1)) << ", " << p(op->getOperand(0)) << ", " << p(op->getResult(0))
         << ");\n";
  return success();
}

} // namespace

void mlir::tcc::registerCudaActivationOps(CudaOpPrinters &t) {
  for (TypeID id : activationOps())
    t.add(id, printActivation);
}
