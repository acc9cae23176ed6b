"""Functions and tensor methods -> model.json ops.

A functional call with the options of a module (F.max_pool2d, F.gelu, ...)
is mapped as that module would be (modules.py), so both take the same
checks. Shape arithmetic (x.size(0), x.shape) was evaluated by the shape
propagation: it becomes a constant, and a view or reshape is mapped from
the shape PyTorch computed.
"""

import math
import operator

import torch
import torch.nn.functional as F
from torch import nn

from tcc_import import embedding as E
from tcc_import import modules as M
from tcc_import import tokens as T
from tcc_import.graph import READS_IDS, Value
from tcc_import.shapes import show, torch_shape


def _arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def via_module(make, mapper):
    """A functional call mapped as the module `make(node)` would be."""
    def handler(b, node):
        return mapper(b, node, make(node), b.tensor(node, node.args[0]), b.out_shape(node))
    return handler


def _activation(op, **fields):
    def handler(b, node):
        x = b.tensor(node, node.args[0])
        values = {k: f(node) for k, f in fields.items()}
        return b.emit(b.name_for(node), op, [x], {k: v for k, v in values.items()
                                                  if v is not None}, x.shape)
    return handler


def _softmax(op):
    def handler(b, node):
        # F.softmax's third argument is _stacklevel; the others' is dtype
        dtype = node.kwargs.get("dtype")
        if node.target not in (F.softmax, F.log_softmax) and len(node.args) > 2:
            dtype = node.args[2]
        if dtype is not None or _arg(node, 1, "dim") is None:
            b.fail(node, "needs dim and no dtype (tcc's %s computes in the input's "
                   "precision over a given axis)" % op)
        x = b.exact(node, b.tensor(node, node.args[0]), b.in_shape(node))
        return b.emit(b.name_for(node), op, [x], {"axis": _arg(node, 1, "dim")},
                      b.out_shape(node))
    return handler


def dropout(b, node):
    x = b.tensor(node, node.args[0])
    if not _arg(node, 2, "training", True) or _arg(node, 1, "p", 0.5) == 0:
        return x  # F.dropout(training=False) or with p 0 is the identity
    return b.emit(b.name_for(node), "dropout", [x], {"p": _arg(node, 1, "p", 0.5)}, x.shape)


def mean(b, node):
    dims = _arg(node, 1, "dim")
    shape = b.in_shape(node)
    dims = [dims] if isinstance(dims, int) else list(dims or [])
    if _arg(node, 3, "dtype") is not None:
        b.fail(node, "a mean with a dtype: tcc averages in the input's precision")
    if len(shape) != 4 or sorted(d % 4 for d in dims) != [2, 3]:
        return T.mean_over_axis(b, node, dims)
    x = b.exact(node, b.tensor(node, node.args[0]), shape)
    return b.emit(b.name_for(node), "global_avg_pool", [x], {}, shape[:2])


def reshape(b, node):
    """view, reshape, flatten, squeeze, ...: judged by the shape PyTorch
    computed, which must keep the batch dim."""
    return flatten_to(b, node, b.tensor(node, node.args[0]), b.out_shape(node))


def flatten_to(b, node, x, out):
    if out == b.in_shape(node):
        return x  # a view that changes nothing
    if out[0] != b.batch or math.prod(out) != math.prod(x.shape):
        b.fail(node, "changes the batch dim (a batch of %d: %s to %s): tcc's reshape keeps "
               "dim 0, the batch" % (b.batch, list(b.in_shape(node)), list(out)))
    source = getattr(x, "reshaped_from", None)
    if source is not None and source.shape == tuple(out):
        return source  # a reshape back (the heads of an attention side by side again)
    if len(out) == 2:
        y = b.emit(b.name_for(node), "flatten", [x], {}, out)
    else:
        y = b.emit(b.name_for(node), "reshape", [x], {"shape": list(out[1:])}, out)
    y.reshaped_from = x
    return y


def permute(b, node):
    """A permute that keeps the batch first is a transpose; one that moves
    it is carried to its consumer, which must be a permute back or
    nn.MultiheadAttention(batch_first=False) (graph.Value.perm)."""
    shape = b.in_shape(node)
    rank = len(shape)
    if node.target in ("transpose", torch.transpose):
        d0, d1 = (_arg(node, 1, "dim0") % rank, _arg(node, 2, "dim1") % rank)
        perm = list(range(rank))
        perm[d0], perm[d1] = perm[d1], perm[d0]
    else:
        dims = node.args[1:] if node.op == "call_method" else [_arg(node, 1, "dims")]
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = dims[0]
        perm = [d % rank for d in dims]
    x = b.value(node, node.args[0], permuted=True)
    if not isinstance(x, Value):
        b.fail(node, "expects a tensor here, got %r" % (x,))
    if x.perm:
        perm = [x.perm[p] for p in perm]  # of tcc's value, as PyTorch's is x.perm of it
    else:
        x = b.exact(node, x, shape)
    if perm[0] != 0:
        return Value(x.name, x.shape, perm)
    if perm == list(range(rank)):
        return Value(x.name, x.shape)
    source = getattr(x, "permuted_from", None)
    if source is not None and [source[1][p] for p in perm] == list(range(rank)):
        return source[0]  # a permute back (the heads of an attention)
    out = b.emit(b.name_for(node), "transpose", [x], {"perm": perm},
                 [x.shape[p] for p in perm])
    out.permuted_from = (x, perm)
    if perm == list(range(rank - 2)) + [rank - 1, rank - 2]:
        out.swapped = x  # k.transpose(-2, -1) for a matmul's flag
    return out


def cat(b, node):
    tensors = _arg(node, 0, "tensors")
    dim = _arg(node, 1, "dim", 0)
    shapes = [torch_shape(t) for t in tensors]
    if dim % len(shapes[0]) == 0:
        b.fail(node, "concatenates along dim 0, the batch: tcc's concat joins along "
               "another dim")
    xs = [b.exact(node, b.tensor(node, t), s) for t, s in zip(tensors, shapes)]
    if len(xs) == 1:
        return xs[0]
    fields = {} if dim == 1 else {"axis": dim}
    return b.emit(b.name_for(node), "concat", xs, fields, b.out_shape(node))


def _two(b, node):
    x = b.value(node, _arg(node, 0, "input"))
    y = b.value(node, _arg(node, 1, "other"))
    if node.kwargs.get("alpha", 1) != 1:
        b.fail(node, "alpha: tcc's add sums the two tensors as they are")
    return x, y


def add(b, node):
    x, y = _two(b, node)
    if not (isinstance(x, Value) and isinstance(y, Value)):
        b.fail(node, "adds the constant %r: tcc adds two tensors only (a bias belongs "
               "to a layer)" % (y if isinstance(x, Value) else x,))
    # a parameter node's value is PyTorch's [1, ...] broadcast over the batch
    shapes = [v.shape if getattr(v, "broadcast", False) else torch_shape(a)
              for v, a in zip((x, y), node.args[:2])]
    if shapes[0] != shapes[1]:
        b.fail(node, "adds %s and %s: tcc's add needs two tensors of one shape (no "
               "broadcasting)" % (show(shapes[0]), show(shapes[1])))
    xs = [b.exact(node, v, s) for v, s in zip((x, y), shapes)]
    return b.emit(b.name_for(node), "add", xs, {}, shapes[0])


def mul(b, node):
    x, y = _two(b, node)
    if not isinstance(x, Value) or not isinstance(y, Value):
        return scale(b, node, x if isinstance(x, Value) else y,
                     y if isinstance(x, Value) else x)
    shapes = [torch_shape(a) for a in node.args[:2]]
    out = b.out_shape(node)
    if shapes[0] == shapes[1]:
        xs = [b.exact(node, v, s) for v, s in zip((x, y), shapes)]
    elif len(out) == 4 and all(s == out or s == out[:2] + (1, 1) for s in shapes):
        # a channel gate (squeeze-and-excitation): tcc takes the gate as
        # [N, C] or [N, C, 1, 1]
        xs = [b.exact(node, v, s) if s == out else v for v, s in zip((x, y), shapes)]
    else:
        b.fail(node, "multiplies %s and %s: tcc's mul takes two tensors of one shape or "
               "[N, C, H, W] and a [N, C, 1, 1] gate" % (show(shapes[0]), show(shapes[1])))
    return b.emit(b.name_for(node), "mul", xs, {}, out)


def scale(b, node, x, factor):
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        b.fail(node, "multiplies by %r: tcc scales by a number fixed when the model is "
               "traced (a Python int or float)" % (factor,))
    return b.emit(b.name_for(node), "scale", [x], {"factor": float(factor)}, x.shape)


def div(b, node):
    x, y = _two(b, node)
    if not isinstance(x, Value) or isinstance(y, Value) or node.kwargs.get("rounding_mode"):
        b.fail(node, "divides by a tensor: tcc divides by a constant only (as scale by "
               "its reciprocal)")
    if y == 0:
        b.fail(node, "divides by 0")
    return scale(b, node, x, 1.0 / y)


def neg(b, node):
    return scale(b, node, b.tensor(node, node.args[0]), -1.0)


def identity(b, node):
    return b.tensor(node, node.args[0])


def _mk(cls, *names, **defaults):
    """A module `cls` from a functional call's arguments (positional after
    the input, in `names` order, or by keyword)."""
    def make(node):
        kw = dict(defaults)
        for i, name in enumerate(names):
            v = _arg(node, i + 1, name, kw.get(name))
            if v is not None:
                kw[name] = v
        return cls(**kw)
    return make


_POOL = ("kernel_size", "stride", "padding")
FUNCTIONS = {
    # activations
    (F.relu, torch.relu, torch.relu_, "relu", "relu_"): _activation("relu"),
    (torch.sigmoid, F.sigmoid, "sigmoid", "sigmoid_"): _activation("sigmoid"),
    (torch.tanh, F.tanh, "tanh", "tanh_"): _activation("tanh"),
    (F.silu,): _activation("silu"),
    (F.gelu,): _activation("gelu", approximate=lambda n: M._default(
        n.kwargs.get("approximate", "none"), "none")),
    (F.leaky_relu, F.leaky_relu_): _activation("leaky_relu", negative_slope=lambda n: M._default(
        _arg(n, 1, "negative_slope", 0.01), 0.01)),
    (F.elu, F.elu_): _activation("elu", alpha=lambda n: M._default(_arg(n, 1, "alpha", 1.0), 1.0)),
    (F.celu, F.celu_): _activation("celu", alpha=lambda n: M._default(_arg(n, 1, "alpha", 1.0),
                                                                     1.0)),
    (F.softmax, torch.softmax, "softmax"): _softmax("softmax"),
    (F.log_softmax, torch.log_softmax, "log_softmax"): _softmax("log_softmax"),
    (F.dropout,): dropout,
    # pools
    (F.max_pool2d,): via_module(
        _mk(nn.MaxPool2d, *_POOL, "dilation", "ceil_mode", "return_indices"), M.pool),
    (F.avg_pool2d, torch._C._nn.avg_pool2d): via_module(
        _mk(nn.AvgPool2d, *_POOL, "ceil_mode", "count_include_pad", "divisor_override"), M.pool),
    (F.adaptive_avg_pool2d,): via_module(_mk(nn.AdaptiveAvgPool2d, "output_size"),
                                         M.global_pool),
    (F.adaptive_max_pool2d,): via_module(_mk(nn.AdaptiveMaxPool2d, "output_size",
                                             "return_indices"), M.global_pool),
    (torch.mean, "mean"): mean,
    # shape
    (torch.flatten, "flatten", torch.reshape, "reshape", "view", "view_as", "reshape_as",
     torch.squeeze, "squeeze", torch.unsqueeze, "unsqueeze"): reshape,
    (torch.permute, "permute", torch.transpose, "transpose"): permute,
    (torch.cat, torch.concat): cat,
    ("expand",): T.expand,
    (operator.getitem,): T.getitem,
    (torch.matmul, operator.matmul, "matmul", torch.bmm, "bmm"): T.matmul,
    ("contiguous", "clone"): identity,
    (torch.arange,): E.arange,
    # arithmetic
    (operator.add, operator.iadd, torch.add, "add", "add_"): add,
    (operator.mul, operator.imul, torch.mul, "mul", "mul_"): mul,
    (operator.truediv, operator.itruediv, torch.div, "div", "div_"): div,
    (operator.neg, torch.neg, "neg"): neg,
}
HANDLERS = {}
for keys, handler in FUNCTIONS.items():
    for k in keys:
        HANDLERS[k] = handler

# Results that are shapes or sizes, not data: constants once traced.
SHAPE_ONLY = {"size", "dim", getattr, operator.getitem, len, operator.mul, operator.add,
              operator.floordiv, operator.sub, operator.truediv, operator.mod} | T.COMPARISONS


def map_call(b, node):
    """The Value of a call_function / call_method node, or its constant."""
    if node.target is torch._assert:
        return T.assertion(b, node)
    if node.target is getattr(F, "scaled_dot_product_attention", None):  # PyTorch 2.x
        from tcc_import.attention import scaled_dot_product_attention
        return scaled_dot_product_attention(b, node)
    if "tcc_value" in node.meta or torch_shape(node) is None:
        if node.target in SHAPE_ONLY and not _reads_data(b, node):
            return node.meta.get("tcc_value")
        b.fail(node, "returns %s, not a tensor: tcc's graph computes tensors only (no "
               ".item(), tuples or values read from the data)"
               % type(node.meta.get("tcc_value")).__name__)
    if b.vocab and any(b.values.get(a) is b.input for a in node.all_input_nodes):
        if node.target == "long":
            return b.input  # the ids are int64 already
        b.fail(node, READS_IDS)
    handler = HANDLERS.get(node.target)
    if handler is None:
        b.fail(node, "has no model.json op; tcc maps activations, pools, means, "
               "view/reshape/flatten/permute, indexing, torch.cat, matmul, + and * of "
               "tensors, * and / by a number, F.scaled_dot_product_attention (docs/import.md)")
    return handler(b, node)


def _reads_data(b, node):
    """True when a non-tensor result depends on tensor values (getitem of a
    tensor, .item(), a comparison of tensors), not only on shapes."""
    if node.target in ("size", "dim", getattr):
        return False
    return any(isinstance(b.values.get(a), Value) for a in node.args
               if isinstance(a, torch.fx.Node))
