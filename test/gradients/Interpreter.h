//===- Interpreter.h - Runs tcc functions in double (tests only) -*- C++ -*-===//
//
// A reference interpreter for the gradient tests: executes a func.func made
// of tcc ops (forward, backward, a few shape/elementwise ops) and
// arith.constant, one op after the other, on std::vector buffers. Every tcc
// op calls the same runtime kernel (runtime/kernels/, T = double) with the
// same arguments as the CPU code generator (codegen/CpuOps*.cpp); shapes come
// from the static tensor types. Whatever the element type in the IR (f32,
// bf16, ...), floats are computed in double; integer tensors (labels, seeds)
// are int64.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TEST_GRADIENTS_INTERPRETER_H
#define TCC_TEST_GRADIENTS_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::test {

/// One tensor value: its shape and either float (double) or int64 elements.
struct Tensor {
  llvm::SmallVector<int64_t, 4> shape;
  bool isInt = false;
  std::vector<double> f;   ///< the elements when !isInt
  std::vector<int64_t> i;  ///< the elements when isInt

  int64_t numElements() const;

  static Tensor floats(llvm::ArrayRef<int64_t> shape, std::vector<double> data);
  static Tensor ints(llvm::ArrayRef<int64_t> shape, std::vector<int64_t> data);
  /// A zero tensor of a (static, ranked) tensor type: int64 for integer
  /// element types, double otherwise.
  static Tensor zeros(mlir::Type tensorType);
};

/// Runs `func` (one block, ending in func.return) on `args`, in order, and
/// returns the operands of its func.return. On an op it cannot run, or
/// arguments that do not match the function type, returns false and describes
/// the problem in `error`.
bool interpret(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> args,
               std::vector<Tensor> &results, std::string &error);

} // namespace tcc::test

#endif // TCC_TEST_GRADIENTS_INTERPRETER_H
