"""torch.nn modules -> model.json ops (docs/import.md, "What maps to what").

Each mapper checks every option of the module that changes what it
computes and refuses a value tcc's op does not have: nothing is
approximated. Parameters keep the module's names (the node is named by
the module's path); a parameter with requires_grad False is written
`"trainable": false`.
"""

from torch import nn

from tcc_import.shapes import show

# The leaf modules the tracer keeps whole (tracing.PathTracer).
MODULES = (nn.Conv2d, nn.Linear, nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm,
           nn.ReLU, nn.Sigmoid, nn.Tanh, nn.SiLU, nn.LeakyReLU, nn.ELU, nn.CELU, nn.GELU,
           nn.Softmax, nn.LogSoftmax, nn.Dropout, nn.MaxPool2d, nn.AvgPool2d,
           nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d, nn.Flatten, nn.Identity,
           nn.MultiheadAttention, nn.Embedding)


def pair(v):
    return list(v) if isinstance(v, (tuple, list)) else [v, v]


def compact(p):
    """3 for [3, 3], as model.json is written by hand."""
    return p[0] if p[0] == p[1] else p


def param(p):
    """A parameter's model.json field: true (trainable), false (absent), or
    {"trainable": false} for a frozen one."""
    if p is None:
        return False
    return True if p.requires_grad else {"trainable": False}


def params(m, fields):
    """Adds "weight" and "bias" where they differ from the op's default
    (present and trainable)."""
    for role in ("weight", "bias"):
        v = param(getattr(m, role, None))
        if v is not True:
            fields[role] = v
    return fields


def conv2d(b, node, m, x, out):
    if m.padding_mode != "zeros":
        b.fail(node, "padding_mode '%s': tcc's conv2d pads with zeros only; use "
               "padding_mode='zeros'" % m.padding_mode)
    x = b.exact(node, x, b.in_shape(node))
    kernel, dilation = pair(m.kernel_size), pair(m.dilation)
    if m.padding == "valid":
        padding = [0, 0]
    elif m.padding == "same":
        spans = [d * (k - 1) for k, d in zip(kernel, dilation)]
        if any(s % 2 for s in spans):
            b.fail(node, "padding='same' with an even kernel pads one side more than the "
                   "other, which tcc's conv2d cannot; use an odd kernel or explicit padding")
        padding = [s // 2 for s in spans]
    else:
        padding = pair(m.padding)
    fields = {"out_channels": m.out_channels, "kernel": compact(kernel)}
    if pair(m.stride) != [1, 1]:
        fields["stride"] = compact(pair(m.stride))
    if padding != [0, 0]:
        fields["padding"] = compact(padding)
    if dilation != [1, 1]:
        fields["dilation"] = compact(dilation)
    if m.groups != 1:
        fields["groups"] = m.groups
    params(m, fields)
    return b.emit(b.name_for(node), "conv2d", [x], fields, out)


def linear(b, node, m, x, out):
    shape = b.in_shape(node)  # [N, ..., F], mapped along F as PyTorch does
    fields = params(m, {"out_features": m.out_features})
    return b.emit(b.name_for(node), "linear", [b.exact(node, x, shape)], fields, out)


def batch_norm(b, node, m, x, out):
    if not m.track_running_stats:
        b.fail(node, "track_running_stats=False normalizes with batch statistics in "
               "evaluation too; tcc's batch_norm keeps running statistics (use "
               "track_running_stats=True)")
    if m.momentum is None:
        b.fail(node, "momentum=None (a cumulative average): tcc's batch_norm takes an "
               "exponential average; give a momentum in [0, 1]")
    shape = b.in_shape(node)
    if len(shape) not in (2, 4):
        b.fail(node, "batch norm of a %d-d input %s: tcc's batch_norm takes [N, C] or "
               "[N, C, H, W]" % (len(shape), show(shape)))
    x = b.exact(node, x, shape)
    fields = {}
    if m.momentum != 0.1:
        fields["momentum"] = m.momentum
    if m.eps != 1e-5:
        fields["eps"] = m.eps
    return b.emit(b.name_for(node), "batch_norm", [x], params(m, fields), out)


def layer_norm(b, node, m, x, out):
    shape = b.in_shape(node)
    dims = len(m.normalized_shape)
    if tuple(m.normalized_shape) != tuple(shape[len(shape) - dims:]) or dims >= len(shape):
        b.fail(node, "normalized_shape %s is not the trailing dims of its input %s"
               % (list(m.normalized_shape), show(shape)))
    x = b.exact(node, x, shape)
    fields = {}
    if dims != len(shape) - 1:
        fields["normalized_dims"] = dims
    if m.eps != 1e-5:
        fields["eps"] = m.eps
    return b.emit(b.name_for(node), "layer_norm", [x], params(m, fields), out)


def pool(b, node, m, x, out):
    op = "max_pool2d" if isinstance(m, nn.MaxPool2d) else "avg_pool2d"
    if m.ceil_mode:
        b.fail(node, "ceil_mode=True: tcc's %s rounds the output size down; use "
               "ceil_mode=False (or pad the input)" % op)
    if op == "max_pool2d" and (pair(m.dilation) != [1, 1] or m.return_indices):
        b.fail(node, "dilation or return_indices: tcc's max_pool2d has neither")
    if op == "avg_pool2d" and m.divisor_override is not None:
        b.fail(node, "divisor_override: tcc's avg_pool2d divides by the window "
               "(count_include_pad)")
    x = b.exact(node, x, b.in_shape(node))
    kernel = pair(m.kernel_size)
    stride = pair(m.stride if m.stride is not None else m.kernel_size)
    fields = {"kernel": compact(kernel)}
    if stride != kernel:
        fields["stride"] = compact(stride)
    if pair(m.padding) != [0, 0]:
        fields["padding"] = compact(pair(m.padding))
    if op == "avg_pool2d" and not m.count_include_pad:
        fields["count_include_pad"] = False
    return b.emit(b.name_for(node), op, [x], fields, out)


def global_pool(b, node, m, x, out):
    if pair(m.output_size) != [1, 1]:
        b.fail(node, "output_size %s: tcc pools globally (output_size 1) only"
               % (m.output_size,))
    if isinstance(m, nn.AdaptiveMaxPool2d) and m.return_indices:
        b.fail(node, "return_indices: tcc's global_max_pool returns the values only")
    op = "global_avg_pool" if isinstance(m, nn.AdaptiveAvgPool2d) else "global_max_pool"
    x = b.exact(node, x, b.in_shape(node))
    return b.emit(b.name_for(node), op, [x], {}, out[:2])


def flatten(b, node, m, x, out):
    from tcc_import.functions import flatten_to  # functions.py imports this module
    return flatten_to(b, node, x, out)


def activation(op, **fields_of):
    def mapper(b, node, m, x, out):
        fields = {k: f(m) for k, f in fields_of.items()}
        fields = {k: v for k, v in fields.items() if v is not None}
        return b.emit(b.name_for(node), op, [x], fields, x.shape)
    return mapper


def softmax(op):
    def mapper(b, node, m, x, out):
        if m.dim is None:
            b.fail(node, "dim=None (PyTorch's implicit dim, deprecated): give the dim")
        x = b.exact(node, x, b.in_shape(node))
        return b.emit(b.name_for(node), op, [x], {"axis": m.dim}, out)
    return mapper


def dropout(b, node, m, x, out):
    if m.p == 0:
        return x  # the identity (torchvision's ViT has 25 of them)
    return b.emit(b.name_for(node), "dropout", [x], {"p": m.p}, x.shape)


def _default(value, default):
    return None if value == default else value


def _gelu(m):
    return _default(getattr(m, "approximate", "none"), "none")


MAPPERS = [
    (nn.Conv2d, conv2d), (nn.Linear, linear), ((nn.BatchNorm1d, nn.BatchNorm2d), batch_norm),
    (nn.LayerNorm, layer_norm), ((nn.MaxPool2d, nn.AvgPool2d), pool),
    ((nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d), global_pool), (nn.Flatten, flatten),
    (nn.ReLU, activation("relu")), (nn.Sigmoid, activation("sigmoid")),
    (nn.Tanh, activation("tanh")), (nn.SiLU, activation("silu")),
    (nn.LeakyReLU, activation("leaky_relu",
                              negative_slope=lambda m: _default(m.negative_slope, 0.01))),
    (nn.ELU, activation("elu", alpha=lambda m: _default(m.alpha, 1.0))),
    (nn.CELU, activation("celu", alpha=lambda m: _default(m.alpha, 1.0))),
    (nn.GELU, activation("gelu", approximate=_gelu)),
    (nn.Softmax, softmax("softmax")), (nn.LogSoftmax, softmax("log_softmax")),
    (nn.Dropout, dropout), (nn.Identity, lambda b, node, m, x, out: x),
]


def map_module(b, node):
    m = b.modules[node.target]
    if isinstance(m, nn.MultiheadAttention) and forward_is_torchs(m):
        from tcc_import.attention import multihead_attention
        return multihead_attention(b, node, m)
    if isinstance(m, nn.Embedding) and forward_is_torchs(m):
        from tcc_import.embedding import embedding
        return embedding(b, node, m)
    for cls, mapper in MAPPERS:
        if isinstance(m, cls) and forward_is_torchs(m):
            if node.kwargs or len(node.args) != 1:
                b.fail(node, "is called with more than one argument; tcc's ops take the "
                       "layer's input only")
            return mapper(b, node, m, b.tensor(node, node.args[0]), b.out_shape(node))
    b.fail(node, "has no model.json op; tcc maps these modules: %s (docs/import.md)"
           % ", ".join("nn." + cls.__name__ for cls in MODULES))


def forward_is_torchs(module):
    """True when the module's forward is that of a torch.nn class, not
    overridden in user code."""
    return getattr(type(module).forward, "__module__", "").startswith("torch.nn")
