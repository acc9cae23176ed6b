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
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

void mlir::tcc::registerAllTccDialects(DialectRegistry &registry) {
  registry.insert<TccDialect, func::FuncDialect, arith::ArithDialect>();
}

std::vector<mlir::StringRef> mlir::tcc::offByDefaultPassNames() {
  std::vector<StringRef> names;
  for (const TargetBackend *target : registeredTargetBackends())
    for (StringRef own : target->offByDefaultPasses())
      if (!llvm::is_contained(names, own))
        names.push_back(own);
  return names;
}

std::vector<mlir::StringRef> mlir::tcc::optimizationPassNames() {
  // Named by their flags in Passes.td, in pipeline order.
  auto name = [](std::unique_ptr<Pass> pass) { return TargetOptions::optimizationName(*pass); };
  std::vector<StringRef> names = {name(createBnBiasElimination()),
                                  name(createPoolActivationReorder()), name(createPrecision())};
  // The targets' own (pad-channels, channels-last) run between precision
  // and bucket-collectives.
  for (const TargetBackend *target : registeredTargetBackends())
    for (StringRef own : target->optimizationPasses())
      if (!llvm::is_contained(names, own))
        names.push_back(own);
  names.insert(names.end(), {name(createFrozenStep()), name(createGatherParameters()),
                             name(createBucketCollectives()),
                             name(createFusion())});
  // Then their selection passes (cuda-overlap-buckets), then recompute.
  for (const TargetBackend *target : registeredTargetBackends())
    for (StringRef own : target->selectionOptimizationPasses())
      if (!llvm::is_contained(names, own))
        names.push_back(own);
  names.push_back(name(createRecompute()));
  return names;
}

void mlir::tcc::buildStepPipeline(OpPassManager &pm, const TargetBackend &target,
                                  const TargetOptions &options) {
  options.addOptimization(pm, createBnBiasElimination());
  options.addOptimization(pm, createPoolActivationReorder());
  options.addOptimization(pm, createPrecision());
  target.addForwardPasses(pm, options);
  // From @forward and @loss, which tcc-build-train-step replaces.
  options.addOptimization(pm, createFrozenStep());
  pm.addPass(createBuildTrainStep());
  pm.addPass(createCanonicalizerPass());
  // Ops without a 16-bit kernel on the target run on f32 copies, which
  // fusion and the memory plan (recompute's budget) must see.
  pm.addPass(createWiden16Bit(Widen16BitOptions{target.sixteenBitKinds()}));
  target.addLayoutPasses(pm, options);
  // The gradients' all-reduce in buckets placed in the backward, on the
  // messages as they are sent (after widen-16bit), before fusion fixes the
  // order of the ops.
  // Sharded parameters gathered per node, one node ahead of their readers.
  options.addOptimization(pm, createGatherParameters());
  BucketCollectivesOptions buckets;
  if (options.bucketBytes > 0)
    buckets.bucketBytes = options.bucketBytes;
  options.addOptimization(pm, createBucketCollectives(buckets));
  // By name, as tcc-opt's -tcc-fusion=epilogue-patterns=... names them, so
  // the pipeline prints as text that builds it again.
  FusionCapabilities can = target.fusion();
  std::vector<std::string> patterns;
  for (const FusionPattern &pattern : can.epiloguePatterns)
    patterns.push_back(pattern.name.str());
  options.addOptimization(pm, createFusion(FusionOptions{patterns, can.multiTensorCasts}));
  // The target chooses its library calls (a convolution's cuDNN engine,
  // for its epilogue too) for the fused step.
  target.addSelectionPasses(pm, options);
}

void mlir::tcc::buildPlanningPipeline(OpPassManager &pm, const TargetOptions &options) {
  options.addOptimization(pm, createRecompute());
  pm.addPass(createPlanMemory());
}

void mlir::tcc::buildCompilePipeline(OpPassManager &pm, const TargetBackend &target,
                                     const TargetOptions &options) {
  buildStepPipeline(pm, target, options);
  buildPlanningPipeline(pm, options);
}

void mlir::tcc::registerAllTccPasses() {
  registerTccPasses();
  // Registered by hand (not PassPipelineRegistration) so that an unknown
  // name in disable= is an error rather than ignored.
  registerPassPipeline(
      "tcc-compile-pipeline",
      "From the frontend's IR to the planned step functions the code "
      "generators walk",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CompilePipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        for (const std::string &name : options.disable)
          if (!llvm::is_contained(optimizationPassNames(), name))
            return errorHandler("tcc-compile-pipeline: disable=" + name +
                                ": not an optimization pass; expected one of " +
                                llvm::join(optimizationPassNames(), ", "));
        const TargetBackend *target = lookupTargetBackend(options.target);
        if (!target)
          return errorHandler("tcc-compile-pipeline: target=" + options.target +
                              ": not a registered target");
        if (options.bucketBytes < 0)
          return errorHandler("tcc-compile-pipeline: bucket-bytes=" +
                              Twine(options.bucketBytes.getValue()) +
                              ": expected a positive size (0: the default)");
        TargetBackend::Takes takes = target->takes();
        if ((!options.gpu.empty() && !takes.gpu) ||
            (!options.tuningDb.empty() && !takes.tuningDb) ||
            (options.allowFallback && !takes.allowFallback))
          return errorHandler("tcc-compile-pipeline: the " + options.target +
                              " target takes no gpu, tuning-db or allow-fallback");
        TargetOptions settings{{options.disable.begin(), options.disable.end()},
                               options.gpu,
                               options.tuningDb,
                               options.ignoreTuningMismatch,
                               options.allowFallback,
                               options.bucketBytes};
        buildCompilePipeline(pm, *target, settings);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionsHandler) {
        optionsHandler(CompilePipelineOptions());
      });
  registerCanonicalizerPass();
  registerCSEPass();
}
