//===- Interpreter.cpp - Runs tcc functions in double (tests only) --------===//
//
// The op -> kernel mapping mirrors the cpu target's printers (codegen/cpu/ops/,
// one file per op family) call for call: keep them in step when a printer
// changes.
//
//===----------------------------------------------------------------------===//

#include "test/gradients/Interpreter.h"

#include "codegen/common/KernelArgs.h"
#include "ir/TccOps.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Step.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tcc;
namespace k = ::tcc::rt::kernels;

namespace tcc::test {

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

int64_t Tensor::numElements() const { return product(shape); }

Tensor Tensor::floats(ArrayRef<int64_t> shape, std::vector<double> data) {
  Tensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.f = std::move(data);
  return t;
}

Tensor Tensor::ints(ArrayRef<int64_t> shape, std::vector<int64_t> data) {
  Tensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.isInt = true;
  t.i = std::move(data);
  return t;
}

Tensor Tensor::zeros(Type tensorType) {
  auto type = cast<RankedTensorType>(tensorType);
  Tensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.isInt = isa<IntegerType>(type.getElementType());
  if (t.isInt)
    t.i.assign(t.numElements(), 0);
  else
    t.f.assign(t.numElements(), 0.0);
  return t;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

namespace {

ArrayRef<int64_t> dimsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
int64_t numElementsOf(Value v) { return product(dimsOf(v)); }

double f64(const APFloat &v) { return v.convertToDouble(); }

k::Reduction reduction(StringRef r) {
  return r == "sum" ? k::Reduction::Sum : k::Reduction::Mean;
}

using kernel_args::around;
using kernel_args::keptAxis;
using kernel_args::Around;

class Run {
public:
  explicit Run(std::string &error) : error(error) {}

  bool runFunction(func::FuncOp func, ArrayRef<Tensor> args,
                   std::vector<Tensor> &results) {
    if (!func.getBody().hasOneBlock())
      return fail(func, "expected a function of one block");
    Block &block = func.getBody().front();
    if (block.getNumArguments() != args.size())
      return fail(func, "expected " + std::to_string(block.getNumArguments()) +
                            " arguments, got " + std::to_string(args.size()));
    for (auto [arg, t] : llvm::zip(block.getArguments(), args)) {
      Tensor expected = Tensor::zeros(arg.getType());
      if (expected.shape != t.shape || expected.isInt != t.isInt ||
          (t.isInt ? t.i.size() : t.f.size()) !=
              static_cast<size_t>(t.numElements()))
        return fail(func, "argument #" + std::to_string(arg.getArgNumber()) +
                              " does not match its type");
      values[arg] = t;
    }
    for (Operation &op : block) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        results.clear();
        for (Value v : ret.getOperands()) {
          if (!values.count(v))
            return fail(&op, "returns an undefined value");
          results.push_back(values[v]);
        }
        return true;
      }
      if (!runOp(&op))
        return false;
    }
    return fail(func, "has no func.return");
  }

private:
  std::string &error;
  llvm::DenseMap<Value, Tensor> values;
  /// The results of the op being run, inserted into `values` once it ran.
  SmallVector<Tensor, 5> out;
  Operation *current = nullptr;

  bool fail(Operation *op, const std::string &message) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "interpreter: ";
    if (op)
      os << "'" << op->getName() << "' at " << op->getLoc() << ": ";
    os << message;
    error = os.str();
    return false;
  }

  // Operand and result buffers. Operands are looked up (never inserted)
  // while a kernel runs, so the pointers stay valid.
  const Tensor *operand(Value v) {
    auto it = values.find(v);
    return it == values.end() ? nullptr : &it->second;
  }
  const double *in(Value v) {
    if (!v)
      return nullptr;
    const Tensor *t = operand(v);
    return t && !t->isInt ? t->f.data() : nullptr;
  }
  const int64_t *inInt(Value v) {
    const Tensor *t = operand(v);
    return t && t->isInt ? t->i.data() : nullptr;
  }
  double *res(Value v) {
    return out[cast<OpResult>(v).getResultNumber()].f.data();
  }
  int64_t *resInt(Value v) {
    return out[cast<OpResult>(v).getResultNumber()].i.data();
  }

  bool runOp(Operation *op) {
    current = op;
    // Every operand must be defined, with the element kind of its type.
    for (Value v : op->getOperands()) {
      const Tensor *t = operand(v);
      if (!t)
        return fail(op, "an operand is undefined (not computed before)");
      if (t->isInt != isa<IntegerType>(getElementTypeOrSelf(v.getType())))
        return fail(op, "an operand's buffer kind does not match its type");
    }
    out.clear();
    for (Value r : op->getResults()) {
      if (!isa<RankedTensorType>(r.getType()) ||
          !cast<RankedTensorType>(r.getType()).hasStaticShape())
        return fail(op, "results must be statically shaped tensors");
      out.push_back(Tensor::zeros(r.getType()));
    }
    if (!(runConstant(op) || runNN(op) || runActivation(op) || runTrain(op)))
      return error.empty() ? fail(op, "the interpreter cannot run this op")
                           : false;
    for (auto [r, t] : llvm::zip(op->getResults(), out))
      values[r] = std::move(t);
    return true;
  }

  //===--------------------------------------------------------------------===//
  // arith.constant
  //===--------------------------------------------------------------------===//

  bool runConstant(Operation *op) {
    auto c = dyn_cast<arith::ConstantOp>(op);
    if (!c)
      return false;
    Tensor &t = out[0];
    if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue())) {
      int64_t n = t.numElements(), j = 0;
      if (t.isInt) {
        for (const APInt &v : dense.getValues<APInt>())
          if (j < n)
            t.i[j++] = v.getSExtValue();
      } else {
        for (const APFloat &v : dense.getValues<APFloat>())
          if (j < n)
            t.f[j++] = v.convertToDouble();
      }
      if (dense.isSplat())
        for (; j < n; ++j) {
          if (t.isInt)
            t.i[j] = t.i[0];
          else
            t.f[j] = t.f[0];
        }
      return true;
    }
    return fail(op, "only dense tensor constants are supported"), false;
  }

  //===--------------------------------------------------------------------===//
  // codegen/cpu/ops/: ContractionOps, NormOps, PoolOps, ArithmeticOps
  //===--------------------------------------------------------------------===//

  /// The dropout of an attention op, as cpu::attention_dropout gives it to
  /// the kernels of one process.
  template <class AttentionOp> k::AttentionDropout attentionDropout(AttentionOp o) {
    Value seed = o.getSeed();
    return {f64(o.getDropout()), seed ? uint64_t(inInt(seed)[0]) : 0,
            uint64_t(o.getStream()), 0};
  }

  bool runNN(Operation *op) {
    return llvm::TypeSwitch<Operation *, bool>(op)
        .Case([&](Conv2dOp o) {
          k::conv2d_forward<double>(
              kernel_args::conv2d(o),
              in(o.getInput()), in(o.getWeight()), in(o.getBias()),
              res(o.getResult()));
          return true;
        })
        .Case([&](Conv2dBackwardDataOp o) {
          k::conv2d_backward_data<double>(
              kernel_args::conv2d(o),
              in(o.getGrad()), in(o.getWeight()), res(o.getResult()));
          return true;
        })
        .Case([&](Conv2dBackwardFilterOp o) {
          k::conv2d_backward_filter<double>(
              kernel_args::conv2d(o),
              in(o.getInput()), in(o.getGrad()), res(o.getResult()));
          return true;
        })
        .Case([&](LinearOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          k::linear_forward<double>(product(x.drop_back()), x.back(),
                                    dimsOf(o.getWeight())[0], in(o.getInput()),
                                    in(o.getWeight()), in(o.getBias()),
                                    res(o.getResult()));
          return true;
        })
        .Case([&](LinearBackwardDataOp o) {
          ArrayRef<int64_t> w = dimsOf(o.getWeight());
          k::linear_backward_data<double>(numElementsOf(o.getGrad()) / w[0], w[1],
                                          w[0], in(o.getGrad()), in(o.getWeight()),
                                          res(o.getResult()));
          return true;
        })
        .Case([&](LinearBackwardWeightOp o) {
          ArrayRef<int64_t> w = dimsOf(o.getResult());
          k::linear_backward_weight<double>(numElementsOf(o.getGrad()) / w[0], w[1],
                                            w[0], in(o.getGrad()), in(o.getInput()),
                                            res(o.getResult()));
          return true;
        })
        .Case([&](ScaledDotProductAttentionOp o) {
          k::attention_forward<double>(kernel_args::attention(o), attentionDropout(o),
                                       in(o.getQuery()), in(o.getKey()), in(o.getValue()),
                                       res(o.getResult()), res(o.getLogsumexp()));
          return true;
        })
        .Case([&](ScaledDotProductAttentionBackwardOp o) {
          k::attention_backward<double>(
              kernel_args::attention(o), attentionDropout(o), in(o.getGrad()),
              in(o.getQuery()), in(o.getKey()), in(o.getValue()), in(o.getResultValue()),
              in(o.getLogsumexp()), res(o.getGradQuery()), res(o.getGradKey()),
              res(o.getGradValue()));
          return true;
        })
        .Case([&](EmbeddingOp o) {
          ArrayRef<int64_t> w = dimsOf(o.getWeight());
          k::embedding_forward<double, double>(numElementsOf(o.getIds()), w[0], w[1],
                                               in(o.getIds()), in(o.getWeight()),
                                               res(o.getResult()));
          return true;
        })
        .Case([&](EmbeddingBackwardOp o) {
          k::embedding_backward<double, double>(
              numElementsOf(o.getIds()), o.getNumEmbeddings(), dimsOf(o.getResult())[1],
              o.getPaddingIdx(), in(o.getGrad()), in(o.getIds()), res(o.getResult()));
          return true;
        })
        .Case([&](MatmulOp o) {
          ArrayRef<int64_t> a = dimsOf(o.getLhs()), c = dimsOf(o.getResult());
          int64_t m = c[c.size() - 2], batch = product(c.drop_back(2));
          k::batched_matmul<double>(batch, m, numElementsOf(o.getLhs()) / product(a.drop_back(2)) / m,
                                    c.back(), o.getTransposeA(), o.getTransposeB(),
                                    in(o.getLhs()), in(o.getRhs()), res(o.getResult()));
          return true;
        })
        .Case([&](ReduceSumOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          ArrayRef<int64_t> axes = o.getAxes();
          if (std::optional<Around> a = keptAxis(o)) {
            k::reduce_sum_keep<double>(a->outer, a->axis, a->inner, in(o.getInput()),
                                       res(o.getResult()));
            return true;
          }
          bool flags[16] = {};
          if (x.size() > 16)
            return fail(op, "rank > 16");
          for (size_t d = 0; d < x.size(); ++d)
            flags[d] = llvm::is_contained(axes, static_cast<int64_t>(d));
          k::reduce_sum_dims<double>(static_cast<int>(x.size()), x.data(), flags,
                                     in(o.getInput()), res(o.getResult()),
                                     numElementsOf(o.getResult()));
          return true;
        })
        .Case([&](BatchNormOp o) {
          // Start the new running statistics from the old (in-place update).
          std::copy_n(in(o.getRunningMean()), numElementsOf(o.getRunningMean()),
                      res(o.getNewRunningMean()));
          std::copy_n(in(o.getRunningVar()), numElementsOf(o.getRunningVar()),
                      res(o.getNewRunningVar()));
          k::batch_norm_forward_train<double>(
              kernel_args::batchNorm(o), in(o.getInput()),
              in(o.getWeight()), in(o.getBias()), f64(o.getEps()),
              f64(o.getMomentum()), res(o.getResult()), res(o.getSavedMean()),
              res(o.getSavedInvstd()), res(o.getNewRunningMean()),
              res(o.getNewRunningVar()));
          return true;
        })
        .Case([&](BatchNormInferenceOp o) {
          k::batch_norm_forward_inference<double>(
              kernel_args::batchNorm(o), in(o.getInput()), in(o.getWeight()),
              in(o.getBias()), in(o.getRunningMean()), in(o.getRunningVar()),
              f64(o.getEps()), res(o.getResult()));
          return true;
        })
        .Case([&](BatchNormBackwardOp o) {
          k::batch_norm_backward<double>(
              kernel_args::batchNorm(o), in(o.getGrad()),
              in(o.getInput()), in(o.getWeight()), in(o.getSavedMean()),
              in(o.getSavedInvstd()), res(o.getGradInput()),
              res(o.getGradWeight()), res(o.getGradBias()));
          return true;
        })
        .Case([&](LayerNormOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          int64_t inner = product(x.take_back(o.getNormalizedDims()));
          k::layer_norm_forward<double>(
              numElementsOf(o.getInput()) / inner, inner, in(o.getInput()),
              in(o.getWeight()), in(o.getBias()), f64(o.getEps()),
              res(o.getResult()), res(o.getSavedMean()), res(o.getSavedInvstd()));
          return true;
        })
        .Case([&](LayerNormBackwardOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          int64_t inner = product(x.take_back(o.getNormalizedDims()));
          k::layer_norm_backward<double>(
              numElementsOf(o.getInput()) / inner, inner, in(o.getGrad()),
              in(o.getInput()), in(o.getWeight()), in(o.getSavedMean()),
              in(o.getSavedInvstd()), res(o.getGradInput()),
              res(o.getGradWeight()), res(o.getGradBias()));
          return true;
        })
        .Case([&](MaxPool2dOp o) {
          k::max_pool2d_forward<double>(kernel_args::pool2d(o),
                                        in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](MaxPool2dBackwardOp o) {
          k::max_pool2d_backward<double>(
              kernel_args::pool2d(o),
              in(o.getInput()), in(o.getGrad()), res(o.getResult()));
          return true;
        })
        .Case([&](AvgPool2dOp o) {
          k::avg_pool2d_forward<double>(kernel_args::pool2d(o),
                                        o.getCountIncludePad(), in(o.getInput()),
                                        res(o.getResult()));
          return true;
        })
        .Case([&](AvgPool2dBackwardOp o) {
          k::avg_pool2d_backward<double>(
              kernel_args::pool2d(o),
              o.getCountIncludePad(), in(o.getGrad()), res(o.getResult()));
          return true;
        })
        .Case([&](GlobalAvgPoolOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          k::global_avg_pool_forward<double>(x[0], x[1], x[2] * x[3],
                                             in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](GlobalMaxPoolOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          k::global_max_pool_forward<double>(x[0], x[1], x[2] * x[3],
                                             in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](GlobalAvgPoolBackwardOp o) {
          ArrayRef<int64_t> x = o.getInputShape();
          k::global_avg_pool_backward<double>(x[0], x[1], x[2] * x[3],
                                              in(o.getGrad()), res(o.getResult()));
          return true;
        })
        .Case([&](GlobalMaxPoolBackwardOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          k::global_max_pool_backward<double>(x[0], x[1], x[2] * x[3],
                                              in(o.getInput()), in(o.getGrad()),
                                              res(o.getResult()));
          return true;
        })
        .Default([](Operation *) { return false; });
  }

  //===--------------------------------------------------------------------===//
  // codegen/cpu/ops/ActivationOps.cpp. Forward (n, [attr,] x, y); backward
  // (n, [attr,] value = operand 1, grad = operand 0, result).
  //===--------------------------------------------------------------------===//

  bool runActivation(Operation *op) {
    if (op->getNumOperands() == 0 || op->getNumResults() == 0)
      return false;
    const int64_t n = numElementsOf(op->getResult(0));
    const double *x = in(op->getOperand(0));
    double *y = res(op->getResult(0));
    auto value = [&] { return in(op->getOperand(1)); };
    return llvm::TypeSwitch<Operation *, bool>(op)
        .Case([&](ReluOp) { return k::relu_forward<double>(n, x, y), true; })
        .Case([&](LeakyReluOp o) {
          return k::leaky_relu_forward<double>(n, f64(o.getNegativeSlope()), x, y),
                 true;
        })
        .Case([&](EluOp o) {
          return k::elu_forward<double>(n, f64(o.getAlpha()), x, y), true;
        })
        .Case([&](CeluOp o) {
          return k::celu_forward<double>(n, f64(o.getAlpha()), x, y), true;
        })
        .Case([&](GeluOp o) {
          if (o.getApproximate() == "tanh")
            k::gelu_tanh_forward<double>(n, x, y);
          else
            k::gelu_forward<double>(n, x, y);
          return true;
        })
        .Case([&](SiluOp) { return k::silu_forward<double>(n, x, y), true; })
        .Case([&](SigmoidOp) { return k::sigmoid_forward<double>(n, x, y), true; })
        .Case([&](TanhOp) { return k::tanh_forward<double>(n, x, y), true; })
        .Case([&](ReluBackwardOp) {
          return k::relu_backward<double>(n, value(), x, y), true;
        })
        .Case([&](LeakyReluBackwardOp o) {
          return k::leaky_relu_backward<double>(n, f64(o.getNegativeSlope()),
                                                value(), x, y),
                 true;
        })
        .Case([&](EluBackwardOp o) {
          return k::elu_backward<double>(n, f64(o.getAlpha()), value(), x, y), true;
        })
        .Case([&](CeluBackwardOp o) {
          return k::celu_backward<double>(n, f64(o.getAlpha()), value(), x, y), true;
        })
        .Case([&](GeluBackwardOp o) {
          if (o.getApproximate() == "tanh")
            k::gelu_tanh_backward<double>(n, value(), x, y);
          else
            k::gelu_backward<double>(n, value(), x, y);
          return true;
        })
        .Case([&](SiluBackwardOp) {
          return k::silu_backward<double>(n, value(), x, y), true;
        })
        .Case([&](SigmoidBackwardOp) {
          return k::sigmoid_backward<double>(n, value(), x, y), true;
        })
        .Case([&](TanhBackwardOp) {
          return k::tanh_backward<double>(n, value(), x, y), true;
        })
        .Default([](Operation *) { return false; });
  }

  //===--------------------------------------------------------------------===//
  // codegen/cpu/ops/: the other families (the ops gradients need)
  //===--------------------------------------------------------------------===//

  /// Copies operand `from` into result `to`, floats or ints.
  void copyInto(Value from, Value to) {
    const Tensor *t = operand(from);
    Tensor &r = out[cast<OpResult>(to).getResultNumber()];
    if (t->isInt)
      r.i = t->i;
    else
      r.f = t->f;
  }

  bool runTrain(Operation *op) {
    return llvm::TypeSwitch<Operation *, bool>(op)
        .Case([&](AddOp o) {
          k::add<double>(numElementsOf(o.getResult()), in(o.getLhs()), in(o.getRhs()),
                         res(o.getResult()));
          return true;
        })
        .Case([&](MulOp o) {
          k::mul<double>(numElementsOf(o.getResult()), in(o.getLhs()), in(o.getRhs()),
                         res(o.getResult()));
          return true;
        })
        .Case([&](ChannelMulOp o) {
          const int64_t planes = numElementsOf(o.getGate());
          k::channel_mul<double>(planes, numElementsOf(o.getInput()) / planes,
                                 in(o.getInput()), in(o.getGate()), res(o.getResult()));
          return true;
        })
        .Case([&](ChannelMulBackwardGateOp o) {
          const int64_t planes = numElementsOf(o.getResult());
          k::channel_mul_backward_gate<double>(planes, numElementsOf(o.getInput()) / planes,
                                               in(o.getGrad()), in(o.getInput()),
                                               res(o.getResult()));
          return true;
        })
        .Case([&](ScaleOp o) {
          k::scale<double>(numElementsOf(o.getResult()), f64(o.getFactor()),
                           in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](ScaleByOp o) {
          k::scale<double>(numElementsOf(o.getResult()), in(o.getFactor())[0],
                           in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case<FlattenOp, ReshapeOp>([&](auto o) {
          copyInto(o.getInput(), o.getResult());
          return true;
        })
        .Case([&](CastOp o) {
          // The cpu target only runs casts that keep the type (the others
          // change the storage format, which double buffers do not model).
          if (o.getInput().getType() != o.getType())
            return fail(op, "only casts to the same type are supported"), false;
          copyInto(o.getInput(), o.getResult());
          return true;
        })
        .Case([&](TransposeOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          if (operand(o.getInput())->isInt)
            k::transpose<int64_t>(static_cast<int>(x.size()), x.data(),
                                  o.getPerm().data(), inInt(o.getInput()),
                                  resInt(o.getResult()));
          else
            k::transpose<double>(static_cast<int>(x.size()), x.data(),
                                 o.getPerm().data(), in(o.getInput()),
                                 res(o.getResult()));
          return true;
        })
        .Case([&](ConcatOp o) {
          ArrayRef<int64_t> y = dimsOf(o.getResult());
          int64_t axis = o.getAxis();
          SmallVector<int64_t> sizes;
          for (Value v : o.getInputs())
            sizes.push_back(dimsOf(v)[axis]);
          int64_t outer = product(y.take_front(axis));
          int64_t inner = product(y.drop_front(axis + 1));
          int64_t count = static_cast<int64_t>(sizes.size());
          if (out[0].isInt) {
            SmallVector<const int64_t *> inputs;
            for (Value v : o.getInputs())
              inputs.push_back(inInt(v));
            k::concat<int64_t>(outer, inner, count, inputs.data(), sizes.data(),
                               resInt(o.getResult()));
          } else {
            SmallVector<const double *> inputs;
            for (Value v : o.getInputs())
              inputs.push_back(in(v));
            k::concat<double>(outer, inner, count, inputs.data(), sizes.data(),
                              res(o.getResult()));
          }
          return true;
        })
        .Case([&](PadChannelsOp o) {
          ArrayRef<int64_t> x = dimsOf(o.getInput());
          k::slice_backward<double>(x[0], o.getChannels(), product(x.drop_front(2)), 0, x[1],
                                    in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](SliceOp o) {
          Around a = around(dimsOf(o.getInput()), o.getAxis());
          if (out[0].isInt)
            k::slice<int64_t>(a.outer, a.axis, a.inner, o.getOffset(), o.getSize(),
                              inInt(o.getInput()), resInt(o.getResult()));
          else
            k::slice<double>(a.outer, a.axis, a.inner, o.getOffset(), o.getSize(),
                             in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](ExpandOp o) {
          Around a = around(dimsOf(o.getResult()), o.getAxis());
          k::expand<double>(a.outer, a.axis, a.inner, in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case([&](SliceBackwardOp o) {
          Around a = around(dimsOf(o.getResult()), o.getAxis());
          k::slice_backward<double>(a.outer, a.axis, a.inner, o.getOffset(),
                                    dimsOf(o.getGrad())[o.getAxis()], in(o.getGrad()),
                                    res(o.getResult()));
          return true;
        })
        .Case([&](DropoutOp o) {
          k::dropout_forward<double>(numElementsOf(o.getResult()), f64(o.getP()),
                                     uint64_t(inInt(o.getSeed())[0]), o.getStream(),
                                     in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case<SoftmaxOp, LogSoftmaxOp>([&](auto o) {
          Around a = around(dimsOf(o.getInput()), o.getAxis());
          if (isa<SoftmaxOp>(op))
            k::softmax_forward<double>(a.outer, a.axis, a.inner, in(o.getInput()),
                                       res(o.getResult()));
          else
            k::log_softmax_forward<double>(a.outer, a.axis, a.inner,
                                           in(o.getInput()), res(o.getResult()));
          return true;
        })
        .Case<SoftmaxBackwardOp, LogSoftmaxBackwardOp>([&](auto o) {
          Around a = around(dimsOf(o.getGrad()), o.getAxis());
          if (isa<SoftmaxBackwardOp>(op))
            k::softmax_backward<double>(a.outer, a.axis, a.inner,
                                        in(o.getResultValue()), in(o.getGrad()),
                                        res(o.getResult()));
          else
            k::log_softmax_backward<double>(a.outer, a.axis, a.inner,
                                            in(o.getResultValue()), in(o.getGrad()),
                                            res(o.getResult()));
          return true;
        })
        .Case([&](CrossEntropyOp o) {
          ArrayRef<int64_t> l = dimsOf(o.getLogits());
          k::cross_entropy_forward<double>(
              l[0], l[1], in(o.getLogits()), inInt(o.getLabels()),
              f64(o.getLabelSmoothing()), reduction(o.getReduction()),
              res(o.getResult()), static_cast<double *>(nullptr));
          return true;
        })
        .Case([&](TokenCrossEntropyOp o) {
          ArrayRef<int64_t> l = dimsOf(o.getLogits());
          k::token_cross_entropy_forward<double>(
              l[0] * l[1], l[2], in(o.getLogits()), inInt(o.getLabels()), o.getIgnoreIndex(),
              f64(o.getLabelSmoothing()), reduction(o.getReduction()), res(o.getResult()));
          return true;
        })
        .Case([&](TokenCrossEntropyBackwardOp o) {
          ArrayRef<int64_t> l = dimsOf(o.getLogits());
          k::token_cross_entropy_backward<double>(
              l[0] * l[1], l[2], in(o.getLogits()), inInt(o.getLabels()), o.getIgnoreIndex(),
              f64(o.getLabelSmoothing()), reduction(o.getReduction()), in(o.getGrad())[0],
              res(o.getResult()));
          return true;
        })
        .Case([&](CrossEntropyBackwardOp o) {
          ArrayRef<int64_t> l = dimsOf(o.getLogits());
          k::cross_entropy_backward<double>(
              l[0], l[1], in(o.getLogits()), inInt(o.getLabels()),
              f64(o.getLabelSmoothing()), reduction(o.getReduction()),
              in(o.getGrad())[0], res(o.getResult()));
          return true;
        })
        .Case([&](MseLossOp o) {
          k::mse_loss_forward<double>(numElementsOf(o.getInput()), in(o.getInput()),
                                      in(o.getTarget()), reduction(o.getReduction()),
                                      res(o.getResult()));
          return true;
        })
        .Case([&](MseLossBackwardOp o) {
          k::mse_loss_backward<double>(numElementsOf(o.getInput()), in(o.getInput()),
                                       in(o.getTarget()), reduction(o.getReduction()),
                                       in(o.getGrad())[0], res(o.getResult()));
          return true;
        })
        .Case([&](OneHotOp o) {
          k::one_hot<double>(dimsOf(o.getLabels())[0], o.getClasses(),
                             inInt(o.getLabels()), res(o.getResult()));
          return true;
        })
        .Default([](Operation *) { return false; });
  }
};

} // namespace

bool interpret(func::FuncOp func, ArrayRef<Tensor> args,
               std::vector<Tensor> &results, std::string &error) {
  error.clear();
  Run run(error);
  return run.runFunction(func, args, results);
}

} // namespace tcc::test
