"""The model.json graph built from an fx graph: node names, shapes, inputs.

Each fx node that computes a tensor becomes a `Value`: the model.json node
that holds it and the shape tcc gives it. That shape is PyTorch's except
after a global pool, which tcc gives as [N, C] where PyTorch keeps
[N, C, 1, 1]: consumers that care (a conv, a norm, ...) ask for `exact`,
which inserts a reshape; a flatten, a linear after it or a channel gate
take either form as PyTorch's result would be.
"""

import math
import re

import torch

from tcc_import import ImportFailure
from tcc_import.shapes import torch_shape
from tcc_import.tracing import module_class


READS_IDS = ("reads the token ids (the input, --tokens), which only nn.Embedding reads in "
             "tcc: embed them first")


class Value:
    """A tensor of the model.json graph: the node `name` holds it with tcc's
    shape `shape` (batch first). `perm`, when set, is a permute PyTorch's
    tensor is of that node's value (the batch not first: a [T, N, E]
    sequence for nn.MultiheadAttention(batch_first=False)); only a permute
    back and that module take such a value."""

    def __init__(self, name, shape, perm=None):
        self.name, self.shape = name, tuple(int(d) for d in shape)
        self.perm = perm


class Missing:
    """A result tcc does not compute (nn.MultiheadAttention's attention
    weights): harmless unless a node reads it, which `reason` refuses."""

    def __init__(self, reason):
        self.reason = reason


class Builder:
    def __init__(self, root, input_shape, batch, where, vocab=None):
        self.batch, self.where = batch, where
        self.vocab = vocab      # --tokens: the input is token ids in [0, vocab)
        # the traced module's, not the GraphModule's, which holds only the
        # leaves it calls
        self.modules = dict(root.named_modules())
        self.nodes = []         # model.json nodes (dicts), in fx order
        self.shapes = {}        # node name -> Value.shape
        self.values = {}        # fx node -> Value, or a Python value
        self.calls = {}         # module path -> times called so far
        self.views = {}         # (node name, shape) -> its reshape (exact)
        # Module paths are parameter prefixes: a node of another kind must
        # not take one.
        self.taken = {p for p in self.modules if p}
        self.input = Value("input", (batch,) + tuple(input_shape))
        self.parameters = {}    # module tensor -> its parameter node's Value
        self.state_names = list(root.state_dict())

    # -- failures ---------------------------------------------------------

    def place(self, node):
        """Where `node` comes from, for an error line."""
        if node.op == "call_module":
            m = self.modules[node.target]
            return "module '%s' (%s)" % (node.target, module_class(m))
        path = node.meta.get("tcc_path", "")
        what = describe_target(node)
        if path:
            return "module '%s' (%s) calls %s" % (path, module_class(self.modules[path]), what)
        return "the model's forward calls %s" % what

    def fail(self, node, problem):
        raise ImportFailure("%s: %s: %s" % (self.where, self.place(node), problem))

    def in_shape(self, node):
        return torch_shape(node.args[0])

    def out_shape(self, node):
        return torch_shape(node)

    # -- values -----------------------------------------------------------

    def value(self, node, arg, permuted=False):
        """The Value (or constant) of an fx argument; a Value whose batch is
        not first only where the caller takes one (`permuted`)."""
        if isinstance(arg, torch.fx.Node):
            if arg not in self.values:
                self.fail(node, "reads %s, which tcc cannot represent" % arg.name)
            v = self.values[arg]
            if isinstance(v, Missing):
                self.fail(node, "reads %s: %s" % (arg.name, v.reason))
            if v is self.input and self.vocab:
                self.fail(node, READS_IDS)
            if isinstance(v, Value) and v.perm and not permuted:
                self.fail(node, "reads %s, whose batch dim is dim %d (PyTorch's shape %s): "
                          "tcc keeps the batch first; it takes a batch-second sequence "
                          "only into nn.MultiheadAttention(batch_first=False) and a "
                          "permute back" % (arg.name, v.perm.index(0),
                                            list(torch_shape(arg))))
            return v
        return arg

    def tensor(self, node, arg):
        v = self.value(node, arg)
        if not isinstance(v, Value):
            self.fail(node, "expects a tensor here, got %r" % (v,))
        return v

    def unique(self, base):
        name, k = base, 0
        while name in self.shapes or name in self.taken or name == "input":
            k += 1
            name = "%s_%d" % (base, k)
        return name

    def name_for(self, node):
        """A module's path for its first call (its parameters' prefix);
        otherwise `<module path>.<fx name>` or the fx name."""
        if node.op == "call_module":
            n = self.calls[node.target] = self.calls.get(node.target, 0) + 1
            m = self.modules[node.target]
            if n > 1 and any(True for _ in m.state_dict()):
                self.fail(node, "is called %d times: its weights are shared, and tcc gives "
                          "each layer its own; use one module per call" % n)
            if n == 1:
                self.taken.discard(node.target)
                return node.target
            return self.unique("%s_%d" % (node.target, n - 1))
        path = node.meta.get("tcc_path", "")
        # fx numbers repeated names across the whole graph (add_7); within
        # a module's path the first one needs no number.
        base = re.sub(r"_\d+$", "", node.name)
        return self.unique(path + "." + base if path else base)

    def emit(self, name, op, inputs, fields, shape):
        node = {"name": name, "op": op, "inputs": [v.name for v in inputs]}
        node.update(fields)
        self.nodes.append(node)
        self.shapes[name] = tuple(shape)
        return Value(name, shape)

    def exact(self, node, v, shape):
        """`v` in PyTorch's shape `shape` (inserting a reshape after a
        global pool, whose [N, C] PyTorch keeps as [N, C, 1, 1])."""
        if v.shape == tuple(shape):
            return v
        if math.prod(v.shape) != math.prod(shape):
            self.fail(node, "internal error: tcc's value %s is %s where PyTorch's is %s"
                      % (v.name, list(v.shape), list(shape)))
        key = (v.name, tuple(shape))
        if key not in self.views:
            self.views[key] = self.emit(self.unique(v.name + ".view"), "reshape", [v],
                                        {"shape": list(shape[1:])}, shape)
        return self.views[key]

    # -- the result -------------------------------------------------------

    def finish(self, out):
        """The nodes that reach `out`, each without `inputs` where it reads
        the node written before it (model.json's default)."""
        live, stack = set(), [out.name]
        by_name = {n["name"]: n for n in self.nodes}
        while stack:
            name = stack.pop()
            if name in live or name == "input":
                continue
            live.add(name)
            stack.extend(by_name[name]["inputs"])
        nodes, previous = [], "input"
        for n in self._state_order([n for n in self.nodes if n["name"] in live]):
            n = dict(n)
            if not n["inputs"]:
                del n["inputs"]  # a parameter node reads nothing
            elif n["inputs"] == [previous]:
                del n["inputs"]
            elif len(n["inputs"]) == 1:
                n["inputs"] = n["inputs"][0]
            nodes.append(n)
            previous = n["name"]
        return nodes


    def _state_order(self, nodes):
        """`nodes` with each parameter node moved before its first reader,
        or before the first layer whose tensors follow its tensor in the
        state_dict where that comes first (a ViT registers its class token
        before the patch conv that runs first): the compiled model's state
        is then in the state_dict's order. A parameter node reads nothing,
        so it may stand anywhere."""
        rank = {k: i for i, k in enumerate(self.state_names)}

        def first(n):
            return min((i for k, i in rank.items()
                        if k == n["name"] or k.startswith(n["name"] + ".")), default=None)

        params = [n for n in nodes if n["op"] == "parameter"]
        out = [n for n in nodes if n["op"] != "parameter"]
        for p in params:
            later = (j for j, n in enumerate(out) if n["op"] != "parameter" and
                     (p["name"] in n["inputs"] or
                      first(n) is not None and first(n) > rank[p["name"]]))
            out.insert(next(later, len(out)), p)
        return out


def describe_target(node):
    """`torch.cat`, `F.relu`, `operator.add`, `Tensor.view` for an fx node."""
    t = node.target
    if node.op == "call_method":
        return "Tensor.%s" % t
    if node.op == "get_attr":
        return "the attribute %s" % t
    mod = getattr(t, "__module__", None) or ""
    name = getattr(t, "__name__", str(t))
    if mod.startswith("torch.nn.functional") or mod == "torch._C._nn":
        return "F." + name
    if mod in ("_operator", "operator"):
        return "operator." + name
    if mod.startswith("torch") or mod == "" and hasattr(torch, name):
        return "torch." + name
    return "%s.%s" % (mod, name) if mod else name
