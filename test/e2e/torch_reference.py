"""A PyTorch reference for tcc models: the network, the loss and the training
recipe of a tcc model.json (docs/model-format.md), written with torch.nn and
torch.optim so that a tcc trainer can be checked against it step by step.

Used only by the tests (test/e2e/compare_with_torch.py); needs Debian's
python3-torch (torch 1.13) and numpy.

What is reproduced, with tcc's semantics (passes/BuildTrainStep.cpp,
runtime/kernels/Step.h, runtime/kernels/Optimizer.h, codegen/cpu/ops/):

* every graph op of the model format except dropout (its random mask cannot
  be reproduced; `unsupported_reason` says so), attention without dropout
  included (`attention`: torch 1.13 has no F.scaled_dot_product_attention)
  and the `attention` node as torch.nn.MultiheadAttention itself;
* batch norm with PyTorch's momentum convention and unbiased running
  variance; ghost batch norm: statistics per group of `ghost_batch`
  consecutive samples, running statistics moved by the mean over the groups
  of their means and of their unbiased variances;
* the loss: cross_entropy (label smoothing, mean|sum) or mse_loss against the
  one-hot labels;
* one optimizer step per `accumulate` micro-batches of `batch_size` samples
  (a mean loss is scaled by 1/accumulate per micro-batch; buffers move once
  per micro-batch), gradient clipping by the global norm, the schedule
  (`lr_factor`, a copy of Step.h's), parameter groups (first matching glob),
  frozen parameters, torch.optim.SGD / Adam / AdamW / LAMB (tcc's
  formula), Lookahead and EMA;
* fp16-mixed (`TccModel.storage16`, `Trainer`): every value tcc stores in
  fp16 rounded to fp16 where it is stored, forward and backward (the
  operands of conv2d and linear, and the results of the ops that follow
  their inputs' precision), and torch.amp.GradScaler's dynamic loss scaling
  written out (Debian's torch 1.13 has no fp16 autocast and no GradScaler on
  the CPU);
* pure fp16 / bf16 (`TccModel.storage16` with `low_dtype`, `Trainer.stored16`):
  the same forward and backward, and the parameters of conv2d and linear
  layers, their optimizer slots, Lookahead and EMA copies rounded to 16 bits
  where tcc stores them: each update computed in float32, then rounded.
"""

import fnmatch
import math
import re
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Unsupported(Exception):
    """The model uses something the reference cannot reproduce."""


# --------------------------------------------------------------------------
# Model description helpers
# --------------------------------------------------------------------------

def pair(v):
    if isinstance(v, (list, tuple)):
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _substitute(value, args):
    """A block's nodes with each "$name" string replaced by the instance's
    with.name (docs/model-format.md, Blocks)."""
    if isinstance(value, str) and value.startswith("$") and value[1:] in args:
        return args[value[1:]]
    if isinstance(value, list):
        return [_substitute(v, args) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, args) for k, v in value.items()}
    return value


def expand_blocks(spec):
    """spec's graph with its `block` and `repeat` nodes expanded as the
    frontend expands them: instance nodes named '<instance>.<node>', a
    repeat's instances '<name>.<from + i>' in a chain, "input" inside a
    block the instance's input, an instance's name its last node."""
    blocks = spec.get("blocks", {})

    def expand(graph, prefix, instance_input):
        out, local, previous = [], {}, instance_input

        def resolve(name):
            if name == "input" and instance_input is not None:
                return instance_input
            return local.get(name, name)

        for node in graph:
            ins = node.get("inputs")
            if ins is not None:
                ins = resolve(ins) if isinstance(ins, str) else [resolve(n) for n in ins]
            if node["op"] in ("block", "repeat"):
                current = (ins if isinstance(ins, str) else ins[0]) if ins else previous
                repeat = node["op"] == "repeat"
                first = int(node.get("from", 0)) if repeat else 0
                for i in range(int(node.get("count", 1)) if repeat else 1):
                    name = prefix + node["name"] + (".%d" % (first + i) if repeat else "")
                    body = _substitute(blocks[node["block"]]["graph"], node.get("with", {}))
                    nodes, current, _ = expand(body, name + ".", current)
                    out += nodes
                local[node["name"]] = previous = current
                continue
            node = dict(node, name=prefix + node["name"])
            if ins is not None:
                node["inputs"] = ins
            elif instance_input is not None and node["op"] != "parameter":
                node["inputs"] = previous
            out.append(node)
            local[node["name"][len(prefix):]] = previous = node["name"]
        return out, previous, local

    if not blocks and not any(n["op"] in ("block", "repeat") for n in spec["graph"]):
        return spec
    graph, _, top = expand(spec["graph"], "", None)
    expanded = dict(spec, graph=graph)
    expanded.pop("blocks", None)
    if "output" in spec:
        expanded["output"] = top.get(spec["output"], spec["output"])
    return expanded


def node_inputs(graph, index):
    node = graph[index]
    if node["op"] == "parameter":
        return []
    ins = node.get("inputs")
    if ins is None:
        return ["input"] if index == 0 else [graph[index - 1]["name"]]
    if isinstance(ins, str):
        return [ins]
    return list(ins)


def topo_order(graph):
    """Node indices, producers first (stable: graph order where possible)."""
    names = {n["name"]: i for i, n in enumerate(graph)}
    done, order, visiting = set(), [], set()

    def visit(i):
        if i in done:
            return
        if i in visiting:
            raise ValueError("cycle through node " + graph[i]["name"])
        visiting.add(i)
        for name in node_inputs(graph, i):
            if name != "input":
                visit(names[name])
        visiting.discard(i)
        done.add(i)
        order.append(i)

    for i in range(len(graph)):
        visit(i)
    return order


def unsupported_reason(spec):
    for node in spec["graph"]:
        # p 0 is the identity, as in PyTorch (a test may set a model's p to 0).
        if (node["op"] == "dropout" and node.get("p", 0.5) > 0) or node.get("dropout", 0) > 0:
            return ("node '%s' has dropout: its random mask cannot be reproduced "
                    "in PyTorch" % node["name"])
    prec = spec["train"].get("precision", "fp32")
    if prec != "fp32":
        return "train.precision is %s; the comparison needs fp32" % prec
    return None


def _param_spec(node, role, default_present=True):
    """(present, init, trainable) of a node's weight/bias field."""
    v = node.get(role, default_present)
    if isinstance(v, bool):
        return v, "default", True
    if isinstance(v, dict):
        return True, v.get("init", "default"), bool(v.get("trainable", True))
    raise ValueError("node %s: bad %s %r" % (node["name"], role, v))


def expand_braces(pattern):
    """'{a,b}x' -> ['ax', 'bx'] (LLVM GlobPattern's brace expansion)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(pattern[:m.start()] + alt + pattern[m.end():]))
    return out


def glob_match(pattern, name):
    for p in expand_braces(pattern):
        p = p.replace("[^", "[!")
        if fnmatch.fnmatchcase(name, p):
            return True
    return False


def train_epochs_of(spec, name):
    """The `train_epochs` of parameter `name` ("<node>.<role>"), or None."""
    node, _, role = name.rpartition(".")
    for n in spec["graph"]:
        p = n.get(role) if n["name"] == node else None
        if isinstance(p, dict) and "train_epochs" in p:
            return int(p["train_epochs"])
    return None


def group_scales(spec, name):
    """(lr_scale, weight_decay_scale) of parameter `name`: the first group of
    train.optimizer.groups whose match (a glob or a list of globs) matches."""
    for g in spec["train"]["optimizer"].get("groups", []):
        match = g["match"]
        patterns = [match] if isinstance(match, str) else list(match)
        if any(glob_match(p, name) for p in patterns):
            return float(g.get("lr_scale", 1.0)), float(g.get("weight_decay_scale", 1.0))
    return 1.0, 1.0


# --------------------------------------------------------------------------
# Initialisation (only to start from sensible values: the tcc trainer gets
# the very same tensors through --init)
# --------------------------------------------------------------------------

def patch_whitening_weight(images, kh, kw, eps=5e-4, count=5000, unbiased=False,
                           negated=True):
    """airbench's init_whitening_conv on the first `count` normalised images
    [n, c, h, w]; myrtle.ai's whitening_filter with eps 1e-2, the covariance
    over n - 1 (`unbiased`) and without the negated filters."""
    x = images[:count].double()
    patches = x.unfold(2, kh, 1).unfold(3, kw, 1)          # n c h' w' kh kw
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, x.shape[1] * kh * kw)
    cov = patches.t() @ patches / (patches.shape[0] - (1 if unbiased else 0))
    evals, evecs = torch.linalg.eigh(cov)
    evals, evecs = evals.flip(0), evecs.t().flip(0)
    filters = evecs / torch.sqrt(evals + eps)[:, None]
    filters = filters.reshape(-1, x.shape[1], kh, kw)
    return (torch.cat([filters, -filters]) if negated else filters).float()


def apply_init(tensor, init, module_default, images=None):
    """Fills `tensor` per a model.json init; module_default() restores the
    PyTorch module default."""
    with torch.no_grad():
        if isinstance(init, (int, float)) and not isinstance(init, bool):
            tensor.fill_(float(init))
        elif isinstance(init, dict):
            t = init.get("type")
            if t == "normal":
                tensor.normal_(init.get("mean", 0.0), init.get("std", 1.0))
            elif t == "uniform":
                tensor.uniform_(init.get("low", 0.0), init.get("high", 1.0))
            elif t == "constant":
                tensor.fill_(float(init["value"]))
            elif t == "patch_whitening" and images is None:
                module_default()
            elif t == "patch_whitening":
                w = patch_whitening_weight(
                    images, tensor.shape[2], tensor.shape[3], float(init.get("eps", 5e-4)),
                    int(init.get("images", 5000)), bool(init.get("unbiased", False)),
                    tensor.shape[0] == 2 * tensor[0].numel())
                tensor.copy_(w.reshape(tensor.shape))
            else:
                raise ValueError("unknown init %r" % init)
        elif init == "default":
            module_default()
        elif init == "zeros":
            tensor.zero_()
        elif init == "ones":
            tensor.fill_(1.0)
        elif init in ("kaiming_uniform", "kaiming_normal", "xavier_uniform",
                      "xavier_normal"):
            getattr(nn.init, init + "_")(tensor)
        elif init == "dirac":
            module_default()
            k = min(tensor.shape[0], tensor.shape[1])
            nn.init.dirac_(tensor[:k])
        elif init == "patch_whitening":
            if images is None:
                module_default()
            else:
                w = patch_whitening_weight(images, tensor.shape[2], tensor.shape[3],
                                           negated=tensor.shape[0] == 2 * tensor[0].numel())
                tensor.copy_(w.reshape(tensor.shape))
        else:
            raise ValueError("unknown init %r" % (init,))


# --------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------

class BatchNorm(nn.Module):
    """torch.nn.BatchNorm{1,2}d with separately optional weight and bias and
    ghost batches of `ghost_batch` consecutive samples, or with `strided`
    myrtle.ai's GhostBatchNorm (cifar10-fast torch_backend.py): the batch
    viewed as (-1, C * num_splits, ...) and normalised as one."""

    def __init__(self, channels, momentum, eps, ghost_batch, has_weight, has_bias,
                 strided=False):
        super().__init__()
        self.momentum, self.eps, self.ghost = float(momentum), float(eps), int(ghost_batch or 0)
        self.strided = strided
        # bench/pytorch_gpu.py's ghost batch norm (use_fast_ghost_norm): the
        # ghost groups of `splits` as myrtle.ai's GhostBatchNorm takes them,
        # with running statistics per group, averaged to evaluate.
        self.fast_splits = 0
        self.weight = nn.Parameter(torch.ones(channels)) if has_weight else None
        self.bias = nn.Parameter(torch.zeros(channels)) if has_bias else None
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        n = x.shape[0]
        if self.fast_splits:
            return self._fast_ghost(x)
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                self.bias, False, 0.0, self.eps)
        self.num_batches_tracked.add_(1)
        if self.ghost == 0 or self.ghost >= n:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                self.bias, True, self.momentum, self.eps)
        if n % self.ghost:
            raise ValueError("ghost_batch %d does not divide the batch %d" % (self.ghost, n))
        if self.strided:
            return self._strided(x, n // self.ghost)
        chunks = x.split(self.ghost)
        y = torch.cat([F.batch_norm(c, None, None, self.weight, self.bias, True, 0.0,
                                    self.eps) for c in chunks])
        with torch.no_grad():
            dims = [0] + list(range(2, x.dim()))
            means = torch.stack([c.mean(dim=dims) for c in chunks])
            variances = torch.stack([c.var(dim=dims, unbiased=True) for c in chunks])
            m = self.momentum
            self.running_mean.mul_(1 - m).add_(m * means.mean(0))
            self.running_var.mul_(1 - m).add_(m * variances.mean(0))
        return y

    def _strided(self, x, splits):
        """GhostBatchNorm.forward in training: split k holds the samples
        i = k (mod splits)."""
        c = x.shape[1]
        view = x.reshape(-1, c * splits, *x.shape[2:])
        w = self.weight.repeat(splits) if self.weight is not None else None
        b = self.bias.repeat(splits) if self.bias is not None else None
        y = F.batch_norm(view, None, None, w, b, True, 0.0, self.eps).reshape(x.shape)
        with torch.no_grad():
            dims = [0] + list(range(2, view.dim()))
            means = view.mean(dim=dims).reshape(splits, c)
            variances = view.var(dim=dims, unbiased=True).reshape(splits, c)
            m = self.momentum
            # the mean over the splits' running statistics, as the
            # original collates them before evaluating
            self.running_mean.mul_(1 - m).add_(m * means.mean(0))
            self.running_var.mul_(1 - m).add_(m * variances.mean(0))
        return y


    def _fast_ghost(self, x):
        """myrtle.ai's GhostBatchNorm: one batch_norm over the batch viewed
        as (-1, C * splits, ...), so group k holds the samples i = k (mod
        splits) whichever grouping the model names (the batch is a random
        draw: the same work up to a permutation of it), and running
        statistics per group, whose mean is the one-buffer update's."""
        c, splits = x.shape[1], self.fast_splits
        if not self.training:
            return F.batch_norm(x, self.running_mean.view(splits, c).mean(0),
                                self.running_var.view(splits, c).mean(0), self.weight,
                                self.bias, False, 0.0, self.eps)
        last = x.dim() == 4 and not x.is_contiguous() and \
            x.is_contiguous(memory_format=torch.channels_last)
        w = self.weight.repeat(splits) if self.weight is not None else None
        b = self.bias.repeat(splits) if self.bias is not None else None
        y = F.batch_norm(x.reshape(-1, c * splits, *x.shape[2:]), self.running_mean,
                         self.running_var, w, b, True, self.momentum, self.eps).reshape(x.shape)
        return y.contiguous(memory_format=torch.channels_last) if last else y


def use_fast_ghost_norm(model, batch):
    """Every ghost batch norm of `model` in myrtle.ai's form (BatchNorm.
    _fast_ghost) for batches of `batch` samples: the benchmark's PyTorch,
    not the parity tests' (its groups are strided)."""
    for m in model.modules():
        if isinstance(m, BatchNorm) and 0 < m.ghost < batch and batch % m.ghost == 0:
            m.fast_splits = batch // m.ghost
            m.running_mean = m.running_mean.repeat(m.fast_splits)
            m.running_var = m.running_var.repeat(m.fast_splits)


class LayerNorm(nn.Module):
    def __init__(self, shape, eps, has_weight, has_bias):
        super().__init__()
        self.shape, self.eps = tuple(shape), float(eps)
        self.weight = nn.Parameter(torch.ones(self.shape)) if has_weight else None
        self.bias = nn.Parameter(torch.zeros(self.shape)) if has_bias else None

    def forward(self, x):
        return F.layer_norm(x, self.shape, self.weight, self.bias, self.eps)


def attention(q, k, v, heads, causal, scale=None):
    """F.scaled_dot_product_attention (written out for torch 1.13)
    after torch.nn.MultiheadAttention's head split: q [N, Tq, H*d], k and v
    [N, Tk, H*d]; a causal mask is PyTorch's tril(ones(Tq, Tk))."""
    n, tq, width = q.shape
    tk = k.shape[1]
    d, dv = width // heads, v.shape[2] // heads
    qh = q.reshape(n, tq, heads, d).transpose(1, 2)
    kh = k.reshape(n, tk, heads, d).transpose(1, 2)
    vh = v.reshape(n, tk, heads, dv).transpose(1, 2)
    # The fused kernels where torch has them (2.1 and later take `scale`), as
    # users call them: the GPU benchmark's PyTorch rows.
    if hasattr(F, "scaled_dot_product_attention") and (
            scale is None or tuple(map(int, torch.__version__.split(".")[:2])) >= (2, 1)):
        extra = {} if scale is None else {"scale": float(scale)}
        o = F.scaled_dot_product_attention(qh, kh, vh, is_causal=causal, **extra)
        return o.transpose(1, 2).reshape(n, tq, heads * dv)
    s = (qh @ kh.transpose(-2, -1)) * (1 / math.sqrt(d) if scale is None else float(scale))
    if causal:
        keep = torch.ones(tq, tk, dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return (torch.softmax(s, dim=-1) @ vh).transpose(1, 2).reshape(n, tq, heads * dv)


def _axis(axis, rank):
    axis = int(axis)
    return axis + rank if axis < 0 else axis


class TccModel(nn.Module):
    """The network of a model.json. Submodules are nested by the dots of the
    node names, so state_dict() names are tcc's ('layer1.conv.weight')."""

    def __init__(self, spec, init_images=None):
        super().__init__()
        spec = expand_blocks(spec)
        reason = unsupported_reason(spec)
        if reason and "dropout" in reason:
            raise Unsupported(reason)
        self.spec = spec
        self.graph = spec["graph"]
        self.order = topo_order(self.graph)
        self.output_name = spec.get("output") or self.graph[-1]["name"]
        self.frozen = set()       # names of parameters with trainable false
        self._nodes = {}          # node name -> module (for nodes with params)
        self._init_images = init_images
        # When a list, every max-reduction's input is appended to it (see
        # MaxWindow): the test checks that no window holds a near-tie.
        self.max_probe = None
        # fp16-mixed emulation: when True, values tcc stores in fp16 are
        # rounded to fp16 (both ways: the gradient of a rounded value is
        # rounded too); `grad_probe`, when a list, receives the largest
        # |gradient| arriving at each rounded value before it is rounded.
        self.storage16 = False
        self.low_dtype = torch.float16  # what storage16 rounds to
        self.grad_probe = None
        with torch.no_grad():
            self._run(torch.zeros([2] + list(spec["input"]["shape"])), build=True)
        for name, p in self.named_parameters():
            if name in self.frozen:
                p.requires_grad_(False)

    # Nested registration: 'a.b.c' -> self.a.b.c
    def _register(self, name, module):
        parts = name.split(".")
        parent = self
        for part in parts[:-1]:
            child = parent._modules.get(part)
            if child is None:
                child = nn.Module()
                parent.add_module(part, child)
            parent = child
        if parts[-1] in parent._modules:
            raise ValueError("node name %s collides with another node" % name)
        parent.add_module(parts[-1], module)
        self._nodes[name] = module

    def _register_parameter(self, name, tensor):
        """A parameter node: nn.Parameter 'a.b.c' as self.a.b's 'c'."""
        parts = name.split(".")
        parent = self
        for part in parts[:-1]:
            child = parent._modules.get(part)
            if child is None:
                child = nn.Module()
                parent.add_module(part, child)
            parent = child
        parent.register_parameter(parts[-1], nn.Parameter(tensor))
        self._nodes[name] = getattr(parent, parts[-1])

    def _make(self, node, x):
        op, name = node["op"], node["name"]
        images = self._init_images
        if op == "parameter":
            t = torch.zeros([int(d) for d in node["shape"]])
            apply_init(t, node.get("init", "default"), lambda: t.zero_())
            self._register_parameter(name, t)
            if not node.get("trainable", True):
                self.frozen.add(name)
            return None
        if op == "conv2d":
            k = pair(node["kernel"])
            stride, dil = pair(node.get("stride", 1)), pair(node.get("dilation", 1))
            pad = node.get("padding", 0)
            if pad == "same":
                pad = (dil[0] * (k[0] - 1) // 2, dil[1] * (k[1] - 1) // 2)
            else:
                pad = pair(pad)
            groups = int(node.get("groups", 1))
            wp, winit, wtrain = _param_spec(node, "weight")
            bp, binit, btrain = _param_spec(node, "bias")
            m = nn.Conv2d(x.shape[1], int(node["out_channels"]), k, stride, pad, dil,
                          groups, bias=bp)
            reads_input = node_inputs(self.graph, self.graph.index(node)) == ["input"]
            apply_init(m.weight, winit, lambda: None,
                       images=images if reads_input else None)
            if bp:
                apply_init(m.bias, binit, lambda: None)
            if not wtrain:
                self.frozen.add(name + ".weight")
            if bp and not btrain:
                self.frozen.add(name + ".bias")
            return m
        if op == "linear":
            wp, winit, wtrain = _param_spec(node, "weight")
            bp, binit, btrain = _param_spec(node, "bias")
            m = nn.Linear(x.shape[-1], int(node["out_features"]), bias=bp)
            apply_init(m.weight, winit, lambda: None)
            if bp:
                apply_init(m.bias, binit, lambda: None)
            if not wtrain:
                self.frozen.add(name + ".weight")
            if bp and not btrain:
                self.frozen.add(name + ".bias")
            return m
        if op == "batch_norm":
            wp, winit, wtrain = _param_spec(node, "weight")
            bp, binit, btrain = _param_spec(node, "bias")
            m = BatchNorm(x.shape[1], node.get("momentum", 0.1), node.get("eps", 1e-5),
                          node.get("ghost_batch"), wp, bp,
                          node.get("ghost_grouping", "consecutive") == "strided")
            if wp:
                apply_init(m.weight, winit, lambda: m.weight.fill_(1.0))
                if not wtrain:
                    self.frozen.add(name + ".weight")
            if bp:
                apply_init(m.bias, binit, lambda: m.bias.zero_())
                if not btrain:
                    self.frozen.add(name + ".bias")
            return m
        if op == "layer_norm":
            wp, winit, wtrain = _param_spec(node, "weight")
            bp, binit, btrain = _param_spec(node, "bias")
            nd = node.get("normalized_dims")
            nd = x.dim() - 1 if nd is None else int(nd)
            m = LayerNorm(list(x.shape[x.dim() - nd:]), node.get("eps", 1e-5), wp, bp)
            if wp:
                apply_init(m.weight, winit, lambda: m.weight.fill_(1.0))
                if not wtrain:
                    self.frozen.add(name + ".weight")
            if bp:
                apply_init(m.bias, binit, lambda: m.bias.zero_())
                if not btrain:
                    self.frozen.add(name + ".bias")
            return m
        if op == "embedding":
            rows = int(node["num_embeddings"])
            padding = node.get("padding_idx")
            m = nn.Embedding(rows, int(node["embedding_dim"]), padding_idx=padding)
            wp, winit, wtrain = _param_spec(node, "weight")
            apply_init(m.weight, winit, lambda: None)
            if padding is not None:  # as nn.Embedding's reset_parameters
                with torch.no_grad():
                    m.weight[padding].zero_()
            if not wtrain:
                self.frozen.add(name + ".weight")
            return m
        if op == "attention":
            # PyTorch's own parameters and inits (in_proj_weight, in_proj_bias,
            # out_proj.weight, out_proj.bias): tcc names them the same.
            return nn.MultiheadAttention(x.shape[-1], int(node["heads"]), dropout=0.0,
                                         bias=bool(node.get("bias", True)), batch_first=True)
        return None

    def _op(self, node, xs, batch=None):
        op = node["op"]
        if op == "parameter":
            p = self._nodes[node["name"]]
            return p.expand(batch, *p.shape[1:])
        x = xs[0]
        if op in ("conv2d", "linear", "batch_norm", "layer_norm"):
            return self._nodes[node["name"]](x)
        if op == "embedding":  # the ids arrive as the batch's floats
            return self._nodes[node["name"]](x.long())
        if op == "relu":
            return F.relu(x)
        if op == "sigmoid":
            return torch.sigmoid(x)
        if op == "tanh":
            return torch.tanh(x)
        if op == "silu":
            return F.silu(x)
        if op == "leaky_relu":
            return F.leaky_relu(x, node.get("negative_slope", 0.01))
        if op == "elu":
            return F.elu(x, node.get("alpha", 1.0))
        if op == "celu":
            return F.celu(x, node.get("alpha", 1.0))
        if op == "gelu":
            return F.gelu(x, approximate=node.get("approximate", "none"))
        if op == "softmax":
            return F.softmax(x, dim=_axis(node.get("axis", -1), x.dim()))
        if op == "log_softmax":
            return F.log_softmax(x, dim=_axis(node.get("axis", -1), x.dim()))
        if op in ("max_pool2d", "avg_pool2d"):
            k = pair(node["kernel"])
            s = pair(node.get("stride", k))
            p = pair(node.get("padding", 0))
            if op == "max_pool2d":
                self._probe_max(node, x, k, s, p)
                return F.max_pool2d(x, k, s, p)
            return F.avg_pool2d(x, k, s, p, count_include_pad=node.get("count_include_pad", True))
        if op == "global_avg_pool":
            return F.adaptive_avg_pool2d(x, 1).flatten(1)
        if op == "global_max_pool":
            self._probe_max(node, x, tuple(x.shape[2:]), tuple(x.shape[2:]), (0, 0))
            return F.adaptive_max_pool2d(x, 1).flatten(1)
        if op == "add":
            return xs[0] + xs[1]
        if op == "mul":
            a, b = xs
            # a channel gate [N, C] times [N, C, ...], either side
            if a.dim() == 2 and b.dim() > 2:
                a = a.reshape(*a.shape, *([1] * (b.dim() - 2)))
            if b.dim() == 2 and a.dim() > 2:
                b = b.reshape(*b.shape, *([1] * (a.dim() - 2)))
            return a * b
        if op == "scale":
            return x * float(node["factor"])
        if op == "concat":
            return torch.cat(xs, dim=_axis(node.get("axis", 1), x.dim()))
        if op == "flatten":
            return x.flatten(1)
        if op == "reshape":
            return x.reshape(x.shape[0], *[int(d) for d in node["shape"]])
        if op == "transpose":
            return x.permute(*[int(d) for d in node["perm"]])
        if op == "slice":
            axis = _axis(node["axis"], x.dim())
            index = [slice(None)] * x.dim()
            index[axis] = slice(node.get("start", 0), node.get("end"), node.get("step", 1))
            return x[tuple(index)]
        if op == "select":
            return x.select(_axis(node["axis"], x.dim()), int(node["index"]))
        if op == "matmul":
            a, b = xs
            if node.get("transpose_a", False):
                a = a.transpose(-2, -1)
            if node.get("transpose_b", False):
                b = b.transpose(-2, -1)
            return torch.matmul(a, b)
        if op == "mean":
            return x.mean(dim=_axis(node["axis"], x.dim()), keepdim=node.get("keepdim", False))
        if op == "dropout":
            if node.get("p", 0.5) == 0:
                return x
            raise Unsupported("dropout")
        if op == "attention":
            source = xs[1] if len(xs) > 1 else x
            mask = None
            if node.get("causal", False):  # True: not attended (torch 1.13 has no is_causal)
                mask = torch.ones(x.shape[1], source.shape[1], dtype=torch.bool).triu(1)
            return self._nodes[node["name"]](x, source, source, need_weights=False,
                                             attn_mask=mask)[0]
        if op == "scaled_dot_product_attention":
            return attention(xs[0], xs[1], xs[2], int(node["heads"]),
                             bool(node.get("causal", False)), node.get("scale"))
        raise ValueError("unknown op " + op)

    def _probe_max(self, node, x, kernel, stride, padding):
        if self.max_probe is not None:
            self.max_probe.append(MaxWindow(node["name"], x.detach().clone(), kernel,
                                            stride, padding))

    def _run(self, x, build=False):
        values = {"input": x}
        low = set()  # nodes whose value tcc stores in fp16 (storage16)
        for i in self.order:
            node = self.graph[i]
            names = node_inputs(self.graph, i)
            xs = [values[n] for n in names]
            if build:
                m = self._make(node, xs[0] if xs else None)
                if m is not None:
                    self._register(node["name"], m)
                    if isinstance(m, BatchNorm):
                        values[node["name"]] = xs[0]
                        continue
            if self.storage16 and not build:
                y, is_low = self._op16(node, xs, all(n in low for n in names))
                if is_low:
                    low.add(node["name"])
                values[node["name"]] = y
            else:
                values[node["name"]] = self._op(node, xs, batch=x.shape[0])
        return values[self.output_name]

    # tcc-precision's policy (ir/TccDialect.td): conv2d and linear compute
    # in 16 bits; these ops follow their inputs; every other op is f32.
    FOLLOWS_INPUT = {"relu", "sigmoid", "tanh", "silu", "leaky_relu", "elu", "celu",
                     "gelu", "max_pool2d", "avg_pool2d", "global_avg_pool",
                     "global_max_pool", "add", "mul", "scale", "concat", "flatten",
                     "reshape", "transpose", "batch_norm"}

    def _round16(self, t):
        if t is None:
            return None
        y = t.to(self.low_dtype).float()
        if self.grad_probe is not None and y.requires_grad:
            y.register_hook(lambda g: self.grad_probe.append(float(g.abs().max())))
        return y

    def _op16(self, node, xs, inputs_low):
        """One op as tcc runs it under fp16-mixed: (value, stored in fp16)."""
        op, r = node["op"], self._round16
        if op in ("conv2d", "linear"):
            m = self._nodes[node["name"]]
            if op == "conv2d":
                y = F.conv2d(r(xs[0]), r(m.weight), r(m.bias), m.stride, m.padding,
                             m.dilation, m.groups)
            else:
                y = F.linear(r(xs[0]), r(m.weight), r(m.bias))
            return r(y), True
        if op in self.FOLLOWS_INPUT and inputs_low:
            # Each reader's gradient of an fp16 value is an fp16 tensor,
            # then the readers' gradients are summed in fp16: rounding the
            # operand again (a no-op forward) rounds this reader's part.
            return r(self._op(node, [r(x) for x in xs])), True
        return self._op(node, xs), False

    def forward(self, x):
        return self._run(x)


class MaxWindow:
    """The input of one max reduction (max_pool2d, global_max_pool) in one
    forward pass. Where the two largest elements of a window differ by less
    than the round-off of the implementations compared, each may pick a
    different one and route the gradient elsewhere: a near-tie, which makes a
    comparison of two correct implementations fail."""

    def __init__(self, name, x, kernel, stride, padding):
        self.name, self.x = name, x
        self.kernel, self.stride, self.padding = kernel, stride, padding

    def windows(self, x, fill):
        """x [N, C, H, W] as [N, C, Ho, Wo, window elements], padded with fill."""
        ph, pw = self.padding
        if ph or pw:
            x = F.pad(x, (pw, pw, ph, ph), value=fill)
        (kh, kw), (sh, sw) = self.kernel, self.stride
        w = x.unfold(2, kh, sh).unfold(3, kw, sw)
        return w.reshape(*w.shape[:4], kh * kw)

    def gaps(self):
        """Per window, the largest element minus the second largest (inf for
        a window of one element), in float64."""
        w = self.windows(self.x.double(), float("-inf"))
        if w.shape[-1] < 2:
            return torch.full(w.shape[:4], float("inf"), dtype=torch.float64)
        top = w.topk(2, dim=-1).values
        return top[..., 0] - top[..., 1]

    def window_max(self, x):
        """Per window, the largest |x| (x the same shape as self.x)."""
        return self.windows(x.double().abs(), 0.0).amax(dim=-1)


# --------------------------------------------------------------------------
# Loss, schedule
# --------------------------------------------------------------------------

def loss_fn(spec, output, labels):
    loss = spec["loss"]
    reduction = loss.get("reduction", "mean")
    if loss["op"] == "cross_entropy" and loss.get("targets") == "sequence":
        return F.cross_entropy(output.reshape(-1, output.shape[-1]), labels.reshape(-1),
                               ignore_index=int(loss.get("ignore_index", -100)),
                               reduction=reduction,
                               label_smoothing=float(loss.get("label_smoothing", 0.0)))
    if loss["op"] == "cross_entropy":
        return F.cross_entropy(output, labels, reduction=reduction,
                               label_smoothing=float(loss.get("label_smoothing", 0.0)))
    if loss["op"] == "mse_loss":
        target = F.one_hot(labels, int(spec["input"]["classes"])).to(output.dtype)
        return F.mse_loss(output, target, reduction=reduction)
    raise ValueError("unknown loss " + loss["op"])


def lr_factor(schedule, step, steps_per_epoch, total_steps):
    """runtime/kernels/Step.h's lr_factor: `step` counts the optimizer steps
    taken before this one; t counts from `count_from`."""
    schedule = schedule or {"type": "constant"}
    step += int(schedule.get("count_from", 0))
    kind = schedule.get("type", "constant")
    per_epoch = schedule.get("unit", "epoch") == "epoch"
    per_unit = float(max(1, steps_per_epoch)) if per_epoch else 1.0
    t, total = step / per_unit, total_steps / per_unit
    if kind == "constant":
        return 1.0
    if kind == "step":
        return float(schedule.get("gamma", 0.1)) ** math.floor(t / float(schedule["step_size"]))
    if kind == "linear_warmup":
        return min(1.0, t / float(schedule["warmup"]))
    if kind == "cosine":
        warmup = float(schedule.get("warmup", 0))
        min_factor = float(schedule.get("min_factor", 0))
        if t < warmup:
            return t / warmup
        span = max(total - warmup, 1e-12)
        p = min(1.0, (t - warmup) / span)
        return min_factor + (1 - min_factor) * 0.5 * (1 + math.cos(math.pi * p))
    if kind == "one_cycle":
        initial = 1.0 / float(schedule.get("div_factor", 25))
        last = initial / float(schedule.get("final_div_factor", 1e4))
        end1 = float(schedule.get("pct_start", 0.3)) * total_steps - 1
        end2 = float(total_steps) - 1
        x, start, frm, to = float(step), 0.0, initial, 1.0
        if x > end1:
            start, frm, to, end1 = end1, 1.0, last, end2
        pct = min(1.0, (x - start) / (end1 - start)) if end1 > start else 1.0
        if schedule.get("anneal", "cos") == "cos":
            return to + (frm - to) / 2.0 * (math.cos(math.pi * pct) + 1.0)
        return (to - frm) * pct + frm
    if kind == "piecewise_linear":
        pts = schedule["points"]
        ts = [float(p[0]) for p in pts]
        fs = [float(p[1]) for p in pts]
        if t >= ts[-1]:
            return fs[-1]
        i = 1
        while ts[i] <= t:
            i += 1
        w = (t - ts[i - 1]) / (ts[i] - ts[i - 1])
        return fs[i - 1] + w * (fs[i] - fs[i - 1])
    raise ValueError("unknown schedule " + kind)


def _foreach_copy(dst, src):
    """torch._foreach_copy_ where this PyTorch has it (2.1 on)."""
    if hasattr(torch, "_foreach_copy_"):
        torch._foreach_copy_(dst, src)
    else:
        for d, s in zip(dst, src):
            d.copy_(s)


def total_steps_for(epochs, steps_per_epoch):
    """runtime/trainer/Trainer.cpp's totalStepsFor."""
    x = float(epochs) * float(steps_per_epoch)
    if not x > 0:
        return 0
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * max(1.0, x):
        return int(nearest)
    return int(math.ceil(x))


# --------------------------------------------------------------------------
# The trainer
# --------------------------------------------------------------------------

def _lamb_step(p, grad, state, lr, beta1, beta2, eps, wd, step):
    """LAMB as runtime/kernels/Optimizer.h defines it; `step` counts this one."""
    if "exp_avg" not in state:
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_avg_sq"] = torch.zeros_like(p)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.mul_(beta1).add_(grad, alpha=1 - beta1)
    v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    u = (m / bc1) / ((v / bc2).sqrt() + eps) + wd * p
    pn, un = p.norm(), u.norm()
    r = (pn / un).item() if (pn > 0 and un > 0) else 1.0
    p.add_(u, alpha=-lr * r)


class Trainer:
    """Trains a TccModel with the recipe of its model.json, one optimizer step
    per call of `step` with the `accumulate * batch_size` samples given.
    `fast` (bench/pytorch_gpu.py): torch.optim's multi-tensor (foreach)
    implementations, multi-tensor (torch._foreach_*) updates for what
    torch.optim lacks (SGD on update momentum, Lookahead, EMA), no rounding
    emulation (a pure 16-bit model is really 16-bit there), and `step`
    returns the loss as a tensor instead of reading it (no host sync per
    step), as a PyTorch user would train."""

    def __init__(self, model, spec, steps_per_epoch, total_steps, fast=False):
        self.model, self.spec = model, spec
        train = spec["train"]
        self.opt = train["optimizer"]
        self.kind = self.opt["type"]
        self.accumulate = int(train.get("accumulate", 1))
        self.micro = int(train["batch_size"])
        self.clip = train.get("grad_clip_norm")
        self.schedule = train.get("schedule") or {"type": "constant"}
        self.ema_spec = train.get("ema")
        self.lookahead = self.opt.get("lookahead")
        self.steps_per_epoch, self.total_steps = steps_per_epoch, total_steps
        self.count = 0
        self.fast = fast
        self.grad_norms = []      # global norms before clipping, per step
        self.base_lr = float(self.opt["lr"])
        self.base_wd = float(self.opt.get("weight_decay", 0.0))
        # Pure 16-bit: the parameters tcc stores in 16 bits (conv2d's and
        # linear's), rounded from the start; every later store rounds too.
        self.stored16 = set()
        if train.get("precision") in ("fp16", "bf16") and not fast:
            for prefix, m in model.named_modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    self.stored16 |= {prefix + "." + n for n, _ in m.named_parameters()}
            self._round_stored16(dict(model.named_parameters()))
        self.params = OrderedDict((n, p) for n, p in model.named_parameters()
                                  if p.requires_grad)
        # One torch.optim parameter group per parameter: its lr and weight
        # decay carry the group scales of model.json.
        self.groups = []
        for name, p in self.params.items():
            lr_s, wd_s = group_scales(spec, name)
            self.groups.append({"params": [p], "name": name, "lr_scale": lr_s,
                                "wd": self.base_wd * wd_s, "lr": self.base_lr,
                                "weight_decay": self.base_wd * wd_s})
        # fast: torch.optim gets one group per (lr scale, weight decay), as
        # a hand-written training script has them.
        optim_groups = self.groups
        if fast:
            merged = OrderedDict()
            for g in self.groups:
                key = (g["lr_scale"], g["wd"])
                if key not in merged:
                    merged[key] = dict(g, params=[], name=None)
                merged[key]["params"] += g["params"]
            optim_groups = list(merged.values())
        self.momentum_of = self.opt.get("momentum_of", "gradient")
        if self.kind == "sgd" and self.momentum_of == "update":
            # myrtle.ai's ResNet-9 (cifar10-fast torch_backend.py,
            # nesterov_update): the buffer accumulates lr-scaled steps.
            self.optimizer = None
            self.sgd_buffers = {n: torch.zeros_like(p) for n, p in self.params.items()}
        elif self.kind == "sgd":
            self.optimizer = torch.optim.SGD(
                optim_groups, lr=self.base_lr,
                momentum=float(self.opt.get("momentum", 0.0)),
                dampening=float(self.opt.get("dampening", 0.0)),
                nesterov=bool(self.opt.get("nesterov", False)), foreach=fast)
        elif self.kind == "adam":
            self.optimizer = torch.optim.Adam(
                optim_groups, lr=self.base_lr,
                betas=tuple(self.opt.get("betas", (0.9, 0.999))),
                eps=float(self.opt.get("eps", 1e-8)), foreach=fast)
        elif self.kind == "adamw":
            self.optimizer = torch.optim.AdamW(
                optim_groups, lr=self.base_lr,
                betas=tuple(self.opt.get("betas", (0.9, 0.999))),
                eps=float(self.opt.get("eps", 1e-8)), foreach=fast)
        elif self.kind == "lamb":
            self.optimizer = None
            self.lamb_state = {n: {} for n in self.params}
            self.betas = tuple(float(b) for b in self.opt.get("betas", (0.9, 0.999)))
            self.eps = float(self.opt.get("eps", 1e-6))
        else:
            raise ValueError("unknown optimizer " + self.kind)
        # A parameter with train_epochs stops getting gradients after them
        # (airbench sets requires_grad = False; torch.optim skips it).
        self.train_epochs = {n: train_epochs_of(spec, n) for n in self.params}
        self.slow = OrderedDict()
        if self.lookahead:
            self.slow = OrderedDict((n, p.detach().clone()) for n, p in self.params.items())
            if self.lookahead.get("buffers"):
                # airbench's LookaheadState covers the state_dict's floats
                for n, t in self.model.named_buffers():
                    if t.is_floating_point():
                        self.slow[n] = t.detach().clone()
        self.ema = OrderedDict()
        if self.ema_spec:
            self.ema = OrderedDict((n, t.detach().clone())
                                   for n, t in self.model_state().items())
        # fp16-mixed: torch.amp.GradScaler by hand (its defaults filled as
        # the frontend fills them).
        self.amp = train.get("precision") == "fp16-mixed"
        if self.amp:
            ls = dict({"init_scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                       "growth_interval": 2000}, **(train.get("loss_scale") or {}))
            self.loss_scale = np.float32(ls["init_scale"])
            self.growth_factor, self.backoff_factor = ls["growth_factor"], ls["backoff_factor"]
            self.growth_interval = int(ls["growth_interval"])
            self.growth_tracker = 0
            self.optimizer_steps = 0   # steps the optimizer applied
            self.skipped = []          # the steps skipped for an inf/nan gradient
            self.forced_skips = None   # a set: skip these steps instead of checking

    def model_state(self):
        """Parameters and buffers, without num_batches_tracked."""
        return OrderedDict((n, t) for n, t in self.model.state_dict().items()
                           if not n.endswith("num_batches_tracked"))

    def lr(self):
        return self.base_lr * lr_factor(self.schedule, self.count, self.steps_per_epoch,
                                        self.total_steps)

    def step(self, images, labels):
        model, spec = self.model, self.spec
        model.train()
        for p in self.params.values():
            p.grad = None
        mean = spec["loss"].get("reduction", "mean") == "mean"
        total_loss = 0.0
        for k in range(self.accumulate):
            x = images[k * self.micro:(k + 1) * self.micro]
            y = labels[k * self.micro:(k + 1) * self.micro]
            loss = loss_fn(spec, model(x), y)
            total_loss += loss.detach() if self.fast else loss.item()
            if self.accumulate > 1 and mean:
                loss = loss / self.accumulate
            if self.amp:
                loss = loss * torch.tensor(self.loss_scale)
            loss.backward()
        found_inf = False
        if self.amp:
            # GradScaler.unscale_: the reciprocal in double, rounded once.
            inverse = torch.tensor(np.float32(1.0 / float(self.loss_scale)))
            for p in self.params.values():
                if p.grad is not None:
                    p.grad.mul_(inverse)
                    found_inf |= not bool(torch.isfinite(p.grad).all())
            if self.forced_skips is not None:
                found_inf = self.count in self.forced_skips
            if found_inf:
                self.skipped.append(self.count)
        if self.clip:
            norm = torch.nn.utils.clip_grad_norm_(list(self.params.values()),
                                                  float(self.clip))
            self.grad_norms.append(float(norm))
        lr = self.lr()
        for n, p in self.params.items():
            epochs = self.train_epochs[n]
            if epochs is not None and self.count >= epochs * self.steps_per_epoch:
                p.grad = None
        with torch.no_grad():
            if found_inf:
                pass  # GradScaler.step skips optimizer.step()
            elif self.kind == "sgd" and self.momentum_of == "update" and self.fast:
                self._update_momentum_foreach(lr)
            elif self.kind == "sgd" and self.momentum_of == "update":
                m = float(self.opt["momentum"])
                for g in self.groups:
                    p, v = g["params"][0], self.sgd_buffers[g["name"]]
                    if p.grad is None:
                        continue
                    dw = p.grad.add(p, alpha=g["wd"]).mul_(-lr * g["lr_scale"])
                    v.mul_(m).add_(dw)
                    p.add_(dw.add_(v, alpha=m) if self.opt.get("nesterov") else v)
            elif self.optimizer is not None:
                for g in self.optimizer.param_groups:
                    g["lr"] = lr * g["lr_scale"]
                self.optimizer.step()
            else:
                b1, b2 = self.betas
                applied = self.optimizer_steps if self.amp else self.count
                for g in self.groups:
                    p = g["params"][0]
                    if p.grad is None:
                        continue
                    _lamb_step(p, p.grad, self.lamb_state[g["name"]], lr * g["lr_scale"],
                               b1, b2, self.eps, g["wd"], applied + 1)
            if self.amp:
                self._update_loss_scale(found_inf)
            if self.stored16:
                self._round_stored16(self.params)
                self._round_stored16(self._optimizer_slots())
            s = self.count
            if self.lookahead and (s + 1) % int(self.lookahead.get("every", 5)) == 0:
                alpha = float(self.lookahead.get("alpha", 0.5))
                if self.lookahead.get("alpha_schedule", "constant") == "cubic":
                    alpha *= ((s + 1) / float(self.total_steps)) ** 3
                state = self.model_state()
                if self.fast:
                    slows, live = list(self.slow.values()), [state[n] for n in self.slow]
                    torch._foreach_mul_(slows, alpha)
                    torch._foreach_add_(slows, live, alpha=1 - alpha)
                    _foreach_copy(live, slows)
                for n, slow in (() if self.fast else self.slow.items()):
                    slow.mul_(alpha).add_(state[n], alpha=1 - alpha)
                    state[n].copy_(slow)
                self._round_stored16(self.slow)
                self._round_stored16(self.params)
            if self.lookahead and self.lookahead.get("copy_back") and s + 1 == self.total_steps:
                # airbench's final update(decay=1.0): the run ends on the slow weights
                state = self.model_state()
                for n, slow in self.slow.items():
                    state[n].copy_(slow)
            if self.ema_spec:
                every = int(self.ema_spec.get("every", 1))
                # myrtle.ai's update_ema counts the steps of each epoch
                count = s % self.steps_per_epoch if self.ema_spec.get("per_epoch") else s + 1
                if count % every == 0:
                    d = float(self.ema_spec["decay"]) ** every
                    state = self.model_state()
                    if self.fast:
                        averages = list(self.ema.values())
                        torch._foreach_mul_(averages, d)
                        torch._foreach_add_(averages, [state[n] for n in self.ema], alpha=1 - d)
                    for n, t in (() if self.fast else state.items()):
                        self.ema[n].mul_(d).add_(t, alpha=1 - d)
                    self._round_stored16(self.ema)
        self.count += 1
        return total_loss

    def _update_momentum_foreach(self, lr):
        """The update-momentum SGD of step() with torch._foreach_* ops, one
        launch per op and (lr scale, weight decay) group."""
        m, nesterov = float(self.opt["momentum"]), bool(self.opt.get("nesterov"))
        by_group = OrderedDict()
        for g in self.groups:
            p = g["params"][0]
            if p.grad is not None:
                ps, gs, vs = by_group.setdefault((g["lr_scale"], g["wd"]), ([], [], []))
                ps.append(p)
                gs.append(p.grad)
                vs.append(self.sgd_buffers[g["name"]])
        for (scale, wd), (ps, gs, vs) in by_group.items():
            dw = torch._foreach_add(gs, ps, alpha=wd)
            torch._foreach_mul_(dw, -lr * scale)
            torch._foreach_mul_(vs, m)
            torch._foreach_add_(vs, dw)
            if nesterov:
                torch._foreach_add_(dw, vs, alpha=m)
                torch._foreach_add_(ps, dw)
            else:
                torch._foreach_add_(ps, vs)

    def _round_stored16(self, tensors):
        """Rounds, in place, the tensors of {name: tensor} whose name (or its
        slot's parameter) tcc stores in 16 bits."""
        for n, t in tensors.items():
            if n.split(":")[0] in self.stored16:
                with torch.no_grad():
                    t.copy_(t.to(self.model.low_dtype).float())

    def _optimizer_slots(self):
        """{"param:slot": tensor} of every optimizer slot."""
        out = {}
        for n, p in self.params.items():
            if self.optimizer is not None:
                slots = self.optimizer.state.get(p, {})
            elif self.kind == "lamb":
                slots = self.lamb_state[n]
            else:
                slots = {"momentum_buffer": self.sgd_buffers[n]}
            for k, t in slots.items():
                if torch.is_tensor(t) and t.dim() > 0:
                    out[n + ":" + k] = t
        return out

    def _update_loss_scale(self, found_inf):
        """GradScaler.update (torch._amp_update_scale_), in f32 as it keeps the scale."""
        if found_inf:
            self.loss_scale = np.float32(float(self.loss_scale) * self.backoff_factor)
            self.growth_tracker = 0
        else:
            self.optimizer_steps += 1
            self.growth_tracker += 1
            if self.growth_tracker == self.growth_interval:
                grown = np.float32(float(self.loss_scale) * self.growth_factor)
                if np.isfinite(grown):
                    self.loss_scale = grown
                self.growth_tracker = 0

    def state(self):
        """Everything a tcc checkpoint holds, under tcc's names."""
        out = OrderedDict()
        for n, t in self.model.state_dict().items():
            out[n] = t.detach().clone()
        for n, p in self.params.items():
            if self.kind == "sgd" and self.momentum_of == "update":
                out["optimizer.%s.momentum_buffer" % n] = self.sgd_buffers[n].detach().clone()
            elif self.optimizer is not None:
                st = self.optimizer.state.get(p, {})
                for slot in ("momentum_buffer", "exp_avg", "exp_avg_sq"):
                    if st.get(slot) is not None:
                        out["optimizer.%s.%s" % (n, slot)] = st[slot].detach().clone()
            else:
                for slot, t in self.lamb_state[n].items():
                    out["optimizer.%s.%s" % (n, slot)] = t.detach().clone()
        for n, t in self.slow.items():
            out["lookahead." + n] = t.clone()
        for n, t in self.ema.items():
            out["ema." + n] = t.clone()
        out["step"] = torch.tensor(self.count, dtype=torch.long)
        if self.amp:
            out["amp.loss_scale"] = torch.tensor(self.loss_scale)
            out["amp.growth_tracker"] = torch.tensor(self.growth_tracker, dtype=torch.long)
            out["amp.optimizer_steps"] = torch.tensor(self.optimizer_steps, dtype=torch.long)
        return out
