//===- Recipe.h - model.json's training recipe as one typed value -*- C++ -*-===//
//
// The recipe (model.json's train, data and eval sections) as plain C++: the
// frontend fills it once with every default (frontend/TrainSpec.cpp,
// frontend/DataSpec.cpp), the IR carries it as typed attributes
// (#tcc.train, #tcc.data, #tcc.eval: ir/TccRecipeAttrs.td), and the code
// generator hands it to the trainer as an initializer of this struct
// (ModelInfo::recipe). The member initializers are the defaults of
// docs/model-format.md: the one place each default is written.
//
// No MLIR and no JSON: the generated trainer includes it.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_RECIPE_H
#define TCC_RUNTIME_RECIPE_H

#include "runtime/common/Batch.h"
#include "runtime/common/Schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::rt {

/// train.precision: the number format of the 16-bit-capable layers, and
/// whether their parameters stay in f32 (mixed) or are stored in 16 bits too
/// (pure, as model.half()). fp32 is always pure.
struct Precision {
  enum Kind { FP32, BF16, FP16 };
  enum Storage { Mixed, Pure };
  Kind kind = FP32;
  Storage storage = Pure;

  bool sixteenBit() const { return kind != FP32; }
  bool mixed() const { return storage == Mixed; }
  /// fp16-mixed: the one precision that scales the loss (GradScaler).
  bool scalesLoss() const { return kind == FP16 && storage == Mixed; }
  /// model.json's spelling: fp32, bf16-mixed, fp16-mixed, bf16, fp16.
  std::string name() const {
    if (kind == FP32)
      return "fp32";
    return std::string(kind == BF16 ? "bf16" : "fp16") + (mixed() ? "-mixed" : "");
  }
  /// The precision model.json spells `text`, or none.
  static std::optional<Precision> parse(std::string_view text) {
    for (Kind k : {FP32, BF16, FP16})
      for (Storage s : {Mixed, Pure}) {
        Precision p{k, s};
        if ((k != FP32 || s == Pure) && p.name() == text)
          return p;
      }
    return std::nullopt;
  }
  bool operator==(const Precision &o) const { return kind == o.kind && storage == o.storage; }
};

/// train.loss_scale: torch.amp.GradScaler's settings.
struct LossScale {
  double initScale = 65536, growthFactor = 2, backoffFactor = 0.5;
  int64_t growthInterval = 2000;
};

/// train.optimizer.lookahead.
struct Lookahead {
  enum AlphaSchedule { Constant, Cubic };
  int64_t every = 5;
  double alpha = 0.5;
  AlphaSchedule alphaSchedule = Constant;
  bool buffers = false, copyBack = false;
};

/// train.optimizer.groups[]: parameters whose names match a glob, with
/// their own learning-rate and weight-decay scales (the frontend puts them
/// on each parameter).
struct ParamGroup {
  std::vector<std::string> match;
  double lrScale = 1, weightDecayScale = 1;
};

/// train.optimizer.
struct Optimizer {
  enum Type { SGD, Adam, AdamW, Lamb };
  /// What SGD's momentum buffer accumulates: gradients (torch.optim.SGD) or
  /// lr-scaled steps (myrtle.ai's ResNet-9).
  enum MomentumOf { Gradient, Update };
  Type type = SGD;
  double lr = 0, weightDecay = 0;
  double momentum = 0, dampening = 0; ///< sgd
  bool nesterov = false;
  MomentumOf momentumOf = Gradient;
  double beta1 = 0.9, beta2 = 0.999; ///< adam, adamw, lamb
  double eps = 1e-8;                 ///< 1e-6 for lamb (defaultEps)
  std::vector<ParamGroup> groups;
  std::optional<Lookahead> lookahead;

  static double defaultEps(Type type) { return type == Lamb ? 1e-6 : 1e-8; }
};

/// train.ema.
struct Ema {
  double decay = 0;
  int64_t every = 1;
  bool perEpoch = false;
};

/// train.distributed (docs/distributed.md): the processes a step's global
/// batch is split over, fixed at compile time as the step's shapes are.
struct Distributed {
  int64_t ranks = 1;
  /// Batch norms over the whole batch take their statistics over every
  /// rank's samples (SyncBatchNorm), not each rank's alone.
  bool syncBatchNorm = false;
  /// What each rank keeps (ZeRO): everything (None); 1/N of the optimizer
  /// moments (Optimizer, ZeRO-1); those and the reduced gradients
  /// (Gradients, ZeRO-2); and the parameters (Parameters, FSDP: refused).
  enum Shard { None, Optimizer, Gradients, Parameters };
  Shard shard = None;
  bool sharded() const { return shard != None && ranks > 1; }
};

/// model.json's train section.
struct TrainRecipe {
  int64_t batchSize = 0;
  double epochs = 1;
  uint64_t seed = 0;
  bool dropLast = true;
  Optimizer optimizer;
  ScheduleDesc schedule;
  /// one_cycle's cycle_momentum, when the model says it (false is the one
  /// value tcc builds).
  std::optional<bool> cycleMomentum;
  Precision precision;
  std::optional<LossScale> lossScale; ///< fp16-mixed only
  std::optional<Ema> ema;
  std::optional<double> gradClipNorm;
  int64_t accumulate = 1;
  std::optional<int64_t> memoryBudget; ///< bytes
  bool deterministic = false;
  Distributed distributed;
};

/// model.json's data section.
struct DataRecipe {
  enum Format { Idx, Cifar10, Npy };
  Format format = Idx;
  std::string path;
  AugmentConfig augment;
  /// Per channel, after scaling to [0, 1]; the frontend fills one value
  /// per channel of an image input.
  std::vector<float> mean, std;

  static const char *formatName(Format f) {
    return f == Idx ? "idx" : f == Cifar10 ? "cifar10" : "npy";
  }
};

/// model.json's eval section.
struct EvalRecipe {
  bool flipViews = false, translateViews = false; ///< tta: "flip", "translate"
  int64_t translate = 2;
  int64_t batchSize = 0;
};

struct Recipe {
  TrainRecipe train;
  DataRecipe data;
  EvalRecipe eval;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_RECIPE_H
