//===- InitAll.cpp - Register the tcc dialect and passes ------------------===//

#include "passes/InitAll.h"
#include "passes/Passes.h"

#include "ir/TccDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::tcc::registerAllTccDialects(DialectRegistry &registry) {
  registry.insert<TccDialect, func::FuncDialect, arith::ArithDialect>();
}

void mlir::tcc::buildCompilePipeline(OpPassManager &pm) {
  pm.addPass(createBuildTrainStep());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createPlanMemory());
}

void mlir::tcc::registerAllTccPasses() {
  registerTccPasses();
  PassPipelineRegistration<>("tcc-compile-pipeline",
                             "From the frontend's IR to the planned step "
                             "functions the code generators walk",
                             buildCompilePipeline);
  registerCanonicalizerPass();
  registerCSEPass();
}
