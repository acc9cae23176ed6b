"""One model per kind of transformer construct `tcc import` refuses
(test/import/refused-tokens.test): attention options tcc's attention node
lacks, tensors that are not [1, ...] broadcast over the batch, indexing,
matmul and mean that model.json cannot express. Each runs on [N, 3, 8, 8]
made into 4 tokens of width 8 by Tokens."""
import torch
import torch.nn.functional as F
from torch import nn

import sdpa_standin  # noqa: F401  (F.scaled_dot_product_attention on PyTorch 1.13)


class Tokens(nn.Module):
    """[N, 3, 8, 8] -> [N, 4, 8]."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 8, 4, stride=4)

    def forward(self, x):
        return self.patch(x).flatten(2).transpose(1, 2)


class Net(nn.Module):
    """Tokens, then `body` at the path blocks.0, the mean over the tokens
    and a head."""

    def __init__(self, body):
        super().__init__()
        self.tokens = Tokens()
        self.blocks = nn.Sequential(body)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.blocks(self.tokens(x)).mean(1))


class Attend(nn.Module):
    """nn.MultiheadAttention called as `call(attention, x)` says."""

    def __init__(self, call, **options):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, **options)
        self.call = call

    def forward(self, x):
        return self.call(self.attn, x)


def _self(attn, x):
    return attn(x, x, x, need_weights=False)[0]


def key_padding_mask():
    mask = torch.zeros(3, 4, dtype=torch.bool)
    return Net(Attend(lambda a, x: a(x, x, x, key_padding_mask=mask)[0], batch_first=True))


def attn_mask():
    mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
    return Net(Attend(lambda a, x: a(x, x, x, attn_mask=mask)[0], batch_first=True))


def kdim():
    return Net(Attend(lambda a, x: a(x, x[..., :4], x[..., :4])[0], batch_first=True,
                      kdim=4, vdim=4))


def bias_kv():
    return Net(Attend(_self, batch_first=True, add_bias_kv=True))


def frozen_attention():
    net = Net(Attend(_self, batch_first=True))
    net.blocks[0].attn.in_proj_weight.requires_grad_(False)
    return net


def key_not_value():
    return Net(Attend(lambda a, x: a(x, x, 2 * x)[0], batch_first=True))


def sequence_first():
    """batch_first=False on a batch-first tensor."""
    return Net(Attend(_self))


def weights_used():
    return Net(Attend(lambda a, x: a(x, x, x)[1] @ x, batch_first=True))


def batch_second_read():
    """A batch-second sequence read by a layer norm."""
    return Net(nn.Sequential(Transpose(), nn.LayerNorm(8), Transpose()))


class Transpose(nn.Module):
    def forward(self, x):
        return x.transpose(0, 1)


class Scaled(nn.Module):
    """A layer scale: a [D] parameter."""

    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(8))

    def forward(self, x):
        return x + self.gamma


def not_broadcast():
    return Net(Scaled())


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.zeros(1, 4, 8), persistent=False)

    def forward(self, x):
        return x + self.pos


def non_persistent():
    return Net(Plain())


class Call(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


def expand_tokens():
    return Net(Call(lambda x: x[:, :1].expand(-1, 4, -1)))


def index_batch():
    return Net(Call(lambda x: x[1:]))


def index_step():
    return Net(Call(lambda x: x[:, ::2]))


def index_none():
    return Net(Call(lambda x: x[:, None].flatten(1, 2)))


def matmul_broadcast():
    """[N, 1, 4, 8] @ [N, 2, 8, 4]: broadcast over dim 1."""
    def f(x):
        b = torch.cat([x, x], 2).transpose(1, 2).reshape(x.size(0), 2, 8, 4)
        return (x.unsqueeze(1) @ b).reshape(x.size(0), 4, 8)
    return Net(Call(f))


def mean_tokens_and_width():
    return Net(Call(lambda x: x.mean((1, 2), keepdim=True).expand(-1, 4, 8)))



def _heads(x):
    return x.view(x.size(0), 4, 2, 4).transpose(1, 2)


def _merge(o):
    return o.transpose(1, 2).reshape(o.size(0), 4, 8)


def sdpa_mask():
    """A float mask (added to the scores), computed from the tokens."""
    def f(x):
        q = _heads(x)
        return _merge(F.scaled_dot_product_attention(q, q, q, attn_mask=q @ q.transpose(2, 3)))
    return Net(Call(f))


def sdpa_not_split():
    """One head as unsqueeze(1): not a view of the heads side by side."""
    return Net(Call(lambda x: F.scaled_dot_product_attention(
        x.unsqueeze(1), x.unsqueeze(1), x.unsqueeze(1)).squeeze(1)))
