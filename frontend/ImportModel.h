//===- ImportModel.h - ModelSpec -> tcc dialect IR --------------*- C++ -*-===//
//
// The second step of the frontend (the first is ModelSpec.h). It builds:
//
//   module attributes {tcc.model, tcc.classes, tcc.input_shape,
//                      tcc.train, tcc.data, tcc.eval} {
//     func.func @forward(%input, [%seed,] parameters and buffers
//                        in PyTorch state_dict order)
//         -> (output, updated buffers)
//     func.func @loss(%output, %labels) -> tensor<f32>
//   }
//
// Arguments carry their role as attributes (docs/ir.md): `tcc.param` or
// `tcc.buffer` (the state_dict name), `tcc.init`, `tcc.trainable`,
// `tcc.lr_scale`, `tcc.weight_decay_scale`. Shapes come from the ops' type
// inference; its diagnostics are reported with the model.json node name.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_IMPORTMODEL_H
#define TCC_FRONTEND_IMPORTMODEL_H

#include "frontend/ModelSpec.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::tcc {

/// Builds and verifies the module for `spec`. On failure returns null and
/// sets `error` to one line "PATH: where: what" (no "error:" prefix).
OwningOpRef<ModuleOp> importModel(MLIRContext &context,
                                  const ::tcc::frontend::ModelSpec &spec,
                                  std::string &error);

} // namespace mlir::tcc

#endif // TCC_FRONTEND_IMPORTMODEL_H
