"""Small Vision Transformers written in PyTorch for `tcc import` (issue 38's
token ops): torchvision's layout (patch conv, class token, positional
embedding, pre-LN encoder blocks with nn.MultiheadAttention and a GELU MLP,
LayerNorm, head on the class token) at toy sizes, one block with
batch_first=False between transposes; and one whose attention is written
out (a fused q/k/v linear sliced, q @ k^T scaled, softmax, @ v) with a mean
over the tokens; and one with F.scaled_dot_product_attention between head
splits (sdpa_standin.py stands in for it on PyTorch 1.13)."""
import torch
import torch.nn.functional as F
from torch import nn

import sdpa_standin  # noqa: F401  (F.scaled_dot_product_attention on PyTorch 1.13)


class Block(nn.Module):
    """A pre-LN encoder block as torchvision's EncoderBlock."""

    def __init__(self, dim, heads, mlp, batch_first=True, approximate="none", dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(dim, heads, dropout=dropout,
                                                    batch_first=batch_first)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(approximate=approximate),
                                 nn.Dropout(dropout), nn.Linear(mlp, dim), nn.Dropout(dropout))

    def forward(self, input):
        x = self.ln_1(input)
        if self.self_attention.batch_first:
            x, _ = self.self_attention(x, x, x, need_weights=False)
        else:
            x = x.transpose(0, 1)  # [T, N, E]
            x, _ = self.self_attention(x, x, x)
            x = x.transpose(0, 1)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    def __init__(self, image=16, patch=4, dim=16, heads=2, mlp=32, classes=10, dropout=0.0):
        super().__init__()
        self.patch = patch
        self.conv_proj = nn.Conv2d(3, dim, patch, stride=patch)
        self.class_token = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        tokens = (image // patch) ** 2 + 1
        self.pos_embedding = nn.Parameter(torch.randn(1, tokens, dim) * 0.5)
        self.layers = nn.Sequential(Block(dim, heads, mlp, dropout=dropout),
                                    Block(dim, heads, mlp, batch_first=False,
                                          approximate="tanh", dropout=dropout))
        self.ln = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        n, c, h, w = x.shape
        torch._assert(h % self.patch == 0, "image size not divisible by the patch")
        x = self.conv_proj(x).reshape(n, -1, (h // self.patch) * (w // self.patch))
        x = x.permute(0, 2, 1)
        x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.layers(x + self.pos_embedding)
        return self.head(self.ln(x)[:, 0])


class WrittenAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        qkv = self.qkv(x)
        q, k, v = qkv[..., :self.dim], qkv[:, :, self.dim:2 * self.dim], qkv[..., -self.dim:]
        scores = (q @ k.transpose(-2, -1)) * self.dim ** -0.5
        return self.proj(torch.matmul(F.softmax(scores, dim=-1), v))


class MeanViT(nn.Module):
    """Attention written out, mean pooling over the tokens; class token at
    the end, read as x[:, -1]; a positional embedding for more tokens than
    there are, sliced; a learnt query attending to the tokens
    (cross-attention, no biases)."""

    def __init__(self, dim=16, classes=10):
        super().__init__()
        self.patchify = nn.Conv2d(3, dim, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pos = nn.Parameter(torch.randn(1, 20, dim) * 0.5)  # for up to 20 tokens
        self.norm = nn.LayerNorm(dim)
        self.attn = WrittenAttention(dim)
        self.query = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pool = nn.MultiheadAttention(dim, 2, bias=False, batch_first=True)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patchify(x).flatten(2).transpose(1, 2)
        n = x.size(0)
        x = torch.cat([x, self.cls.expand(n, -1, -1)], 1)
        x = x + self.pos[:, :x.size(1)]
        x = x + self.attn(self.norm(x))
        pooled, _ = self.pool(self.query.expand(n, -1, -1), x, x)  # cross-attention
        return self.head(x[:, 1:].mean(1) + x[:, -1] + pooled[:, 0])


class SdpaBlock(nn.Module):
    """Attention as PyTorch 2.x code writes it: q, k, v linears, the heads
    split with view and transpose, F.scaled_dot_product_attention (causal
    unless given options), the heads side by side again (permute, reshape),
    the out-projection."""

    def __init__(self, dim, heads, **options):
        super().__init__()
        self.heads, self.options = heads, options or {"is_causal": True}
        self.norm = nn.LayerNorm(dim)
        self.q, self.k, self.v = (nn.Linear(dim, dim) for _ in range(3))
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        n, t, e = x.shape
        y = self.norm(x)
        q, k, v = (f(y).view(n, t, self.heads, e // self.heads).transpose(1, 2)
                   for f in (self.q, self.k, self.v))
        o = F.scaled_dot_product_attention(q, k, v, **self.options)
        return x + self.out(o.permute(0, 2, 1, 3).reshape(n, t, e))


class SdpaViT(nn.Module):
    def __init__(self, dim=16, heads=2, classes=10, **options):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, stride=4)
        self.pos = nn.Parameter(torch.randn(1, 16, dim) * 0.5)
        self.block = SdpaBlock(dim, heads, **options)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        return self.head(self.block(x).mean(1))


def vit():
    torch.manual_seed(0)
    return ViT()


def vit_frozen():
    """The ViT with a frozen class token and a fixed positional embedding
    (a persistent buffer)."""
    torch.manual_seed(0)
    m = ViT()
    m.class_token.requires_grad_(False)
    pos = m.pos_embedding.detach()
    del m.pos_embedding
    m.register_buffer("pos_embedding", pos)
    return m


def vit_dropout():
    """The ViT with dropout 0.1 in its blocks and attention (no PyTorch
    parity: the masks differ)."""
    torch.manual_seed(0)
    return ViT(dropout=0.1)


def mean_vit():
    torch.manual_seed(0)
    return MeanViT()


def sdpa_options():
    """F.scaled_dot_product_attention with dropout_p and a scale (PyTorch 2.1's
    keyword), not causal (no PyTorch parity: the masks differ)."""
    torch.manual_seed(0)
    return SdpaViT(dropout_p=0.1, scale=0.3)


def sdpa_vit():
    torch.manual_seed(0)
    return SdpaViT()


class DetrStyle(nn.Module):
    """DETR's layout: conv features [N, C, H*W] permuted to [H*W, N, C] for
    nn.MultiheadAttention(batch_first=False), and its result back to
    [N, C, H*W] (tcc takes a batch-second value into the attention and a
    permute only)."""

    def __init__(self, dim=16, classes=10):
        super().__init__()
        self.backbone = nn.Conv2d(3, dim, 4, stride=4)
        self.attn = nn.MultiheadAttention(dim, 2)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.backbone(x).flatten(2)
        s = x.permute(2, 0, 1)  # [T, N, C]
        x = x + self.attn(s, s, s, need_weights=False)[0].permute(1, 2, 0)
        return self.head(x.mean(2))


def detr_style():
    torch.manual_seed(0)
    return DetrStyle()
