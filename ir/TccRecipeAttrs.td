//===- TccRecipeAttrs.td - The training recipe as attributes -*- tablegen -*-===//
//
// model.json's train, data and eval sections as typed attributes on the
// module (tcc.train, tcc.data, tcc.eval), each the image of a struct of
// runtime/Recipe.h (ir/TccRecipeAttrs.h converts both ways). The frontend
// fills every field, so no parameter has a default here: runtime/Recipe.h
// holds the defaults. The verifiers keep hand-written IR to what the
// frontend accepts.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RECIPE_ATTRS_TD
#define TCC_RECIPE_ATTRS_TD

include "ir/TccDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Parameters (parsed and printed by ir/TccRecipeAttrs.cpp)
//===----------------------------------------------------------------------===//

// A double (ir/TccRecipeAttrs.h's F64 hashes it), printed so that it
// parses back to the same bits; integers parse too.
def Tcc_F64Param : AttrParameter<"::mlir::tcc::F64", "a 64-bit float"> {
  let parser = "::mlir::tcc::parseF64Param($_parser)";
  let printer = "::mlir::tcc::printF64Param($_printer, $_self)";
}
def Tcc_OptionalF64Param : OptionalParameter<"std::optional<::mlir::tcc::F64>", "a 64-bit float or none"> {
  let parser = "::mlir::tcc::parseOptionalF64Param($_parser)";
  let printer = "::mlir::tcc::printF64Param($_printer, *$_self)";
}
def Tcc_OptionalI64Param : OptionalParameter<"std::optional<int64_t>", "an integer or none"> {
  let printer = "$_printer << *$_self";
}
def Tcc_BoolParam : AttrParameter<"bool", "true or false"> {
  let parser = "::mlir::tcc::parseBoolParam($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}
def Tcc_DefaultFalseParam : AttrParameter<"bool", "true or false (default false)"> {
  let parser = "::mlir::tcc::parseBoolParam($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
  let defaultValue = "false";
}
def Tcc_F64ArrayParam : ArrayRefParameter<"::mlir::tcc::F64", "64-bit floats"> {
  let parser = "::mlir::tcc::parseF64ArrayParam($_parser)";
  let printer = "::mlir::tcc::printF64ArrayParam($_printer, $_self)";
}

//===----------------------------------------------------------------------===//
// Enums (the same order as runtime/Recipe.h's, which the converters check)
//===----------------------------------------------------------------------===//

class Tcc_Enum<string name, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, "", cases> {
  let cppNamespace = "::mlir::tcc";
  let genSpecializedAttr = 0;
}

def Tcc_PrecisionKind : Tcc_Enum<"PrecisionKind", [
    I32EnumAttrCase<"FP32", 0, "fp32">, I32EnumAttrCase<"BF16", 1, "bf16">,
    I32EnumAttrCase<"FP16", 2, "fp16">]>;
def Tcc_PrecisionStorage : Tcc_Enum<"PrecisionStorage", [
    I32EnumAttrCase<"Mixed", 0, "mixed">, I32EnumAttrCase<"Pure", 1, "pure">]>;
def Tcc_OptimizerType : Tcc_Enum<"OptimizerType", [
    I32EnumAttrCase<"SGD", 0, "sgd">, I32EnumAttrCase<"Adam", 1, "adam">,
    I32EnumAttrCase<"AdamW", 2, "adamw">, I32EnumAttrCase<"Lamb", 3, "lamb">]>;
def Tcc_MomentumOf : Tcc_Enum<"MomentumOf", [
    I32EnumAttrCase<"Gradient", 0, "gradient">, I32EnumAttrCase<"Update", 1, "update">]>;
def Tcc_ShardMode : Tcc_Enum<"ShardMode", [
    I32EnumAttrCase<"None", 0, "none">, I32EnumAttrCase<"Optimizer", 1, "optimizer">,
    I32EnumAttrCase<"Gradients", 2, "gradients">,
    I32EnumAttrCase<"Parameters", 3, "parameters">]>;
def Tcc_ShardParam : EnumParameter<Tcc_ShardMode> {
  let defaultValue = "::mlir::tcc::ShardMode::None";
}
def Tcc_AlphaSchedule : Tcc_Enum<"AlphaSchedule", [
    I32EnumAttrCase<"Constant", 0, "constant">, I32EnumAttrCase<"Cubic", 1, "cubic">]>;
def Tcc_ScheduleType : Tcc_Enum<"ScheduleType", [
    I32EnumAttrCase<"Constant", 0, "constant">, I32EnumAttrCase<"Step", 1, "step">,
    I32EnumAttrCase<"LinearWarmup", 2, "linear_warmup">,
    I32EnumAttrCase<"OneCycle", 3, "one_cycle">, I32EnumAttrCase<"Cosine", 4, "cosine">,
    I32EnumAttrCase<"PiecewiseLinear", 5, "piecewise_linear">]>;
def Tcc_ScheduleUnit : Tcc_Enum<"ScheduleUnit", [
    I32EnumAttrCase<"Epoch", 0, "epoch">, I32EnumAttrCase<"Step", 1, "step">]>;
def Tcc_Anneal : Tcc_Enum<"Anneal", [
    I32EnumAttrCase<"Cos", 0, "cos">, I32EnumAttrCase<"Linear", 1, "linear">]>;
def Tcc_DataFormat : Tcc_Enum<"DataFormat", [
    I32EnumAttrCase<"Idx", 0, "idx">, I32EnumAttrCase<"Cifar10", 1, "cifar10">,
    I32EnumAttrCase<"Npy", 2, "npy">]>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Tcc_RecipeAttr<string name, string attrMnemonic>
    : AttrDef<Tcc_Dialect, name> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tcc_PrecisionAttr : Tcc_RecipeAttr<"Precision", "precision"> {
  let summary = "train.precision: the 16-bit format and where parameters live";
  let description = [{
    `#tcc.precision<kind = bf16, storage = mixed>` is model.json's
    "bf16-mixed": conv and linear layers compute in bf16 with f32 master
    weights; storage `pure` keeps their parameters in 16 bits too
    (model.half()). fp32 is always `pure`.
  }];
  let parameters = (ins EnumParameter<Tcc_PrecisionKind>:$kind,
                        EnumParameter<Tcc_PrecisionStorage>:$storage);
}

def Tcc_LossScaleAttr : Tcc_RecipeAttr<"LossScale", "loss_scale"> {
  let summary = "train.loss_scale: torch.amp.GradScaler's settings";
  let parameters = (ins Tcc_F64Param:$init_scale, Tcc_F64Param:$growth_factor,
                        Tcc_F64Param:$backoff_factor, "int64_t":$growth_interval);
}

def Tcc_LookaheadAttr : Tcc_RecipeAttr<"Lookahead", "lookahead"> {
  let summary = "train.optimizer.lookahead: slow weights every `every` steps";
  let parameters = (ins "int64_t":$every, Tcc_F64Param:$alpha,
                        EnumParameter<Tcc_AlphaSchedule>:$alpha_schedule,
                        Tcc_BoolParam:$buffers, Tcc_BoolParam:$copy_back);
}

def Tcc_OptimizerAttr : Tcc_RecipeAttr<"Optimizer", "optimizer"> {
  let summary = "train.optimizer, less its groups (on each parameter)";
  let description = [{
    Every field of every optimizer type: `momentum`, `dampening`, `nesterov`
    and `momentum_of` are SGD's; `beta1`, `beta2` and `eps` the Adam
    family's. The groups' scales are on the parameters (tcc.lr_scale,
    tcc.weight_decay_scale).
  }];
  let parameters = (ins EnumParameter<Tcc_OptimizerType>:$type, Tcc_F64Param:$lr,
                        Tcc_F64Param:$weight_decay, Tcc_F64Param:$momentum,
                        Tcc_F64Param:$dampening, Tcc_BoolParam:$nesterov,
                        EnumParameter<Tcc_MomentumOf>:$momentum_of, Tcc_F64Param:$beta1,
                        Tcc_F64Param:$beta2, Tcc_F64Param:$eps,
                        OptionalParameter<"LookaheadAttr">:$lookahead);
}

def Tcc_ScheduleAttr : Tcc_RecipeAttr<"Schedule", "schedule"> {
  let summary = "train.schedule: the learning rate's factor over the run";
  let description = [{
    Every field of every schedule type (runtime/common/Schedule.h's
    ScheduleDesc): `step_size` and `gamma` are step's, `warmup` linear_warmup's
    and cosine's, `min_factor` cosine's, `pct_start` to `anneal` one_cycle's,
    `times` and `factors` piecewise_linear's points (2 to 64, t from 0 and
    increasing).
  }];
  let parameters = (ins EnumParameter<Tcc_ScheduleType>:$type,
                        EnumParameter<Tcc_ScheduleUnit>:$unit, "int64_t":$count_from,
                        Tcc_F64Param:$step_size, Tcc_F64Param:$gamma, Tcc_F64Param:$warmup,
                        Tcc_F64Param:$min_factor, Tcc_F64Param:$pct_start,
                        Tcc_F64Param:$div_factor, Tcc_F64Param:$final_div_factor,
                        EnumParameter<Tcc_Anneal>:$anneal, Tcc_F64ArrayParam:$times,
                        Tcc_F64ArrayParam:$factors);
}

def Tcc_EmaAttr : Tcc_RecipeAttr<"Ema", "ema"> {
  let summary = "train.ema: an exponential moving average of the weights";
  let parameters = (ins Tcc_F64Param:$decay, "int64_t":$every, Tcc_BoolParam:$per_epoch);
}

def Tcc_TrainAttr : Tcc_RecipeAttr<"Train", "train"> {
  let summary = "model.json's train section, every default filled";
  let description = [{
    On the module as `tcc.train`. `memory_budget` is in bytes; the optional
    fields are absent where model.json has none. `ranks` (train.distributed,
    1 when absent) is how many processes share `batch_size`: each rank's
    step trains `batch_size / ranks` samples; with `sync_batch_norm` the
    batch norms over the whole batch take their statistics over every
    rank's samples; `shard` is what each rank keeps of the optimizer state
    (ZeRO: docs/distributed.md). The frontend alone reads
    the optimizer's groups (it puts their scales on the parameters) and
    one_cycle's cycle_momentum (a warning), so neither is here.
  }];
  let parameters = (ins "int64_t":$batch_size, Tcc_F64Param:$epochs, "uint64_t":$seed,
                        Tcc_BoolParam:$drop_last, "OptimizerAttr":$optimizer,
                        "ScheduleAttr":$schedule, "PrecisionAttr":$precision,
                        "int64_t":$accumulate, Tcc_BoolParam:$deterministic,
                        OptionalParameter<"LossScaleAttr">:$loss_scale,
                        OptionalParameter<"EmaAttr">:$ema,
                        Tcc_OptionalF64Param:$grad_clip_norm,
                        Tcc_OptionalI64Param:$memory_budget,
                        DefaultValuedParameter<"int64_t", "1">:$ranks,
                        Tcc_DefaultFalseParam:$sync_batch_norm,
                        Tcc_ShardParam:$shard);
}

def Tcc_DataAttr : Tcc_RecipeAttr<"Data", "data"> {
  let summary = "model.json's data section, every default filled";
  let description = [{
    On the module as `tcc.data`: the data set and its augmentation
    (runtime/common/Batch.h's AugmentConfig) and normalization (per channel).
  }];
  let parameters = (ins EnumParameter<Tcc_DataFormat>:$format, StringRefParameter<>:$path,
                        "int64_t":$random_crop_padding, Tcc_BoolParam:$flip,
                        Tcc_BoolParam:$alternate_flip, "int64_t":$translate,
                        "int64_t":$cutout, Tcc_BoolParam:$reflect, Tcc_BoolParam:$balanced,
                        Tcc_F64ArrayParam:$mean, Tcc_F64ArrayParam:$std);
}

def Tcc_EvalAttr : Tcc_RecipeAttr<"Eval", "eval"> {
  let summary = "model.json's eval section, every default filled";
  let description = [{
    On the module as `tcc.eval`: the test-time augmentation views
    (`tta_flip`, `tta_translate` by `translate` pixels) and the batch size.
  }];
  let parameters = (ins Tcc_BoolParam:$tta_flip, Tcc_BoolParam:$tta_translate,
                        "int64_t":$translate, "int64_t":$batch_size);
}

#endif // TCC_RECIPE_ATTRS_TD
