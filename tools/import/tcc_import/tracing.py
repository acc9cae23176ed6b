"""Symbolic tracing with the module path of every node, and shapes.

torch.fx's default tracer traces through every module whose class is not
from torch.nn. A subclass that only changes the init (airbench's
`Conv(nn.Conv2d)`, whose forward is nn.Conv2d's) would then become a
functional F.conv2d with its weight as a bare get_attr; tracing it as a
leaf keeps it a module, mapped by its base class. A subclass with its own
forward is traced through, so what it computes is what gets mapped.
"""

import copy
import dis
import inspect

import torch
import torch.fx
from torch import nn

from tcc_import import ImportFailure
from tcc_import.modules import MODULES, forward_is_torchs


def _unpack(proxy):
    """Proxy.__iter__ for `n, c, h, w = x.shape`, `x, _ = attention(x, x, x)`:
    PyTorch 1.13 finds the unpacking at instruction f_lasti // 2, which
    Python 3.11's inline caches move (it then refuses, or raises
    IndexError); 2.x looks it up by offset, as here."""
    frame = inspect.currentframe().f_back
    inst = next((i for i in dis.get_instructions(frame.f_code)
                 if i.offset == frame.f_lasti), None)
    if inst is not None and inst.opname == "UNPACK_SEQUENCE":
        return (proxy[i] for i in range(inst.argval))
    return proxy.tracer.iter(proxy)


def _recorded(function):
    """`function` recorded as a call where an argument is traced: fx cannot
    pass a size it traces to a builtin that takes numbers (GPT-2's
    `torch.arange(0, t)` with `b, t = idx.size()`), so recording the call
    lets the import say what it is (embedding.arange)."""
    def call(*args, **kwargs):
        traced = [a for a in args + tuple(kwargs.values()) if isinstance(a, torch.fx.Proxy)]
        if traced:
            return traced[0].tracer.create_proxy("call_function", function, args, kwargs)
        return function(*args, **kwargs)
    return call


class PathTracer(torch.fx.Tracer):
    """Records in node.meta["tcc_path"] the qualified name of the module
    whose forward created the node ("" for the root), which PyTorch 1.13's
    symbolic tracer does not keep (2.x's nn_module_stack is not in 1.13)."""

    def __init__(self):
        super().__init__()
        self.path = [""]
        self.failed_in = None  # the innermost module whose tracing raised

    def is_leaf_module(self, m, qualname):
        if isinstance(m, MODULES) and forward_is_torchs(m):
            return True
        return super().is_leaf_module(m, qualname)

    def call_module(self, m, forward, args, kwargs):
        self.path.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        except Exception:
            if self.failed_in is None:
                self.failed_in = self.path[-1]
            raise
        finally:
            self.path.pop()

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *a, **k):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr, *a, **k)
        proxy.node.meta["tcc_path"] = self.path[-1]
        return proxy


def trace(module, where):
    """The fx GraphModule of `module` in training mode (what tcc compiles:
    `self.training` branches are taken as in training)."""
    module.train()
    tracer = PathTracer()
    iterate, arange = torch.fx.Proxy.__iter__, torch.arange
    torch.fx.Proxy.__iter__ = _unpack  # Attribute proxies (x.shape) included
    torch.arange = _recorded(arange)
    try:
        graph = tracer.trace(module)
    except Exception as e:  # fx raises TraceError, but also TypeError etc.
        reason = " ".join(str(e).split()) or type(e).__name__
        path = tracer.failed_in
        place = "module '%s' (%s)" % (path, module_class(module.get_submodule(path))) \
            if path else "the model's forward"
        raise ImportFailure(
            "%s: torch.fx cannot trace %s: %s (tcc import traces forward symbolically: "
            "no control flow on tensor values, no iterating over a tensor or its shape; "
            "docs/import.md)" % (where, place, reason))
    finally:
        torch.fx.Proxy.__iter__, torch.arange = iterate, arange
    return torch.fx.GraphModule(tracer.root, graph)


class NodeFailed(Exception):
    """Running `node` on the probe input raised `error`."""

    def __init__(self, node, error):
        super().__init__(str(error))
        self.node, self.error = node, error


class _Recorder(torch.fx.Interpreter):
    def run_node(self, n):
        try:
            out = super().run_node(n)
        except Exception as e:
            raise NodeFailed(n, e)
        if isinstance(out, torch.Tensor):
            n.meta["tcc_shape"] = tuple(int(d) for d in out.shape)
        else:
            n.meta["tcc_value"] = out
        return out


def propagate_shapes(gm, input_shape, batch, vocab=None):
    """Runs the traced graph once on inputs of [batch, *input_shape] (int64
    token ids in [0, vocab) with a vocab, as nn.Embedding takes them) and
    records each node's tensor shape in node.meta["tcc_shape"] or its other
    result (a size, a tuple) in node.meta["tcc_value"]. On PyTorch's meta
    device first (shapes without arithmetic: 0.3 s for torchvision's
    vit_b_16 where a real batch of 3 takes a minute on one core); where an
    op has no meta kernel, or the run fails, on random data, whose error is
    then the one to report. The batch norms' running statistics that the
    real run moves are put back."""
    meta = copy.deepcopy(gm).to("meta")
    try:
        with torch.no_grad():
            dtype = torch.int64 if vocab else torch.float32
            _Recorder(meta).run(torch.empty(batch, *input_shape, dtype=dtype, device="meta"))
        for node, probe in zip(gm.graph.nodes, meta.graph.nodes):
            node.meta.update({k: v for k, v in probe.meta.items() if k.startswith("tcc_")})
        return
    except Exception:  # NodeFailed, mostly: the real run says why
        pass
    finally:
        del meta
    saved = {k: v.detach().clone() for k, v in gm.state_dict().items()}
    try:
        with torch.no_grad():
            _Recorder(gm).run(torch.randint(0, vocab, (batch, *input_shape)) if vocab
                              else torch.randn(batch, *input_shape))
    finally:
        gm.load_state_dict(saved)


def module_class(m):
    """`nn.Conv2d` for a torch.nn class, the class name otherwise (with the
    torch.nn base it is mapped as, if any)."""
    cls = type(m)
    if cls.__module__.startswith("torch.nn"):
        return "nn." + cls.__name__
    for base in cls.__mro__[1:]:
        if base.__module__.startswith("torch.nn") and base is not nn.Module:
            return "%s (an nn.%s)" % (cls.__name__, base.__name__)
    return cls.__name__
