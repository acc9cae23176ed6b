//===- ActivationOps.cpp - Activations on the cpu -------------------------===//
//
// Every activation of common/Activations.cpp: forward
// `<kernel>_forward(n, [attr,] x, y)`, backward
// `<kernel>_backward(n, [attr,] value, dy, dx)`.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "codegen/common/Activations.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

LogicalResult printActivation(Operation *op, CpuPrinter &p) {
  Activation a = *activationOf(op);
  std::string attr = a.attr ? cppDouble(*a.attr) + ", " : "";
  p.os << "  " << a.kernel << (a.backward ? "_backward" : "_forward") << "<float>("
       << numElements(op->getResult(0)) << ", " << attr;
  if (a.backward) // the op takes (grad, value), the kernel (value, grad)
    p.os << p(op->getOperand(1)) << ", ";
  p.os << p(op->getOperand(0)) << ", " << p(op->getResult(0)) << ");\n";
  return success();
}

} // namespace

void mlir::tcc::registerCpuActivationOps(CpuOpPrinters &t) {
  for (TypeID id : activationOps())
    t.add(id, printActivation);
}
