"""F.scaled_dot_product_attention for PyTorch 1.13, which lacks it (2.0 has
it): its math, dispatched as torch.nn.functional's own functions are, so
that torch.fx records the call (as it does 2.x's builtin) and not its body.
Importing this module installs it where PyTorch has none."""
import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    args = (query, key, value)
    if torch.overrides.has_torch_function(args):
        return torch.overrides.handle_torch_function(
            scaled_dot_product_attention, args, query, key, value, attn_mask=attn_mask,
            dropout_p=dropout_p, is_causal=is_causal, scale=scale)
    scores = query @ key.transpose(-2, -1) * (query.size(-1) ** -0.5 if scale is None
                                              else scale)
    if attn_mask is not None:  # PyTorch's: True attends; a float mask is added
        scores = scores.masked_fill(~attn_mask, float("-inf")) \
            if attn_mask.dtype == torch.bool else scores + attn_mask
    if is_causal:
        t, s = scores.shape[-2:]
        above = torch.ones(t, s, dtype=torch.bool, device=scores.device).triu(1)
        scores = scores.masked_fill(above, float("-inf"))
    return F.dropout(torch.softmax(scores, -1), dropout_p) @ value


if not hasattr(F, "scaled_dot_product_attention"):
    F.scaled_dot_product_attention = scaled_dot_product_attention
