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
    // One message of one element type: f32 (gradients, running
    // statistics) or f64 (a synchronised batch norm's sums).
    std::string type = cppElementType(o.getInputs().front().getType());
    for (Value v : o.getInputs())
      if (cppElementType(v.getType()) != type || (type != "float" && type != "double"))
        return o.emitOpError("reduces tensors of one element type, f32 or f64, on the cpu "
                             "target, got ")
               << v.getType();
    auto names = [&](ValueRange values) {
      llvm::interleaveComma(values, p.os, [&](Value v) { p.os << p(v); });
    };
    p.os << "  { const " << type << " *inputs[] = {";
    names(o.getInputs());
    p.os << "}; " << type << " *results[] = {";
    names(o.getResults());
    p.os << "}; const int64_t sizes[] = {";
    llvm::interleaveComma(o.getResults(), p.os, [&](Value v) { p.os << numElements(v); });
    p.os << "};\n    cpu::all_reduce<" << type << ">(args.comm, " << o.getResults().size()
         << ", inputs, results, sizes, " << (o.getReduction() == "mean" ? "true" : "false")
         << "); }\n";
    return success();
  });
  // Sharded state (ZeRO): this rank's chunk, and the collectives of chunks.
  // A chunk and a gather copy bits, so they move 16-bit tensors as they are
  // stored; a reduce-scatter sums in f32 (tcc-widen-16bit widens it, as the
  // all-reduce).
  t.add<ShardOp>([](ShardOp o, CpuPrinter &p) -> LogicalResult {
    std::string type = cppElementType(o.getInput().getType());
    if (type != "float" && type != "uint16_t")
      return o.emitOpError("shards f32, f16 or bf16 tensors only on the cpu target, got ")
             << o.getInput().getType();
    p.os << "  cpu::shard<" << type << ">(args.control, " << numElements(o.getInput()) << ", "
         << numElements(o.getResult()) << ", " << p(o.getInput()) << ", " << p(o.getResult())
         << ");\n";
    return success();
  });
  t.add<AllGatherOp>([](AllGatherOp o, CpuPrinter &p) -> LogicalResult {
    for (Value v : o.getInputs())
      if (cppElementType(v.getType()) != "float" && cppElementType(v.getType()) != "uint16_t")
        return o.emitOpError("gathers f32, f16 or bf16 tensors only on the cpu target, got ")
               << v.getType();
    p.os << chunkCollectiveArrays(p.e, o.getInputs(), o.getResults(), true, "void")
         << "    const int64_t bytes[] = {";
    llvm::interleaveComma(o.getInputs(), p.os, [&](Value v) {
      p.os << (cppElementType(v.getType()) == "float" ? 4 : 2);
    });
    p.os << "};\n    cpu::all_gather(args.comm, " << o.getResults().size()
         << ", inputs, results, sizes, wholes, bytes); }\n";
    return success();
  });
  t.add<ReduceScatterOp>([](ReduceScatterOp o, CpuPrinter &p) -> LogicalResult {
    for (Value v : o.getInputs())
      if (cppElementType(v.getType()) != "float")
        return o.emitOpError("sums f32 tensors only on the cpu target, got ") << v.getType();
    p.os << chunkCollectiveArrays(p.e, o.getInputs(), o.getResults(), false)
         << "    cpu::reduce_scatter(args.comm, " << o.getResults().size()
         << ", inputs, results, sizes, wholes); }\n";
    return success();
  });
}
