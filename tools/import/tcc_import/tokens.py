"""Token and sequence ops -> model.json (issue 38's ops): a module's own
tensor (nn.Parameter) as a `parameter` node, its expansion to the batch,
indexing as slice/select, matmul of two activations, mean over an axis.

A `parameter` node holds PyTorch's [1, ...] tensor broadcast over the
batch, so its Value is [N, ...]: the tensor's uses that broadcast it over
the batch (`expand(N, -1, ...)`, `x + pos_embedding`) are exactly that value.
"""

import functools
import operator

import torch

from tcc_import.graph import Value
from tcc_import.shapes import show, torch_shape


def _arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def parameter(b, node, target):
    """The Value of the module tensor `target` (a get_attr) read by `node`
    where PyTorch broadcasts it over the batch: a `parameter` node named as
    the state_dict names it."""
    if target in b.parameters:
        return b.parameters[target]
    t = functools.reduce(getattr, target.split("."), b.modules[""])
    if target not in b.state_names:
        b.fail(node, "reads the tensor attribute '%s', which is not in the state_dict (a "
               "plain attribute or a non-persistent buffer): tcc's parameter nodes are "
               "checkpointed; register it as an nn.Parameter or a persistent buffer" % target)
    shape = tuple(int(d) for d in t.shape)
    if len(shape) < 2 or shape[0] != 1:
        b.fail(node, "reads '%s' of shape %s: tcc's parameter node is a [1, ...] tensor (at "
               "least 2 dims) broadcast over the batch, as a class token [1, 1, D] or a "
               "positional embedding [1, T, D]" % (target, list(shape)))
    fields = {"shape": list(shape)}
    if not (isinstance(t, torch.nn.Parameter) and t.requires_grad):
        fields["trainable"] = False  # a frozen parameter or a persistent buffer
    v = b.emit(target, "parameter", [], fields, (b.batch,) + shape[1:])
    v.broadcast = True
    b.parameters[target] = v
    return v


def expand(b, node):
    """`cls.expand(N, -1, -1)`: a parameter to the batch (the parameter
    node's value already is); an expand that changes nothing passes."""
    x = b.tensor(node, node.args[0])
    sizes = node.args[1:] if node.op == "call_method" else [_arg(node, 1, "size")]
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    sizes = [b.value(node, s) for s in sizes]
    if b.out_shape(node) == x.shape and (getattr(x, "broadcast", False) or
                                          b.in_shape(node) == x.shape):
        return x
    b.fail(node, "expands %s to %s: tcc expands a parameter [1, ...] over the batch only "
           "(expand(N, -1, ...))" % (list(b.in_shape(node)), sizes))


def getitem(b, node):
    """`x[:, 0]`, `x[:, 1:]`, `x[..., :8]`: slice and select nodes on the
    non-batch axes; an item of a module's tuple result."""
    src, index = node.args
    got = b.values.get(src) if isinstance(src, torch.fx.Node) else None
    if isinstance(got, tuple):
        return got[index]
    x = b.tensor(node, src)
    broadcast = getattr(x, "broadcast", False)  # a parameter's [N, ...], PyTorch's [1, ...]
    shape = x.shape if broadcast else torch_shape(src)
    items = index if isinstance(index, tuple) else (index,)
    # sizes read from shapes (x[:, :x.size(1)]) are constants by now
    items = tuple(slice(*(b.value(node, a) for a in (i.start, i.stop, i.step)))
                  if isinstance(i, slice) else b.value(node, i) for i in items)
    if sum(i is Ellipsis for i in items) > 1 or any(
            not (i is Ellipsis or isinstance(i, slice) or
                 isinstance(i, int) and not isinstance(i, bool)) for i in items):
        b.fail(node, "indexes with %r: tcc slices and selects with Python numbers on the "
               "non-batch dims (x[:, 0], x[:, 1:], x[..., :8])" % (index,))
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items = items[:k] + (slice(None),) * (len(shape) - len(items) + 1) + items[k + 1:]
    if not items or items[0] != slice(None):
        b.fail(node, "indexes the batch dim (%r): tcc's slice and select keep dim 0, the "
               "batch" % (index,))
    x = b.exact(node, x, shape)
    name, out = b.name_for(node), list(shape)
    emitted = 0

    def next_name(kind):
        return name if emitted == 0 else b.unique("%s.%s" % (name, kind))

    for axis, item in enumerate(items):
        if not isinstance(item, slice) or item == slice(None):
            continue
        if item.step not in (None, 1):
            b.fail(node, "slices with step %r: tcc's slice takes step 1" % (item.step,))
        size = len(range(*item.indices(out[axis])))
        if size == 0:
            b.fail(node, "slices dim %d of %s to nothing" % (axis, show(shape)))
        fields = {"axis": axis}
        if item.start not in (None, 0):
            fields["start"] = item.start
        if item.stop is not None:
            fields["end"] = item.stop
        out[axis] = size
        x = b.emit(next_name("slice"), "slice", [x], fields, out)
        emitted += 1
    for axis in reversed(range(len(items))):
        if isinstance(items[axis], int):
            out.pop(axis)
            x = b.emit(next_name("select"), "select", [x], {"axis": axis,
                                                         "index": items[axis]}, out)
            emitted += 1
    x.broadcast = broadcast
    return x


def matmul(b, node):
    """`a @ b`, torch.matmul, torch.bmm of two activations: tcc's matmul,
    a transpose of an operand's last two dims taken as its flag."""
    xs = [b.tensor(node, a) for a in node.args[:2]]
    shapes = [torch_shape(a) for a in node.args[:2]]
    if len(shapes[0]) != len(shapes[1]) or len(shapes[0]) < 3 or \
            shapes[0][:-2] != shapes[1][:-2]:
        b.fail(node, "multiplies %s and %s: tcc's matmul takes [N, ..., M, K] and "
               "[N, ..., K, P] of one rank with the same leading dims (no broadcasting; a "
               "product with a weight is nn.Linear)" % (show(shapes[0]), show(shapes[1])))
    fields = {}
    for i, flag in enumerate(("transpose_a", "transpose_b")):
        source = getattr(xs[i], "swapped", None)
        if source is not None:
            xs[i], fields[flag] = source, True
    return b.emit(b.name_for(node), "matmul", xs, fields, b.out_shape(node))


def mean_over_axis(b, node, dims):
    """`x.mean(dim)` of one non-batch axis: tcc's mean."""
    shape = b.in_shape(node)
    keepdim = _arg(node, 2, "keepdim", False)
    if len(dims) != 1 or dims[0] % len(shape) == 0:
        b.fail(node, "a mean over dims %s of %s: tcc averages over one non-batch axis "
               "(mean) or over H and W of [N, C, H, W] (global_avg_pool)" % (dims, show(shape)))
    x = b.exact(node, b.tensor(node, node.args[0]), shape)
    fields = {"axis": dims[0]}
    if keepdim:
        fields["keepdim"] = True
    return b.emit(b.name_for(node), "mean", [x], fields, b.out_shape(node))


def assertion(b, node):
    """torch._assert on shapes (torchvision's `h == self.image_size`): the
    traced input passed it, and model.json fixes that shape."""
    cond = b.value(node, _arg(node, 0, "condition"))
    if isinstance(cond, Value) or not cond:
        b.fail(node, "asserts on a tensor's values: tcc's graph has no checks on data")
    return None


# comparisons of sizes (torch._assert's conditions): constants once traced
COMPARISONS = {operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
               operator.not_}
