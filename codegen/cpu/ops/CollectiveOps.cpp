//===- CollectiveOps.cpp - The collectives of a distributed step on the cpu ===//
//
// Through the bound communicator (runtime/comm: MPI for several ranks):
// all of an op's operands packed into one message, the sums unpacked into
// its results.
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
    auto names = [&](ValueRange values) {
      llvm::interleaveComma(values, p.os, [&](Value v) { p.os << p(v); });
    };
    p.os << "  { const float *inputs[] = {";
    names(o.getInputs());
    p.os << "}; float *results[] = {";
    names(o.getResults());
    p.os << "}; const int64_t sizes[] = {";
    llvm::interleaveComma(o.getResults(), p.os, [&](Value v) { p.os << numElements(v); });
    p.os << "};\n    cpu::all_reduce(args.comm, " << o.getResults().size()
         << ", inputs, results, sizes, " << (o.getReduction() == "mean" ? "true" : "false")
         << "); }\n";
    return success();
  });
}
