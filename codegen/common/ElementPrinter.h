//===- ElementPrinter.h - A fused group's ops, one element at a time -*- C++ -*-===//
//
// Private to codegen/. The element-body printer the fused groups of both
// targets share: an elementwise group's loop body (ElementBody.cpp) and the
// store or gradient lambda of a norm's kernel (NormGroups.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_COMMON_ELEMENTPRINTER_H
#define TCC_CODEGEN_COMMON_ELEMENTPRINTER_H

#include "codegen/common/Emitter.h"

#include "ir/TccOps.h"

namespace mlir::tcc {

/// Prints the element computations of a group's elementwise ops. Values
/// from outside the group are read at element `i`; values of the group are
/// locals `t<k>`; yielded values are stored at `i`. With `chunked`, they
/// are read from and stored to element k of the chunks it lists instead.
class ElementPrinter {
public:
  ElementPrinter(FusionGroupOp group, StepEmitter &e, ChunkedElementwise *chunked = nullptr)
      : group(group), e(e), chunked(chunked) {}

  /// Declares the functors (before the loop) and prints the computation of
  /// `op` (inside it).
  LogicalResult print(Operation *op, llvm::raw_ostream &functors,
                      llvm::raw_ostream &body);

  /// The element `i` of `v`.
  std::string element(Value v) {
    auto it = locals.find(v);
    if (it != locals.end())
      return it->second;
    if (chunked)
      return "c" + std::to_string(indexIn(chunked->loads, e.name(v))) + "[k]";
    return e.name(v) + "[i]";
  }

  /// Prefixes the functors' names, where two printers declare theirs in
  /// one scope (a layer norm's input and store lambdas).
  void setFunctorPrefix(std::string prefix) { functorPrefix = std::move(prefix); }

  /// Names `v` as the local `name` (already computed).
  void setLocal(Value v, std::string name) { locals[v] = std::move(name); }

  /// Stores those of `values` that the group yields at element i.
  void printStores(ValueRange values, llvm::raw_ostream &body) {
    auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
    for (Value v : values)
      if (llvm::is_contained(yield.getValues(), v))
        body << "      "
             << (chunked ? "s" + std::to_string(indexIn(chunked->stores, e.name(v))) + "[k]"
                         : e.name(v) + "[i]")
             << " = " << element(v) << ";\n";
  }

private:
  /// The position of `name` in `names`, added at the end if missing.
  static size_t indexIn(std::vector<std::string> &names, const std::string &name) {
    auto it = llvm::find(names, name);
    if (it != names.end())
      return size_t(it - names.begin());
    names.push_back(name);
    return names.size() - 1;
  }

  FusionGroupOp group;
  StepEmitter &e;
  ChunkedElementwise *chunked;
  DenseMap<Value, std::string> locals;
  int counter = 0;
  std::string functorPrefix;
};

} // namespace mlir::tcc

#endif // TCC_CODEGEN_COMMON_ELEMENTPRINTER_H
