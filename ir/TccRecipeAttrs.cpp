//===- TccRecipeAttrs.cpp - The training recipe as attributes -------------===//

#include "ir/TccRecipe.h"

#include "ir/TccAttrNames.h"
#include "ir/TccDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tcc;
namespace rt = ::tcc::rt;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

FailureOr<F64> mlir::tcc::parseF64Param(AsmParser &parser) {
  // Hand-written IR may say `lr = 1` for 1.0.
  int64_t integer = 0;
  OptionalParseResult parsedInteger = parser.parseOptionalInteger(integer);
  if (parsedInteger.has_value())
    return failed(*parsedInteger) ? FailureOr<F64>(failure())
                                  : FailureOr<F64>(F64(static_cast<double>(integer)));
  double value = 0;
  if (parser.parseFloat(value))
    return failure();
  return F64(value);
}

FailureOr<std::optional<F64>> mlir::tcc::parseOptionalF64Param(AsmParser &parser) {
  FailureOr<F64> value = parseF64Param(parser);
  if (failed(value))
    return failure();
  return std::optional<F64>(*value);
}

FailureOr<bool> mlir::tcc::parseBoolParam(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(), "expected true or false");
}

FailureOr<SmallVector<F64>> mlir::tcc::parseF64ArrayParam(AsmParser &parser) {
  SmallVector<F64> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        FailureOr<F64> value = parseF64Param(parser);
        if (failed(value))
          return failure();
        values.push_back(*value);
        return success();
      }))
    return failure();
  return values;
}

void mlir::tcc::printF64Param(AsmPrinter &printer, double value) {
  printer.printFloat(llvm::APFloat(value));
}

void mlir::tcc::printF64ArrayParam(AsmPrinter &printer, ArrayRef<F64> values) {
  printer << '[';
  llvm::interleaveComma(values, printer, [&](F64 v) { printF64Param(printer, v); });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// Verifiers: what the frontend accepts (frontend/TrainSpec.cpp, DataSpec.cpp)
//===----------------------------------------------------------------------===//

namespace {
using EmitError = function_ref<InFlightDiagnostic()>;

/// Fails with "NAME must be WHAT, got VALUE" unless `ok`.
LogicalResult check(EmitError emitError, bool ok, StringRef name, StringRef what, double value) {
  if (ok)
    return success();
  return emitError() << name << " must be " << what << ", got " << value;
}
LogicalResult check(EmitError emitError, bool ok, StringRef name, StringRef what, int64_t value) {
  if (ok)
    return success();
  return emitError() << name << " must be " << what << ", got " << value;
}
} // namespace

LogicalResult PrecisionAttr::verify(EmitError emitError, PrecisionKind kind,
                                    PrecisionStorage storage) {
  if (kind == PrecisionKind::FP32 && storage != PrecisionStorage::Pure)
    return emitError() << "fp32 has no mixed storage: use storage = pure";
  return success();
}

LogicalResult LossScaleAttr::verify(EmitError emitError, F64 initScale, F64 growthFactor,
                                    F64 backoffFactor, int64_t growthInterval) {
  return success(succeeded(check(emitError, initScale > 0, "init_scale", "> 0", initScale)) &&
                 succeeded(check(emitError, growthFactor > 1, "growth_factor", "> 1",
                                 growthFactor)) &&
                 succeeded(check(emitError, backoffFactor > 0 && backoffFactor < 1,
                                 "backoff_factor", "in (0, 1)", backoffFactor)) &&
                 succeeded(check(emitError, growthInterval >= 1, "growth_interval", ">= 1",
                                 growthInterval)));
}

LogicalResult LookaheadAttr::verify(EmitError emitError, int64_t every, F64 alpha,
                                    AlphaSchedule, bool, bool) {
  return success(succeeded(check(emitError, every >= 1, "every", ">= 1", every)) &&
                 succeeded(check(emitError, alpha > 0 && alpha < 1, "alpha", "in (0, 1)", alpha)));
}

LogicalResult OptimizerAttr::verify(EmitError emitError, OptimizerType, F64 lr,
                                    F64 weightDecay, F64 momentum, F64 dampening,
                                    bool nesterov, MomentumOf momentumOf, F64 beta1,
                                    F64 beta2, F64 eps, LookaheadAttr) {
  if (failed(check(emitError, lr > 0, "lr", "> 0", lr)) ||
      failed(check(emitError, weightDecay >= 0, "weight_decay", ">= 0", weightDecay)) ||
      failed(check(emitError, momentum >= 0 && momentum < 1, "momentum", "in [0, 1)", momentum)) ||
      failed(check(emitError, dampening >= 0 && dampening <= 1, "dampening", "in [0, 1]",
                   dampening)) ||
      failed(check(emitError, beta1 >= 0 && beta1 < 1, "beta1", "in [0, 1)", beta1)) ||
      failed(check(emitError, beta2 >= 0 && beta2 < 1, "beta2", "in [0, 1)", beta2)) ||
      failed(check(emitError, eps > 0, "eps", "> 0", eps)))
    return failure();
  if (nesterov && (momentum == 0 || dampening != 0))
    return emitError() << "nesterov needs momentum > 0 and dampening 0";
  if (momentumOf == MomentumOf::Update && (momentum == 0 || dampening != 0))
    return emitError() << "momentum_of = update needs momentum > 0 and dampening 0";
  return success();
}

LogicalResult ScheduleAttr::verify(EmitError emitError, ScheduleType type, ScheduleUnit,
                                   int64_t countFrom, F64 stepSize, F64 gamma, F64 warmup,
                                   F64 minFactor, F64 pctStart, F64 divFactor,
                                   F64 finalDivFactor, Anneal, ArrayRef<F64> times,
                                   ArrayRef<F64> factors) {
  if (countFrom != 0 && countFrom != 1)
    return emitError() << "count_from must be 0 or 1, got " << countFrom;
  if (failed(check(emitError, stepSize > 0, "step_size", "> 0", stepSize)) ||
      failed(check(emitError, gamma > 0, "gamma", "> 0", gamma)) ||
      failed(check(emitError, warmup >= 0, "warmup", ">= 0", warmup)) ||
      failed(check(emitError, minFactor >= 0 && minFactor <= 1, "min_factor", "in [0, 1]",
                   minFactor)) ||
      failed(check(emitError, pctStart > 0 && pctStart < 1, "pct_start", "in (0, 1)",
                   pctStart)) ||
      failed(check(emitError, divFactor > 0, "div_factor", "> 0", divFactor)) ||
      failed(check(emitError, finalDivFactor > 0, "final_div_factor", "> 0", finalDivFactor)))
    return failure();
  if (type == ScheduleType::LinearWarmup && !(warmup > 0))
    return emitError() << "a linear_warmup schedule needs warmup > 0";
  if (times.size() != factors.size())
    return emitError() << "times and factors must have as many values, got " << times.size()
                       << " and " << factors.size();
  if (type != ScheduleType::PiecewiseLinear)
    return times.empty() ? success()
                         : emitError() << "only a piecewise_linear schedule has points";
  // The code generators copy the points into fixed arrays.
  if (times.size() < 2 || times.size() > static_cast<size_t>(rt::kMaxSchedulePoints))
    return emitError() << "a piecewise_linear schedule needs 2 to " << rt::kMaxSchedulePoints
                       << " points, got " << times.size();
  for (size_t i = 0; i < times.size(); ++i)
    if ((i == 0 ? times[i] != 0 : !(times[i] > times[i - 1])) || factors[i] < 0)
      return emitError() << "schedule point " << i
                         << " must have t starting at 0 and increasing, and a factor >= 0";
  return success();
}

LogicalResult EmaAttr::verify(EmitError emitError, F64 decay, int64_t every, bool) {
  return success(succeeded(check(emitError, decay > 0 && decay < 1, "decay", "in (0, 1)", decay)) &&
                 succeeded(check(emitError, every >= 1, "every", ">= 1", every)));
}

LogicalResult TrainAttr::verify(EmitError emitError, int64_t batchSize, F64 epochs, uint64_t,
                                bool, OptimizerAttr optimizer, ScheduleAttr schedule,
                                PrecisionAttr precision, int64_t accumulate, bool,
                                LossScaleAttr lossScale, EmaAttr, std::optional<F64> gradClipNorm,
                                std::optional<int64_t> memoryBudget, int64_t ranks, bool,
                                ShardMode) {
  if (!optimizer || !schedule || !precision)
    return emitError() << "needs an optimizer, a schedule and a precision";
  if (failed(check(emitError, batchSize >= 1, "batch_size", ">= 1", batchSize)) ||
      failed(check(emitError, epochs > 0 && std::isfinite(double(epochs)), "epochs", "> 0", epochs)) ||
      failed(check(emitError, accumulate >= 1, "accumulate", ">= 1", accumulate)) ||
      failed(check(emitError, !gradClipNorm || *gradClipNorm > 0, "grad_clip_norm", "> 0",
                   double(gradClipNorm.value_or(F64(0))))) ||
      failed(check(emitError, !memoryBudget || *memoryBudget > 0, "memory_budget",
                   "> 0 bytes", memoryBudget.value_or(0))) ||
      failed(check(emitError, ranks >= 1 && batchSize % ranks == 0, "ranks",
                   ">= 1 and divide batch_size", ranks)))
    return failure();
  bool scalesLoss = toRecipe(precision).scalesLoss();
  if (scalesLoss != static_cast<bool>(lossScale))
    return emitError() << "loss_scale must be given with precision fp16 mixed, and only then";
  return success();
}

LogicalResult DataAttr::verify(EmitError emitError, DataFormat, StringRef path,
                               int64_t cropPadding, bool flip, bool alternateFlip,
                               int64_t translate, int64_t cutout, bool, bool,
                               ArrayRef<F64> mean, ArrayRef<F64> std) {
  if (path.empty())
    return emitError() << "path must not be empty";
  if (cropPadding < 0 || translate < 0 || cutout < 0)
    return emitError() << "random_crop_padding, translate and cutout must be >= 0";
  if (alternateFlip && !flip)
    return emitError() << "alternate_flip needs flip";
  if (mean.size() != std.size() || mean.empty())
    return emitError() << "mean and std must have a value per channel each";
  for (F64 s : std)
    if (!(s > 0))
      return emitError() << "std must be > 0, got " << s;
  return success();
}

LogicalResult EvalAttr::verify(EmitError emitError, bool, bool ttaTranslate, int64_t translate,
                               int64_t batchSize) {
  if (translate < 0 || (ttaTranslate && translate == 0))
    return emitError() << "translate must be >= 0, and > 0 with tta_translate";
  return check(emitError, batchSize >= 1, "batch_size", ">= 1", batchSize);
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

// The enums of runtime/Recipe.h and of the attributes count alike.
static_assert(int(PrecisionKind::BF16) == rt::Precision::BF16 &&
              int(PrecisionKind::FP16) == rt::Precision::FP16 &&
              int(PrecisionStorage::Pure) == rt::Precision::Pure);
static_assert(int(OptimizerType::Lamb) == rt::Optimizer::Lamb &&
              int(OptimizerType::AdamW) == rt::Optimizer::AdamW &&
              int(MomentumOf::Update) == rt::Optimizer::Update);
static_assert(int(AlphaSchedule::Cubic) == rt::Lookahead::Cubic);
static_assert(int(ShardMode::Parameters) == rt::Distributed::Parameters);
static_assert(int(ScheduleType::PiecewiseLinear) == rt::ScheduleDesc::PiecewiseLinear &&
              int(ScheduleType::OneCycle) == rt::ScheduleDesc::OneCycle &&
              int(ScheduleType::Cosine) == rt::ScheduleDesc::Cosine);
static_assert(int(DataFormat::Npy) == rt::DataRecipe::Npy &&
              int(DataFormat::Cifar10) == rt::DataRecipe::Cifar10);

ScheduleAttr mlir::tcc::getScheduleAttr(MLIRContext *context, const rt::ScheduleDesc &s) {
  SmallVector<F64> times(s.pointT, s.pointT + s.pointCount),
      factors(s.pointFactor, s.pointFactor + s.pointCount);
  return ScheduleAttr::get(context, ScheduleType(s.type),
                           s.perEpoch ? ScheduleUnit::Epoch : ScheduleUnit::Step, s.countFrom,
                           s.stepSize, s.gamma, s.warmup, s.minFactor, s.pctStart, s.divFactor,
                           s.finalDivFactor, s.annealCos ? Anneal::Cos : Anneal::Linear, times,
                           factors);
}

rt::ScheduleDesc mlir::tcc::toRecipe(ScheduleAttr a) {
  rt::ScheduleDesc s;
  s.type = rt::ScheduleDesc::Type(a.getType());
  s.perEpoch = a.getUnit() == ScheduleUnit::Epoch;
  s.countFrom = static_cast<int>(a.getCountFrom());
  s.stepSize = a.getStepSize();
  s.gamma = a.getGamma();
  s.warmup = a.getWarmup();
  s.minFactor = a.getMinFactor();
  s.pctStart = a.getPctStart();
  s.divFactor = a.getDivFactor();
  s.finalDivFactor = a.getFinalDivFactor();
  s.annealCos = a.getAnneal() == Anneal::Cos;
  s.pointCount = static_cast<int>(a.getTimes().size());
  llvm::copy(a.getTimes(), s.pointT);
  llvm::copy(a.getFactors(), s.pointFactor);
  return s;
}

rt::Precision mlir::tcc::toRecipe(PrecisionAttr a) {
  return {rt::Precision::Kind(a.getKind()), rt::Precision::Storage(a.getStorage())};
}

rt::Optimizer mlir::tcc::toRecipe(OptimizerAttr a) {
  rt::Optimizer o;
  o.type = rt::Optimizer::Type(a.getType());
  o.lr = a.getLr();
  o.weightDecay = a.getWeightDecay();
  o.momentum = a.getMomentum();
  o.dampening = a.getDampening();
  o.nesterov = a.getNesterov();
  o.momentumOf = rt::Optimizer::MomentumOf(a.getMomentumOf());
  o.beta1 = a.getBeta1();
  o.beta2 = a.getBeta2();
  o.eps = a.getEps();
  if (LookaheadAttr l = a.getLookahead())
    o.lookahead = rt::Lookahead{l.getEvery(), l.getAlpha(),
                                rt::Lookahead::AlphaSchedule(l.getAlphaSchedule()),
                                l.getBuffers(), l.getCopyBack()};
  return o;
}

TrainAttr mlir::tcc::getTrainAttr(MLIRContext *context, const rt::TrainRecipe &t) {
  const rt::Optimizer &o = t.optimizer;
  LookaheadAttr lookahead;
  if (o.lookahead)
    lookahead = LookaheadAttr::get(context, o.lookahead->every, o.lookahead->alpha,
                                   AlphaSchedule(o.lookahead->alphaSchedule),
                                   o.lookahead->buffers, o.lookahead->copyBack);
  auto optimizer = OptimizerAttr::get(context, OptimizerType(o.type), o.lr, o.weightDecay,
                                      o.momentum, o.dampening, o.nesterov,
                                      MomentumOf(o.momentumOf), o.beta1, o.beta2, o.eps,
                                      lookahead);
  auto precision = PrecisionAttr::get(context, PrecisionKind(t.precision.kind),
                                      PrecisionStorage(t.precision.storage));
  LossScaleAttr lossScale;
  if (t.lossScale)
    lossScale = LossScaleAttr::get(context, t.lossScale->initScale, t.lossScale->growthFactor,
                                   t.lossScale->backoffFactor, t.lossScale->growthInterval);
  EmaAttr ema;
  if (t.ema)
    ema = EmaAttr::get(context, t.ema->decay, t.ema->every, t.ema->perEpoch);
  std::optional<F64> gradClipNorm;
  if (t.gradClipNorm)
    gradClipNorm = *t.gradClipNorm;
  return TrainAttr::get(context, t.batchSize, t.epochs, t.seed, t.dropLast, optimizer,
                        getScheduleAttr(context, t.schedule), precision, t.accumulate,
                        t.deterministic, lossScale, ema, gradClipNorm, t.memoryBudget,
                        t.distributed.ranks, t.distributed.syncBatchNorm,
                        ShardMode(t.distributed.shard));
}

rt::TrainRecipe mlir::tcc::toRecipe(TrainAttr a) {
  rt::TrainRecipe t;
  t.batchSize = a.getBatchSize();
  t.epochs = a.getEpochs();
  t.seed = a.getSeed();
  t.dropLast = a.getDropLast();
  t.optimizer = toRecipe(a.getOptimizer());
  t.schedule = toRecipe(a.getSchedule());
  t.precision = toRecipe(a.getPrecision());
  t.accumulate = a.getAccumulate();
  t.deterministic = a.getDeterministic();
  if (LossScaleAttr l = a.getLossScale())
    t.lossScale = rt::LossScale{l.getInitScale(), l.getGrowthFactor(), l.getBackoffFactor(),
                                l.getGrowthInterval()};
  if (EmaAttr e = a.getEma())
    t.ema = rt::Ema{e.getDecay(), e.getEvery(), e.getPerEpoch()};
  if (std::optional<F64> norm = a.getGradClipNorm())
    t.gradClipNorm = *norm;
  t.memoryBudget = a.getMemoryBudget();
  t.distributed.ranks = a.getRanks();
  t.distributed.syncBatchNorm = a.getSyncBatchNorm();
  t.distributed.shard = rt::Distributed::Shard(a.getShard());
  return t;
}

DataAttr mlir::tcc::getDataAttr(MLIRContext *context, const rt::DataRecipe &d) {
  const rt::AugmentConfig &a = d.augment;
  SmallVector<F64> mean(d.mean.begin(), d.mean.end()), std(d.std.begin(), d.std.end());
  return DataAttr::get(context, DataFormat(d.format), d.path, a.cropPadding, a.flip,
                       a.alternateFlip, a.translate, a.cutout, a.reflect, a.balanced, mean, std);
}

rt::DataRecipe mlir::tcc::toRecipe(DataAttr a) {
  rt::DataRecipe d;
  d.format = rt::DataRecipe::Format(a.getFormat());
  d.path = a.getPath().str();
  d.augment.cropPadding = a.getRandomCropPadding();
  d.augment.flip = a.getFlip();
  d.augment.alternateFlip = a.getAlternateFlip();
  d.augment.translate = a.getTranslate();
  d.augment.cutout = a.getCutout();
  d.augment.reflect = a.getReflect();
  d.augment.balanced = a.getBalanced();
  d.mean.assign(a.getMean().begin(), a.getMean().end());
  d.std.assign(a.getStd().begin(), a.getStd().end());
  return d;
}

EvalAttr mlir::tcc::getEvalAttr(MLIRContext *context, const rt::EvalRecipe &e) {
  return EvalAttr::get(context, e.flipViews, e.translateViews, e.translate, e.batchSize);
}

rt::EvalRecipe mlir::tcc::toRecipe(EvalAttr a) {
  return {a.getTtaFlip(), a.getTtaTranslate(), a.getTranslate(), a.getBatchSize()};
}

TrainAttr mlir::tcc::moduleTrain(Operation *module) {
  return module->getAttrOfType<TrainAttr>(kTrainAttr);
}

FailureOr<rt::Recipe> mlir::tcc::moduleRecipe(Operation *module) {
  auto train = module->getAttrOfType<TrainAttr>(kTrainAttr);
  auto data = module->getAttrOfType<DataAttr>(kDataAttr);
  auto eval = module->getAttrOfType<EvalAttr>(kEvalAttr);
  if (!train || !data || !eval)
    return module->emitError() << "needs the recipe: " << kTrainAttr << " (#tcc.train), "
                               << kDataAttr << " (#tcc.data) and " << kEvalAttr
                               << " (#tcc.eval), as the frontend writes them";
  return rt::Recipe{toRecipe(train), toRecipe(data), toRecipe(eval)};
}
