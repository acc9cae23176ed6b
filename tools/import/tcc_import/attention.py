"""nn.MultiheadAttention -> model.json's `attention` node;
F.scaled_dot_product_attention -> `scaled_dot_product_attention`.

The node is the module: the same parameters under the same names
(in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias), its heads
and attention dropout. batch_first=False takes the [T, N, E] sequence that
a permute of a batch-first tensor gives (graph.Value.perm) and returns it
in that layout, so that the permute back restores tcc's batch-first value.
"""

from tcc_import.graph import Missing, Value

# The permute of a [N, T, E] tensor that batch_first=False reads and returns.
SEQUENCE_FIRST = [1, 0, 2]

WEIGHTS = Missing("nn.MultiheadAttention's attention weights (need_weights=True): tcc "
                  "computes the attention's output only; pass need_weights=False")


def _arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _sequence_first(b, node, x):
    """`x` (PyTorch's [T, N, E], the batch second) as the SEQUENCE_FIRST
    permute of a batch-first value: DETR's features.flatten(2).permute(2, 0,
    1) is [N, E, T] permuted, which a transpose to [N, T, E] makes so."""
    if not isinstance(x, Value) or not x.perm or len(x.perm) != 3 or x.perm[1] != 0 or \
            x.perm == SEQUENCE_FIRST:
        return x
    batch_first = [x.perm[1], x.perm[0], x.perm[2]]  # x.perm = batch_first[SEQUENCE_FIRST]
    key = (x.name, tuple(batch_first))  # one transpose for query, key and value
    if key not in b.views:
        b.views[key] = b.emit(b.unique(x.name + ".tokens"), "transpose",
                              [Value(x.name, x.shape)], {"perm": batch_first},
                              [x.shape[p] for p in batch_first])
    y = b.views[key]
    return Value(y.name, y.shape, SEQUENCE_FIRST)


def multihead_attention(b, node, m):
    """(output, weights) of a call of `m`, an nn.MultiheadAttention."""
    q, k, v = (_arg(node, i, n) for i, n in enumerate(("query", "key", "value")))
    if _arg(node, 3, "key_padding_mask") is not None:
        b.fail(node, "key_padding_mask: tcc's attention attends to every key (no padding "
               "mask yet); remove it")
    if _arg(node, 5, "attn_mask") is not None or _arg(node, 7, "is_causal", False):
        b.fail(node, "attn_mask or is_causal: tcc's attention takes no mask tensor; a causal "
               "mask is the model.json node's \"causal\": true (write it there)")
    if not m._qkv_same_embed_dim:
        b.fail(node, "kdim or vdim (%s, %s) other than embed_dim %d: tcc's attention "
               "projects query, key and value from one width" % (m.kdim, m.vdim, m.embed_dim))
    if m.bias_k is not None or m.add_zero_attn:
        b.fail(node, "add_bias_kv or add_zero_attn: tcc's attention attends to the given "
               "keys only")
    frozen = [n for n, p in m.named_parameters() if not p.requires_grad]
    if frozen:
        b.fail(node, "%s has requires_grad False: tcc's attention trains all its "
               "projections" % frozen[0])
    layout = None if m.batch_first else SEQUENCE_FIRST
    query = b.value(node, q, permuted=True)
    source = b.value(node, k, permuted=True)
    if not isinstance(query, Value) or not isinstance(source, Value):
        b.fail(node, "expects tensors for query, key and value")
    if v is not k and b.value(node, v, permuted=True) is not source:
        b.fail(node, "takes different key and value tensors: tcc's attention takes keys and "
                     "values from one source (self-attention, or cross-attention from one "
                     "tensor)")
    if not m.batch_first:
        query, source = (_sequence_first(b, node, x) for x in (query, source))
    for x in (query, source):
        if x.perm != layout or len(x.shape) != 3:
            if not m.batch_first and x.perm is None:
                b.fail(node, "batch_first=False reads [T, N, E] with the batch second: tcc "
                       "takes it as the permute of a batch-first [N, T, E] tensor "
                       "(x.transpose(0, 1) before, and back after), or use batch_first=True")
            b.fail(node, "reads a tensor of PyTorch's shape %s: tcc's attention takes [N, T, "
                   "E] (batch_first=True) or its permute [T, N, E] (batch_first=False)"
                   % list(b.in_shape(node)))
    fields = {"heads": m.num_heads}
    if m.dropout:
        fields["dropout"] = m.dropout
    if m.in_proj_bias is None:
        fields["bias"] = False
    inputs = [query] if source.name == query.name else [query, source]
    out = b.emit(b.name_for(node), "attention", inputs, fields, query.shape)
    out.perm = layout
    return out, WEIGHTS if _arg(node, 4, "need_weights", True) else None


# [N, T, H, d] -> [N, H, T, d], the head split before F.scaled_dot_product_attention
HEADS_FIRST = [0, 2, 1, 3]


def _heads_side_by_side(b, node, arg, what):
    """The [N, T, H*d] Value whose head split `x.view(N, T, H, d).transpose(1,
    2)` is `arg` (PyTorch's [N, H, T, d]), and H: tcc's attention reads the
    heads side by side, as nn.MultiheadAttention splits them."""
    x = b.tensor(node, arg)
    split = getattr(x, "permuted_from", None)
    view = split and split[1] == HEADS_FIRST and getattr(split[0], "reshaped_from", None)
    if not view or len(view.shape) != 3 or \
            view.shape[2] != split[0].shape[2] * split[0].shape[3]:
        b.fail(node, "reads a %s that is not the head split of a [N, T, H*d] tensor "
               "(x.view(N, T, H, d).transpose(1, 2)): tcc's scaled_dot_product_attention "
               "takes the heads side by side" % what)
    return view, split[0].shape[2]


def scaled_dot_product_attention(b, node):
    """F.scaled_dot_product_attention(q, k, v) of head splits: the node on
    the [N, T, H*d] tensors, its result split into heads again as PyTorch's
    [N, H, T, dv] (a view that the usual transpose and reshape back undo)."""
    if _arg(node, 3, "attn_mask") is not None or node.kwargs.get("enable_gqa"):
        b.fail(node, "attn_mask or enable_gqa: tcc's scaled_dot_product_attention takes no "
               "mask tensor (is_causal=True is its causal field) and one head count")
    inputs, heads = [], set()
    for i, name in enumerate(("query", "key", "value")):
        v, h = _heads_side_by_side(b, node, _arg(node, i, name), name)
        inputs.append(v)
        heads.add(h)
    if len(heads) != 1:
        b.fail(node, "query, key and value have %s heads: tcc's attention takes one count"
               % sorted(heads))
    h = heads.pop()
    fields = {"heads": h}
    if _arg(node, 5, "is_causal", False):
        fields["causal"] = True
    if _arg(node, 4, "dropout_p", 0.0):
        fields["dropout"] = _arg(node, 4, "dropout_p")
    if node.kwargs.get("scale") is not None:
        fields["scale"] = node.kwargs["scale"]
    n, t = inputs[0].shape[:2]
    width = inputs[2].shape[2]
    out = b.emit(b.name_for(node), "scaled_dot_product_attention", inputs, fields,
                 (n, t, width))
    split = b.emit(b.unique(out.name + ".view"), "reshape", [out],
                   {"shape": [t, h, width // h]}, (n, t, h, width // h))
    split.reshaped_from = out
    heads_first = b.emit(b.unique(out.name + ".transpose"), "transpose", [split],
                         {"perm": HEADS_FIRST}, (n, h, t, width // h))
    heads_first.permuted_from = (split, HEADS_FIRST)
    return heads_first
