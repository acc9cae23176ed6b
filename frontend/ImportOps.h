//===- ImportOps.h - One model.json node -> tcc ops -------------*- C++ -*-===//
//
// Private to frontend/: the middle layer of the importer (ModelImporter.h).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_IMPORTOPS_H
#define TCC_FRONTEND_IMPORTOPS_H

#include "frontend/ModelImporter.h"

namespace mlir::tcc {

/// The model.json ops the importer has an entry for (ImportOps.cpp), which
/// must be those whose fields OpSpecs.cpp reads (test/unit/ImportTableTest).
std::vector<std::string> importedOps();

/// Adds the ops of model.json nodes to @forward, with their parameters and
/// buffers as arguments.
class NodeImporter : public ModelImporter {
public:
  /// The entries of the import table, one per op (ImportOps.cpp).
  struct Ops;

protected:
  NodeImporter(MLIRContext &context, const ::tcc::frontend::ModelSpec &spec)
      : ModelImporter(context, spec) {}

  /// Emits the ops of one node; its value is recorded under its name.
  LogicalResult importNode(const ::tcc::frontend::NodeSpec &node);

private:
  /// Fails naming both inputs when they differ in shape; `verb`: "adds".
  LogicalResult checkSameShapes(const ::tcc::frontend::NodeSpec &node, ArrayRef<Value> inputs,
                                StringRef verb);
};

} // namespace mlir::tcc

#endif // TCC_FRONTEND_IMPORTOPS_H
