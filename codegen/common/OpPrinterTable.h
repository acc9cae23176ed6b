//===- OpPrinterTable.h - A target's op printers, keyed by op ----*- C++ -*-===//
//
// Private to codegen/. Each target keeps its op printers in one table built
// from one registration function per op family (cpu/ops/, cuda/ops/), so
// that adding an op is one entry in its family's file and the dispatch is a
// lookup, not a chain of casts.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_COMMON_OPPRINTERTABLE_H
#define TCC_CODEGEN_COMMON_OPPRINTERTABLE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <functional>

namespace mlir::tcc {

/// The printers of a target whose printer state is `Printer`: a printer
/// takes the op and the state, prints the op's statements and returns
/// success, or fails after an error on the op.
template <typename Printer> class OpPrinterTable {
public:
  using Print = std::function<LogicalResult(Operation *, Printer &)>;

  /// The table the families' registration functions, called by `fill`, make.
  explicit OpPrinterTable(llvm::function_ref<void(OpPrinterTable &)> fill) { fill(*this); }

  /// Registers `print`, a callable of (OpT, Printer &) (a generic lambda
  /// for several), as the printer of each of `OpTs`.
  template <typename... OpTs, typename F> void add(F print) {
    (add(TypeID::get<OpTs>(),
         [print](Operation *op, Printer &p) { return print(cast<OpTs>(op), p); }),
     ...);
  }

  /// Registers `print` for the op whose TypeID is `id`.
  void add(TypeID id, Print print) {
    // Two families claiming one op is a bug of the tables, found at start.
    if (!table.try_emplace(id, std::move(print)).second)
      llvm::report_fatal_error("an op has two printers in one target's table");
  }

  /// The printer of `op`, or null when the target has none.
  const Print *lookup(Operation *op) const {
    auto it = table.find(op->getName().getTypeID());
    return it == table.end() ? nullptr : &it->second;
  }

  /// The ops that have a printer, in no particular order.
  SmallVector<TypeID> keys() const {
    SmallVector<TypeID> ids;
    for (const auto &entry : table)
      ids.push_back(entry.first);
    return ids;
  }

private:
  llvm::DenseMap<TypeID, Print> table;
};

} // namespace mlir::tcc

#endif // TCC_CODEGEN_COMMON_OPPRINTERTABLE_H
