//===- CollectiveOps.cpp - The collectives of a distributed step on the cpu ===//
//
// Through the bound communicator (runtime/comm: MPI for several ranks):
// each result is first a copy of its operand, then reduced in place, all
// of an op's tensors in one message.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::registerCpuCollectiveOps(CpuOpPrinters &t) {
  t.add<AllReduceOp>([](AllReduceOp o, CpuPrinter &p) -> LogicalResult {
    for (Value v : o.getInputs())
      if (cppElementType(v.getType()) != "float")
        return o.emitOpError("reduces f32 tensors only on the cpu target so far, got ")
               << v.getType();
    for (auto [input, result] : llvm::zip(o.getInputs(), o.getResults()))
      p.copyInto(input, result);
    p.os << "  { float *tensors[] = {";
    llvm::interleaveComma(o.getResults(), p.os, [&](Value v) { p.os << p(v); });
    p.os << "}; const int64_t sizes[] = {";
    llvm::interleaveComma(o.getResults(), p.os, [&](Value v) { p.os << numElements(v); });
    p.os << "};\n    cpu::all_reduce(args.comm, " << o.getResults().size()
         << ", tensors, sizes, " << (o.getReduction() == "mean" ? "true" : "false") << "); }\n";
    return success();
  });
}
