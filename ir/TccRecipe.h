//===- TccRecipe.h - The recipe's attributes and its plain structs -*- C++ -*-===//
//
// The frontend writes runtime/Recipe.h's structs as the module's
// #tcc.train, #tcc.data and #tcc.eval (ir/TccRecipeAttrs.td); passes and
// code generators read them back as the structs.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_TCCRECIPE_H
#define TCC_IR_TCCRECIPE_H

#include "ir/TccAttrs.h"
#include "runtime/Recipe.h"

namespace mlir::tcc {

TrainAttr getTrainAttr(MLIRContext *context, const ::tcc::rt::TrainRecipe &train);
DataAttr getDataAttr(MLIRContext *context, const ::tcc::rt::DataRecipe &data);
EvalAttr getEvalAttr(MLIRContext *context, const ::tcc::rt::EvalRecipe &eval);
ScheduleAttr getScheduleAttr(MLIRContext *context, const ::tcc::rt::ScheduleDesc &schedule);

/// The recipe an attribute holds. The train section has no groups and no
/// cycle_momentum: the frontend has applied them.
::tcc::rt::TrainRecipe toRecipe(TrainAttr train);
::tcc::rt::DataRecipe toRecipe(DataAttr data);
::tcc::rt::EvalRecipe toRecipe(EvalAttr eval);
::tcc::rt::ScheduleDesc toRecipe(ScheduleAttr schedule);
::tcc::rt::Precision toRecipe(PrecisionAttr precision);
::tcc::rt::Optimizer toRecipe(OptimizerAttr optimizer);

/// The module's recipe (its tcc.train, tcc.data and tcc.eval), or failure
/// with an error on the module naming what is missing.
FailureOr<::tcc::rt::Recipe> moduleRecipe(Operation *module);

/// The module's tcc.train, or null.
TrainAttr moduleTrain(Operation *module);

} // namespace mlir::tcc

#endif // TCC_IR_TCCRECIPE_H
