"""Token models written in PyTorch for `tcc import --tokens`: a causal
character-level language model as a PyTorch user writes one (nn.Embedding
of the characters with a padding row, a learnt positional table sliced to
the sequence, two pre-LN blocks of causal F.scaled_dot_product_attention
and a GELU MLP, a final LayerNorm and a linear head over the vocabulary at
every position), and a token classifier (an embedding averaged over the
tokens, a linear head). sdpa_standin.py stands in for
F.scaled_dot_product_attention on PyTorch 1.13."""
import torch
import torch.nn.functional as F
from torch import nn

import sdpa_standin  # noqa: F401  (F.scaled_dot_product_attention on PyTorch 1.13)

VOCAB = 17        # the test's characters; id 0 is padding
BLOCK = 16        # the longest sequence the positional table holds


class CausalBlock(nn.Module):
    """Pre-LN: x + attn(ln_1(x)), then x + mlp(ln_2(x)); the attention a
    fused q/k/v linear sliced and split into heads, causal."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        n, t, e = x.shape
        qkv = self.qkv(self.ln_1(x))
        q, k, v = (qkv[..., i * e:(i + 1) * e].view(n, t, self.heads, e // self.heads)
                   .transpose(1, 2) for i in range(3))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(o.transpose(1, 2).reshape(n, t, e))
        return x + self.mlp(self.ln_2(x))


class CharLM(nn.Module):
    def __init__(self, vocab=VOCAB, dim=16, heads=2, layers=2, block=BLOCK):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos_emb = nn.Parameter(torch.randn(1, block, dim) * 0.5)
        self.blocks = nn.Sequential(*(CausalBlock(dim, heads) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb[:, :idx.size(1)]
        return self.head(self.ln_f(self.blocks(x)))


def char_lm():
    torch.manual_seed(0)
    return CharLM()


class TokenClassifier(nn.Module):
    """A bag of tokens: the embedding averaged over the sequence, a linear
    head (padding rows included in the mean, as this code computes it)."""

    def __init__(self, vocab=13, dim=16, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=-1)
        self.fc = nn.Linear(dim, classes)

    def forward(self, idx):
        return self.fc(self.emb(idx).mean(1))


def token_classifier():
    torch.manual_seed(0)
    return TokenClassifier()


def frozen_embedding():
    """Pretrained vectors, frozen (nn.Embedding.from_pretrained)."""
    torch.manual_seed(0)
    m = TokenClassifier()
    m.emb = nn.Embedding.from_pretrained(torch.randn(13, 16), freeze=True)
    return m


class LongIds(TokenClassifier):
    """The ids cast to int64 first, as code that takes int32 ids does."""

    def forward(self, idx):
        return self.fc(self.emb(idx.long()).mean(1))


def long_ids():
    torch.manual_seed(0)
    return LongIds()
