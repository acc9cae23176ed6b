//===- ImportOps.cpp - One model.json node -> tcc ops ---------------------===//
//
// Only the mapping lives here: attribute names and parameter shapes. Result
// shapes and their checks come from the ops' type inference.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportOps.h"

#include "ir/TccOps.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tcc;
using ::tcc::frontend::NodeSpec;

namespace {

/// Typed access to a node's normalised attributes (ModelSpec filled every
/// default, so a missing key is a bug, not a user error).
class NodeAttrs {
public:
  NodeAttrs(OpBuilder &b, const NodeSpec &node) : b(b), json(node.attrs) {}
  int64_t i64(const char *key) const { return json.at(key).get<int64_t>(); }
  double f64(const char *key) const { return json.at(key).get<double>(); }
  std::vector<int64_t> ints(const char *key) const {
    return json.at(key).get<std::vector<int64_t>>();
  }
  NamedAttribute pair(const char *key) const {
    return b.getNamedAttr(key, b.getDenseI64ArrayAttr(ints(key)));
  }
  NamedAttribute f64Attr(const char *key) const {
    return b.getNamedAttr(key, b.getF64FloatAttr(f64(key)));
  }
  NamedAttribute i64Attr(const char *name, int64_t value) const {
    return b.getNamedAttr(name, b.getI64IntegerAttr(value));
  }

private:
  OpBuilder &b;
  const nlohmann::json &json;
};

std::string shapeStr(Value v) {
  return formatShape(cast<ShapedType>(v.getType()).getShape());
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// A value's shape without the batch dimension, as model.json's shapes are
/// written: [64, 10] -> [10].
std::string sampleShapeStr(Value v) { return formatShape(shapeOf(v).drop_front()); }

/// PyTorch allows negative axes; the IR does not. Out-of-range axes stay
/// out of range (and are reported as the user wrote them, below).
int64_t normalizeAxis(int64_t axis, Value v) {
  return axis < 0 ? axis + static_cast<int64_t>(shapeOf(v).size()) : axis;
}

bool axisInRange(int64_t axis, Value v) {
  int64_t rank = static_cast<int64_t>(shapeOf(v).size());
  return axis >= -rank && axis < rank;
}

/// operandSegmentSizes of the normalisation ops: input, weight?, bias?, then
/// `trailing` required operands.
NamedAttribute segments(OpBuilder &b, Value weight, Value bias, int trailing) {
  SmallVector<int32_t> sizes{1, weight ? 1 : 0, bias ? 1 : 0};
  sizes.append(trailing, 1);
  return b.getNamedAttr("operandSegmentSizes", b.getDenseI32ArrayAttr(sizes));
}

SmallVector<Value> present(std::initializer_list<Value> values) {
  SmallVector<Value> out;
  for (Value v : values)
    if (v)
      out.push_back(v);
  return out;
}

} // namespace

/// An elementwise op of two inputs needs one shape: the error names each
/// input with its per-sample shape (the batch is the run's, not the user's).
LogicalResult NodeImporter::checkSameShapes(const NodeSpec &node, ArrayRef<Value> inputs,
                                            StringRef verb) {
  if (shapeOf(inputs[0]) == shapeOf(inputs[1]))
    return success();
  return fail(&node, verb.str() + " '" + node.inputs[0] + "' (" + sampleShapeStr(inputs[0]) +
                         " per sample) and '" + node.inputs[1] + "' (" +
                         sampleShapeStr(inputs[1]) +
                         " per sample): elementwise inputs need the same shape; change one "
                         "of the layers that computes them");
}

LogicalResult NodeImporter::importNode(const NodeSpec &node) {
  SmallVector<Value> inputs;
  for (const std::string &name : node.inputs)
    inputs.push_back(values.lookup(name));
  Value x = inputs.front();
  NodeAttrs a(builder, node);
  const std::string &kind = node.op;
  Operation *op = nullptr;
  if (node.attrs.contains("axis") && !axisInRange(a.i64("axis"), x))
    return fail(&node, "axis " + std::to_string(a.i64("axis")) +
                           " is out of range for input " + shapeStr(x));

  if (kind == "conv2d") {
    if (shapeOf(x).size() != 4)
      return fail(&node, "needs an [N, C, H, W] input, got " + shapeStr(x));
    int64_t channels = shapeOf(x)[1], groups = a.i64("groups");
    if (channels % groups)
      return fail(&node, "groups " + std::to_string(groups) +
                             " must divide the input channels (" +
                             std::to_string(channels) + ")");
    std::vector<int64_t> kernel = a.ints("kernel");
    int64_t out = a.i64("out_channels");
    // Bounding the weight first bounds every product below by it.
    if (failed(checkWeightSize(node, {out, channels / groups, kernel[0], kernel[1]},
                               "lower out_channels or kernel, or raise groups")))
      return failure();
    int64_t area = kernel[0] * kernel[1];
    int64_t fanIn = channels / groups * area, fanOut = out * area;
    Value w = addParameter(node, "weight",
                           {out, channels / groups, kernel[0], kernel[1]},
                           fanIn, fanOut);
    Value b = addParameter(node, "bias", {out}, fanIn, fanOut);
    op = create<Conv2dOp>(node, present({x, w, b}),
                          {a.pair("stride"), a.pair("padding"),
                           a.pair("dilation"), a.i64Attr("groups", groups)});
  } else if (kind == "linear") {
    // Image features need a flatten or a pool; a [N, T, F] sequence a linear
    // applied per token, which is not built yet (torch.nn.Linear's last-axis
    // semantics come with the transformer ops).
    if (shapeOf(x).size() != 2)
      return fail(&node, "needs an [N, features] input, got " + shapeStr(x) +
                             (shapeOf(x).size() == 4
                                  ? "; add a flatten (or global pool) node before it"
                                  : "; a linear applied to each position of a sequence "
                                    "([N, T, features], as torch.nn.Linear does) is not "
                                    "supported yet; a flatten before it would mix all "
                                    "positions into one vector instead"));
    int64_t out = a.i64("out_features");
    int64_t in = shapeOf(x).back();
    if (failed(checkWeightSize(node, {out, in},
                               "lower out_features or the input's features")))
      return failure();
    Value w = addParameter(node, "weight", {out, in}, in, out);
    Value b = addParameter(node, "bias", {out}, in, out);
    op = create<LinearOp>(node, present({x, w, b}), {});
  } else if (kind == "batch_norm") {
    size_t rank = shapeOf(x).size();
    if (rank != 2 && rank != 4)
      return fail(&node, "needs an [N, C] or [N, C, H, W] input, got " +
                             shapeStr(x) + "; flatten or reshape first");
    int64_t c = shapeOf(x)[1];
    Value w = addParameter(node, "weight", {c});
    Value b = addParameter(node, "bias", {c});
    Value mean = addBuffer(node, "running_mean", {c}, 0.0);
    Value var = addBuffer(node, "running_var", {c}, 1.0);
    op = create<BatchNormOp>(node, present({x, w, b, mean, var}),
                             {a.f64Attr("momentum"), a.f64Attr("eps"),
                              a.i64Attr("ghost_batch", a.i64("ghost_batch")),
                              builder.getNamedAttr(
                                  "ghost_strided",
                                  builder.getBoolAttr(node.attrs["ghost_grouping"] == "strided")),
                              segments(builder, w, b, 2)});
    if (op) {
      setBufferUpdate(mean, op->getResult(3));
      setBufferUpdate(var, op->getResult(4));
    }
  } else if (kind == "layer_norm") {
    int64_t rank = shapeOf(x).size();
    int64_t dims = node.attrs.at("normalized_dims").is_null()
                       ? rank - 1
                       : a.i64("normalized_dims");
    if (dims < 1 || dims >= rank)
      return fail(&node, "normalized_dims must be in [1, " +
                             std::to_string(rank - 1) + "] for input " +
                             shapeStr(x) + ", got " + std::to_string(dims));
    ArrayRef<int64_t> normalized = shapeOf(x).take_back(dims);
    Value w = addParameter(node, "weight", normalized);
    Value b = addParameter(node, "bias", normalized);
    op = create<LayerNormOp>(node, present({x, w, b}),
                             {a.i64Attr("normalized_dims", dims),
                              a.f64Attr("eps"), segments(builder, w, b, 0)});
  } else if (kind == "relu") {
    op = create<ReluOp>(node, x, {});
  } else if (kind == "leaky_relu") {
    op = create<LeakyReluOp>(node, x, {a.f64Attr("negative_slope")});
  } else if (kind == "elu") {
    op = create<EluOp>(node, x, {a.f64Attr("alpha")});
  } else if (kind == "celu") {
    op = create<CeluOp>(node, x, {a.f64Attr("alpha")});
  } else if (kind == "gelu") {
    op = create<GeluOp>(
        node, x,
        {builder.getNamedAttr("approximate",
                              builder.getStringAttr(node.attrs.at("approximate")
                                                        .get<std::string>()))});
  } else if (kind == "silu") {
    op = create<SiluOp>(node, x, {});
  } else if (kind == "sigmoid") {
    op = create<SigmoidOp>(node, x, {});
  } else if (kind == "tanh") {
    op = create<TanhOp>(node, x, {});
  } else if (kind == "scale") {
    op = create<ScaleOp>(node, x, {a.f64Attr("factor")});
  } else if (kind == "max_pool2d") {
    op = create<MaxPool2dOp>(node, x,
                             {a.pair("kernel"), a.pair("stride"), a.pair("padding")});
  } else if (kind == "avg_pool2d") {
    op = create<AvgPool2dOp>(
        node, x,
        {a.pair("kernel"), a.pair("stride"), a.pair("padding"),
         builder.getNamedAttr("count_include_pad",
                              builder.getBoolAttr(node.attrs.at("count_include_pad")
                                                      .get<bool>()))});
  } else if (kind == "global_avg_pool") {
    op = create<GlobalAvgPoolOp>(node, x, {});
  } else if (kind == "global_max_pool") {
    op = create<GlobalMaxPoolOp>(node, x, {});
  } else if (kind == "add") {
    if (failed(checkSameShapes(node, inputs, "adds")))
      return failure();
    op = create<AddOp>(node, inputs, {});
  } else if (kind == "mul") {
    // A [N, C, ...] tensor times a [N, C] or [N, C, 1, ...] gate, either
    // side: a channel gate (squeeze-and-excitation), broadcast over the rest.
    auto gates = [](Value gate, Value of) {
      ArrayRef<int64_t> g = shapeOf(gate), s = shapeOf(of);
      return s.size() >= 3 && g.take_front(2) == s.take_front(2) &&
             (g.size() == 2 || (g.size() == s.size() && g != s &&
                                llvm::all_of(g.drop_front(2), [](int64_t d) { return d == 1; })));
    };
    if (gates(inputs[1], inputs[0]) || gates(inputs[0], inputs[1])) {
      bool gateFirst = gates(inputs[0], inputs[1]);
      Value input = inputs[gateFirst ? 1 : 0], gate = inputs[gateFirst ? 0 : 1];
      if (shapeOf(gate).size() > 2) // [N, C, 1, 1] -> [N, C], a view
        gate = create<FlattenOp>(node, gate, {})->getResult(0);
      op = create<ChannelMulOp>(node, {input, gate}, {});
    } else {
      if (failed(checkSameShapes(node, inputs, "multiplies")))
        return failure();
      op = create<MulOp>(node, inputs, {});
    }
  } else if (kind == "concat") {
    op = create<ConcatOp>(node, inputs,
                          {a.i64Attr("axis", normalizeAxis(a.i64("axis"), x))});
  } else if (kind == "flatten") {
    op = create<FlattenOp>(node, x, {});
  } else if (kind == "reshape") {
    // The user's shape excludes the batch and may hold one -1.
    std::vector<int64_t> sample = a.ints("shape");
    int64_t batch = shapeOf(x)[0];
    int64_t perSample = cast<ShapedType>(x.getType()).getNumElements() / batch;
    std::string target = "[N";
    for (int64_t d : sample)
      target += ", " + std::to_string(d);
    target += "]";
    // The known dims' product, checked: it must divide the sample exactly.
    int64_t known = 1;
    for (int64_t d : sample)
      if (d != -1 && (__builtin_mul_overflow(known, d, &known) || known > perSample))
        return fail(&node, "cannot reshape " + shapeStr(x) + " to " + target +
                               ": the shape holds more than the " +
                               std::to_string(perSample) + " elements of a sample");
    SmallVector<int64_t> shape{batch};
    for (int64_t d : sample) {
      if (d == -1 && perSample % known != 0)
        return fail(&node, "cannot reshape " + shapeStr(x) + " to " + target + ": " +
                               std::to_string(perSample) +
                               " elements per sample are not a multiple of " +
                               std::to_string(known));
      shape.push_back(d == -1 ? perSample / known : d);
    }
    op = create<ReshapeOp>(
        node, x, {builder.getNamedAttr("shape", builder.getDenseI64ArrayAttr(shape))});
  } else if (kind == "transpose") {
    op = create<TransposeOp>(
        node, x, {builder.getNamedAttr("perm", builder.getDenseI64ArrayAttr(a.ints("perm")))});
  } else if (kind == "dropout") {
    op = create<DropoutOp>(node, {x, seed},
                           {a.f64Attr("p"), a.i64Attr("stream", dropoutStreams++)});
  } else if (kind == "softmax") {
    op = create<SoftmaxOp>(node, x, {a.i64Attr("axis", normalizeAxis(a.i64("axis"), x))});
  } else if (kind == "log_softmax") {
    op = create<LogSoftmaxOp>(node, x,
                              {a.i64Attr("axis", normalizeAxis(a.i64("axis"), x))});
  } else {
    return fail(&node, "internal error: the importer does not know op '" + kind + "'");
  }
  if (!op)
    return failure(); // the op's inference reported why
  for (Value result : op->getResults())
    if (failed(checkActivationSize(node, result)))
      return failure();
  values[node.name] = op->getResult(0);
  return success();
}
