"""nn.MultiheadAttention -> model.json's `attention` node.

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
