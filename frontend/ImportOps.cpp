//===- ImportOps.cpp - One model.json node -> tcc ops ---------------------===//
//
// Only the mapping lives here: attribute names and parameter shapes. Result
// shapes and their checks come from the ops' type inference.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportOps.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

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
  NamedAttribute string(const char *key) const {
    return b.getNamedAttr(key, b.getStringAttr(json.at(key).get<std::string>()));
  }
  NamedAttribute boolean(const char *key) const {
    return b.getNamedAttr(key, b.getBoolAttr(json.at(key).get<bool>()));
  }
  /// An axis field as the IR takes it: counted from the front.
  NamedAttribute axis(const char *key, Value of) const;

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

NamedAttribute NodeAttrs::axis(const char *key, Value of) const {
  return i64Attr(key, normalizeAxis(i64(key), of));
}

bool axisInRange(int64_t axis, Value v) {
  int64_t rank = static_cast<int64_t>(shapeOf(v).size());
  return axis >= -rank && axis < rank;
}

/// operandSegmentSizes of the normalisation ops: input, weight?, bias?, then
/// `trailing` required operands and `absentAfter` absent optional ones.
NamedAttribute segments(OpBuilder &b, Value weight, Value bias, int trailing,
                        int absentAfter = 0) {
  SmallVector<int32_t> sizes{1, weight ? 1 : 0, bias ? 1 : 0};
  sizes.append(trailing, 1);
  sizes.append(absentAfter, 0);
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

/// One entry per model.json op: its checks against the input shapes and
/// the ops it becomes. Each returns the op whose first result is the node's
/// value, or null when it reported why not. (The op's fields and their
/// defaults are read in OpSpecs.cpp; result shapes come from the ops' type
/// inference.)
struct NodeImporter::Ops {
  using Import = Operation *(*)(NodeImporter &, const NodeSpec &, ArrayRef<Value>,
                                const NodeAttrs &);

  static Operation *failed(NodeImporter &im, const NodeSpec &node, const Twine &message) {
    (void)im.fail(&node, message);
    return nullptr;
  }

  static Operation *conv2d(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                           const NodeAttrs &a) {
    Value x = in[0];
    if (shapeOf(x).size() != 4)
      return failed(im, node, "needs an [N, C, H, W] input, got " + shapeStr(x));
    int64_t channels = shapeOf(x)[1], groups = a.i64("groups");
    if (channels % groups)
      return failed(im, node, "groups " + std::to_string(groups) +
                                  " must divide the input channels (" +
                                  std::to_string(channels) + ")");
    std::vector<int64_t> kernel = a.ints("kernel");
    int64_t out = a.i64("out_channels");
    // Bounding the weight first bounds every product below by it.
    if (mlir::failed(im.checkWeightSize(node, {out, channels / groups, kernel[0], kernel[1]},
                                        "lower out_channels or kernel, or raise groups")))
      return nullptr;
    int64_t area = kernel[0] * kernel[1];
    int64_t fanIn = channels / groups * area, fanOut = out * area;
    Value w = im.addParameter(node, "weight", {out, channels / groups, kernel[0], kernel[1]},
                              fanIn, fanOut);
    Value b = im.addParameter(node, "bias", {out}, fanIn, fanOut);
    return im.create<Conv2dOp>(node, present({x, w, b}),
                               {a.pair("stride"), a.pair("padding"), a.pair("dilation"),
                                a.i64Attr("groups", groups)});
  }

  static Operation *linear(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                           const NodeAttrs &a) {
    Value x = in[0];
    // Over the last axis of any [N, ..., F], as torch.nn.Linear: a sequence
    // [N, T, F] is one [N*T, F] matmul (the type inference checks the rest).
    int64_t out = a.i64("out_features");
    int64_t features = shapeOf(x).back();
    if (mlir::failed(im.checkWeightSize(node, {out, features},
                                        "lower out_features or the input's features")))
      return nullptr;
    Value w = im.addParameter(node, "weight", {out, features}, features, out);
    Value b = im.addParameter(node, "bias", {out}, features, out);
    return im.create<LinearOp>(node, present({x, w, b}), {});
  }

  static Operation *batchNorm(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                              const NodeAttrs &a) {
    Value x = in[0];
    size_t rank = shapeOf(x).size();
    if (rank != 2 && rank != 4)
      return failed(im, node, "needs an [N, C] or [N, C, H, W] input, got " + shapeStr(x) +
                                  "; flatten or reshape first");
    int64_t c = shapeOf(x)[1];
    Value w = im.addParameter(node, "weight", {c});
    Value b = im.addParameter(node, "bias", {c});
    Value mean = im.addBuffer(node, "running_mean", {c}, 0.0);
    Value var = im.addBuffer(node, "running_var", {c}, 1.0);
    OpBuilder &builder = im.builder;
    Operation *op = im.create<BatchNormOp>(
        node, present({x, w, b, mean, var}),
        {a.f64Attr("momentum"), a.f64Attr("eps"),
         a.i64Attr("ghost_batch", a.i64("ghost_batch")),
         builder.getNamedAttr("ghost_strided",
                              builder.getBoolAttr(node.attrs["ghost_grouping"] == "strided")),
         // No statistics over ranks: tcc-build-train-step adds them where
         // sync_batch_norm asks.
         segments(builder, w, b, 2, /*absentAfter=*/2)});
    if (op) {
      im.setBufferUpdate(mean, op->getResult(3));
      im.setBufferUpdate(var, op->getResult(4));
    }
    return op;
  }

  static Operation *layerNorm(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                              const NodeAttrs &a) {
    Value x = in[0];
    int64_t rank = shapeOf(x).size();
    int64_t dims =
        node.attrs.at("normalized_dims").is_null() ? rank - 1 : a.i64("normalized_dims");
    if (dims < 1 || dims >= rank)
      return failed(im, node, "normalized_dims must be in [1, " + std::to_string(rank - 1) +
                                  "] for input " + shapeStr(x) + ", got " +
                                  std::to_string(dims));
    ArrayRef<int64_t> normalized = shapeOf(x).take_back(dims);
    Value w = im.addParameter(node, "weight", normalized);
    Value b = im.addParameter(node, "bias", normalized);
    return im.create<LayerNormOp>(node, present({x, w, b}),
                                  {a.i64Attr("normalized_dims", dims), a.f64Attr("eps"),
                                   segments(im.builder, w, b, 0)});
  }

  /// An op of one input whose attributes are `attrs`' fields as they are.
  template <typename OpTy>
  static Operation *unary(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                          ArrayRef<NamedAttribute> attrs) {
    return im.create<OpTy>(node, in[0], attrs);
  }
  template <typename OpTy>
  static Operation *plain(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                          const NodeAttrs &) {
    return unary<OpTy>(im, node, in, {});
  }
  template <typename OpTy>
  static Operation *withF64(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                            const char *field, const NodeAttrs &a) {
    return unary<OpTy>(im, node, in, {a.f64Attr(field)});
  }
  static Operation *leakyRelu(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                              const NodeAttrs &a) {
    return withF64<LeakyReluOp>(im, node, in, "negative_slope", a);
  }
  static Operation *elu(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                        const NodeAttrs &a) {
    return withF64<EluOp>(im, node, in, "alpha", a);
  }
  static Operation *celu(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                         const NodeAttrs &a) {
    return withF64<CeluOp>(im, node, in, "alpha", a);
  }
  static Operation *scale(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                          const NodeAttrs &a) {
    return withF64<ScaleOp>(im, node, in, "factor", a);
  }
  static Operation *gelu(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                         const NodeAttrs &a) {
    return unary<GeluOp>(im, node, in, {a.string("approximate")});
  }
  static Operation *maxPool(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                            const NodeAttrs &a) {
    return unary<MaxPool2dOp>(im, node, in,
                              {a.pair("kernel"), a.pair("stride"), a.pair("padding")});
  }
  static Operation *avgPool(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                            const NodeAttrs &a) {
    return unary<AvgPool2dOp>(im, node, in,
                              {a.pair("kernel"), a.pair("stride"), a.pair("padding"),
                               a.boolean("count_include_pad")});
  }

  static Operation *add(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                        const NodeAttrs &) {
    if (mlir::failed(im.checkSameShapes(node, in, "adds")))
      return nullptr;
    return im.create<AddOp>(node, in, {});
  }

  /// A [N, C, ...] tensor times a [N, C] or [N, C, 1, ...] gate, either
  /// side: a channel gate (squeeze-and-excitation), broadcast over the
  /// rest; else two tensors of one shape.
  static Operation *mul(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                        const NodeAttrs &) {
    auto gates = [](Value gate, Value of) {
      ArrayRef<int64_t> g = shapeOf(gate), s = shapeOf(of);
      return s.size() >= 3 && g.take_front(2) == s.take_front(2) &&
             (g.size() == 2 || (g.size() == s.size() && g != s &&
                                llvm::all_of(g.drop_front(2), [](int64_t d) { return d == 1; })));
    };
    if (gates(in[1], in[0]) || gates(in[0], in[1])) {
      bool gateFirst = gates(in[0], in[1]);
      Value input = in[gateFirst ? 1 : 0], gate = in[gateFirst ? 0 : 1];
      if (shapeOf(gate).size() > 2) // [N, C, 1, 1] -> [N, C], a view
        gate = im.create<FlattenOp>(node, gate, {})->getResult(0);
      return im.create<ChannelMulOp>(node, {input, gate}, {});
    }
    if (mlir::failed(im.checkSameShapes(node, in, "multiplies")))
      return nullptr;
    return im.create<MulOp>(node, in, {});
  }

  static Operation *concat(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                           const NodeAttrs &a) {
    return im.create<ConcatOp>(node, in, {a.axis("axis", in[0])});
  }

  /// The user's shape excludes the batch and may hold one -1.
  static Operation *reshape(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                            const NodeAttrs &a) {
    Value x = in[0];
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
        return failed(im, node, "cannot reshape " + shapeStr(x) + " to " + target +
                                    ": the shape holds more than the " +
                                    std::to_string(perSample) + " elements of a sample");
    SmallVector<int64_t> shape{batch};
    for (int64_t d : sample) {
      if (d == -1 && perSample % known != 0)
        return failed(im, node, "cannot reshape " + shapeStr(x) + " to " + target + ": " +
                                    std::to_string(perSample) +
                                    " elements per sample are not a multiple of " +
                                    std::to_string(known));
      shape.push_back(d == -1 ? perSample / known : d);
    }
    return unary<ReshapeOp>(
        im, node, in, {im.builder.getNamedAttr("shape", im.builder.getDenseI64ArrayAttr(shape))});
  }
  static Operation *transpose(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                              const NodeAttrs &a) {
    return unary<TransposeOp>(
        im, node, in,
        {im.builder.getNamedAttr("perm", im.builder.getDenseI64ArrayAttr(a.ints("perm")))});
  }
  /// x[:, start:end] along `axis`, Python's indices: negative ones count
  /// from the end, out-of-range ones are clamped; an empty range is refused.
  static Operation *slice(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                          const NodeAttrs &a) {
    Value x = in[0];
    int64_t axis = normalizeAxis(a.i64("axis"), x), extent = shapeOf(x)[axis];
    auto index = [&](int64_t i) {
      return std::clamp(i < 0 ? i + extent : i, int64_t(0), extent);
    };
    bool toEnd = node.attrs.at("end").is_null();
    int64_t start = index(a.i64("start")), end = toEnd ? extent : index(a.i64("end"));
    if (end <= start)
      return failed(im, node, "slice [" + std::to_string(a.i64("start")) + ":" +
                                  (toEnd ? "" : std::to_string(a.i64("end"))) + "] of axis " +
                                  std::to_string(a.i64("axis")) + " (size " +
                                  std::to_string(extent) + ") of input " + shapeStr(x) +
                                  " is empty; it must hold at least one element");
    return sliceOf(im, node, x, axis, start, end - start);
  }
  /// x[:, index]: a slice of one element, then a reshape (a view) without
  /// the axis.
  static Operation *select(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                           const NodeAttrs &a) {
    Value x = in[0];
    int64_t axis = normalizeAxis(a.i64("axis"), x), extent = shapeOf(x)[axis];
    int64_t index = a.i64("index");
    if (index < -extent || index >= extent)
      return failed(im, node, "index " + std::to_string(index) + " is out of range for axis " +
                                  std::to_string(a.i64("axis")) + " (size " +
                                  std::to_string(extent) + ") of input " + shapeStr(x) +
                                  "; it must be in [" + std::to_string(-extent) + ", " +
                                  std::to_string(extent - 1) + "]");
    Operation *one = sliceOf(im, node, x, axis, index < 0 ? index + extent : index, 1);
    if (!one)
      return nullptr;
    SmallVector<int64_t> shape(shapeOf(x));
    shape.erase(shape.begin() + axis);
    return unary<ReshapeOp>(
        im, node, one->getResult(0),
        {im.builder.getNamedAttr("shape", im.builder.getDenseI64ArrayAttr(shape))});
  }
  static Operation *sliceOf(NodeImporter &im, const NodeSpec &node, Value x, int64_t axis,
                            int64_t offset, int64_t size) {
    OpBuilder &b = im.builder;
    return unary<SliceOp>(im, node, x,
                          {b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
                           b.getNamedAttr("offset", b.getI64IntegerAttr(offset)),
                           b.getNamedAttr("size", b.getI64IntegerAttr(size))});
  }
  /// PyTorch's [1, ...] tensor, expanded over the batch: [N, ...].
  static Operation *parameter(NodeImporter &im, const NodeSpec &node, ArrayRef<Value>,
                              const NodeAttrs &a) {
    std::vector<int64_t> shape = a.ints("shape");
    if (mlir::failed(im.checkWeightSize(node, shape, "lower the dims of 'shape'")))
      return nullptr;
    Value p = im.addParameter(node, "", shape, 1, 1);
    OpBuilder &b = im.builder;
    return unary<ExpandOp>(im, node, p,
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(0)),
                            b.getNamedAttr("size", b.getI64IntegerAttr(im.spec.batchSize()))});
  }
  /// torch.nn.Embedding: the table [num_embeddings, embedding_dim], its
  /// padding row zeroed after the init as PyTorch's module does.
  static Operation *embedding(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                              const NodeAttrs &a) {
    int64_t rows = a.i64("num_embeddings"), dim = a.i64("embedding_dim");
    int64_t paddingIdx = a.i64("padding_idx");
    if (mlir::failed(im.checkWeightSize(node, {rows, dim},
                                        "lower num_embeddings or embedding_dim")))
      return nullptr;
    Value w = im.addParameter(node, "weight", {rows, dim}, dim, rows);
    if (paddingIdx >= 0) {
      NamedAttrList attrs(im.argAttrs.back());
      NamedAttrList init(cast<DictionaryAttr>(attrs.get(kInitAttr)));
      init.set("zero_row", im.builder.getI64IntegerAttr(paddingIdx));
      attrs.set(kInitAttr, init.getDictionary(&im.context));
      im.argAttrs.back() = attrs.getDictionary(&im.context);
    }
    return im.create<EmbeddingOp>(node, {in[0], w}, {a.i64Attr("padding_idx", paddingIdx)});
  }
  static Operation *matmul(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                           const NodeAttrs &a) {
    return im.create<MatmulOp>(node, in, {a.boolean("transpose_a"), a.boolean("transpose_b")});
  }
  /// x.mean(axis, keepdim): a sum, scaled by 1/size, reshaped to keep the
  /// axis as 1 if asked.
  static Operation *mean(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                         const NodeAttrs &a) {
    Value x = in[0];
    int64_t axis = normalizeAxis(a.i64("axis"), x), extent = shapeOf(x)[axis];
    OpBuilder &b = im.builder;
    Operation *sum = unary<ReduceSumOp>(
        im, node, x, {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({axis}))});
    if (!sum)
      return nullptr;
    Operation *scaled = unary<ScaleOp>(
        im, node, sum->getResult(0),
        {b.getNamedAttr("factor", b.getF64FloatAttr(1.0 / static_cast<double>(extent)))});
    if (!scaled || !node.attrs.at("keepdim").get<bool>())
      return scaled;
    SmallVector<int64_t> shape(shapeOf(x));
    shape[axis] = 1;
    return unary<ReshapeOp>(im, node, scaled->getResult(0),
                            {b.getNamedAttr("shape", b.getDenseI64ArrayAttr(shape))});
  }
  static Operation *dropout(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                            const NodeAttrs &a) {
    return im.create<DropoutOp>(node, {in[0], im.seed},
                                {a.f64Attr("p"), a.i64Attr("stream", im.dropoutStreams++)});
  }
  static Operation *softmax(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                            const NodeAttrs &a) {
    return unary<SoftmaxOp>(im, node, in, {a.axis("axis", in[0])});
  }
  static Operation *logSoftmax(NodeImporter &im, const NodeSpec &node, ArrayRef<Value> in,
                               const NodeAttrs &a) {
    return unary<LogSoftmaxOp>(im, node, in, {a.axis("axis", in[0])});
  }
  /// torch.nn.MultiheadAttention (batch_first): the in-projection (one
  /// linear of [3E, E] for self-attention, sliced into q, k, v; for
  /// cross-attention the query rows of the weight on the query and the key
  /// and value rows on the second input, as F._in_projection_packed), the
  /// attention, the out-projection.
  static Operation *multiheadAttention(NodeImporter &im, const NodeSpec &node,
                                       ArrayRef<Value> in, const NodeAttrs &a) {
    Value x = in[0], source = in.size() > 1 ? in[1] : in[0];
    for (auto [name, v] : {std::pair{node.inputs[0], x}, {node.inputs.back(), source}})
      if (shapeOf(v).size() != 3)
        return failed(im, node, "input '" + name + "' must be tokens [N, T, E], got " +
                                    shapeStr(v) + "; reshape and transpose to tokens first");
    int64_t e = shapeOf(x)[2], heads = a.i64("heads");
    if (shapeOf(source)[2] != e)
      return failed(im, node, "the query '" + node.inputs[0] + "' " + shapeStr(x) +
                                  " and the key/value source '" + node.inputs[1] + "' " +
                                  shapeStr(source) +
                                  " need one embedding width E (MultiheadAttention's kdim "
                                  "and vdim are E); project one of them first");
    if (e % heads)
      return failed(im, node, "heads " + std::to_string(heads) +
                                  " must divide the embedding width " + std::to_string(e) +
                                  " of input " + shapeStr(x));
    if (node.attrs.at("causal").get<bool>() && shapeOf(source)[1] != shapeOf(x)[1])
      return failed(im, node, "causal needs as many keys as queries, got " +
                                  std::to_string(shapeOf(x)[1]) + " queries and " +
                                  std::to_string(shapeOf(source)[1]) +
                                  " keys (cross-attention); set causal to false");
    if (mlir::failed(im.checkWeightSize(node, {3 * e, e}, "lower the embedding width")))
      return nullptr;
    Value w = im.addParameter(node, "in_proj_weight", {3 * e, e}, e, 3 * e);
    Value b = im.addParameter(node, "in_proj_bias", {3 * e}, e, 3 * e);
    Value outW = im.addParameter(node, "out_proj.weight", {e, e}, e, e);
    Value outB = im.addParameter(node, "out_proj.bias", {e}, e, e);
    auto rows = [&](Value v, int64_t axis, int64_t offset, int64_t size) -> Value {
      if (!v)
        return {};
      Operation *op = sliceOf(im, node, v, axis, offset, size);
      return op ? op->getResult(0) : Value();
    };
    auto linear = [&](Value input, Value weight, Value bias) -> Value {
      Operation *op = im.create<LinearOp>(node, present({input, weight, bias}), {});
      return op ? op->getResult(0) : Value();
    };
    Value q, k, v;
    if (in.size() == 1) {
      Value qkv = linear(x, w, b);
      if (!qkv)
        return nullptr;
      q = rows(qkv, 2, 0, e), k = rows(qkv, 2, e, e), v = rows(qkv, 2, 2 * e, e);
    } else {
      q = linear(x, rows(w, 0, 0, e), rows(b, 0, 0, e));
      Value kv = linear(source, rows(w, 0, e, 2 * e), rows(b, 0, e, 2 * e));
      if (!q || !kv)
        return nullptr;
      k = rows(kv, 2, 0, e), v = rows(kv, 2, e, e);
    }
    if (!q || !k || !v)
      return nullptr;
    Operation *attention = attentionOf(im, node, a, q, k, v, 1.0 / std::sqrt(double(e / heads)));
    if (!attention)
      return nullptr;
    return im.create<LinearOp>(node, present({attention->getResult(0), outW, outB}), {});
  }
  static Operation *scaledDotProductAttention(NodeImporter &im, const NodeSpec &node,
                                              ArrayRef<Value> in, const NodeAttrs &a) {
    int64_t heads = a.i64("heads"), width = shapeOf(in[0]).back();
    // A width that heads does not divide is reported by the op's inference.
    double scale = node.attrs.at("scale").is_null()
                       ? 1.0 / std::sqrt(double(width % heads ? width : width / heads))
                       : a.f64("scale");
    return attentionOf(im, node, a, in[0], in[1], in[2], scale);
  }
  /// tcc.scaled_dot_product_attention with the node's heads, causal and
  /// dropout; with dropout, the step's seed and a stream of its own.
  static Operation *attentionOf(NodeImporter &im, const NodeSpec &node, const NodeAttrs &a,
                                Value q, Value k, Value v, double scale) {
    double dropout = a.f64("dropout");
    return im.create<ScaledDotProductAttentionOp>(
        node, present({q, k, v, dropout > 0 ? im.seed : Value()}),
        {a.i64Attr("heads", a.i64("heads")), a.boolean("causal"),
         im.builder.getNamedAttr("scale", im.builder.getF64FloatAttr(scale)),
         a.f64Attr("dropout"), a.i64Attr("stream", dropout > 0 ? im.dropoutStreams++ : 0)});
  }
};

namespace {

/// model.json's ops (OpSpecs.cpp reads their fields) and how each is
/// imported; a new op is one row here and one there.
const llvm::StringMap<NodeImporter::Ops::Import> &importTable() {
  using O = NodeImporter::Ops;
  static const llvm::StringMap<O::Import> table = {
      {"conv2d", O::conv2d},
      {"linear", O::linear},
      {"batch_norm", O::batchNorm},
      {"layer_norm", O::layerNorm},
      {"relu", O::plain<ReluOp>},
      {"leaky_relu", O::leakyRelu},
      {"elu", O::elu},
      {"celu", O::celu},
      {"gelu", O::gelu},
      {"silu", O::plain<SiluOp>},
      {"sigmoid", O::plain<SigmoidOp>},
      {"tanh", O::plain<TanhOp>},
      {"scale", O::scale},
      {"max_pool2d", O::maxPool},
      {"avg_pool2d", O::avgPool},
      {"global_avg_pool", O::plain<GlobalAvgPoolOp>},
      {"global_max_pool", O::plain<GlobalMaxPoolOp>},
      {"add", O::add},
      {"mul", O::mul},
      {"concat", O::concat},
      {"flatten", O::plain<FlattenOp>},
      {"reshape", O::reshape},
      {"transpose", O::transpose},
      {"slice", O::slice},
      {"select", O::select},
      {"parameter", O::parameter},
      {"matmul", O::matmul},
      {"embedding", O::embedding},
      {"mean", O::mean},
      {"dropout", O::dropout},
      {"softmax", O::softmax},
      {"log_softmax", O::logSoftmax},
      {"scaled_dot_product_attention", O::scaledDotProductAttention},
      {"attention", O::multiheadAttention},
  };
  return table;
}

} // namespace

std::vector<std::string> mlir::tcc::importedOps() {
  std::vector<std::string> names;
  for (const auto &entry : importTable())
    names.push_back(entry.getKey().str());
  return names;
}

LogicalResult NodeImporter::importNode(const NodeSpec &node) {
  SmallVector<Value> inputs;
  for (const std::string &name : node.inputs)
    inputs.push_back(values.lookup(name));
  Value x = inputs.empty() ? Value() : inputs.front();
  NodeAttrs a(builder, node);
  if (x && node.attrs.contains("axis") && !axisInRange(a.i64("axis"), x))
    return fail(&node, "axis " + std::to_string(a.i64("axis")) +
                           " is out of range for input " + shapeStr(x));
  // A negative axis that counts back to the batch (the spec refuses 0).
  if (x && node.attrs.contains("axis") && normalizeAxis(a.i64("axis"), x) == 0)
    return fail(&node, "axis " + std::to_string(a.i64("axis")) + " of input " + shapeStr(x) +
                           " is dim 0, the batch; an op works on a sample's dims");
  auto entry = importTable().find(node.op);
  if (entry == importTable().end())
    return fail(&node, "internal error: the importer does not know op '" + node.op + "'");
  Operation *op = entry->second(*this, node, inputs, a);
  if (!op)
    return failure(); // the entry or the op's inference reported why
  for (Value result : op->getResults())
    if (failed(checkActivationSize(node, result)))
      return failure();
  values[node.name] = op->getResult(0);
  return success();
}
