"""Token models tcc import refuses, one per kind (test/import/refused-embedding.test):
nn.Embedding options tcc's embedding lacks, embeddings of anything but the
token ids, the ids read by another layer, tied weights, per-position
logits that do not fit."""
import torch
import torch.nn.functional as F
from torch import nn

from char_lm import CharLM


class Bag(nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.emb = nn.Embedding(13, 8, **options)
        self.fc = nn.Linear(8, 5)

    def forward(self, idx):
        return self.fc(self.emb(idx).mean(1))


def max_norm():
    return Bag(max_norm=1.0)


def scale_grad_by_freq():
    return Bag(scale_grad_by_freq=True)


def sparse():
    return Bag(sparse=True)


class Gpt2Positions(nn.Module):
    """GPT-2's positions: an nn.Embedding of torch.arange(T)."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(13, 8)
        self.wpe = nn.Embedding(8, 8)  # fewer positions than tokens, as GPT-2
        self.fc = nn.Linear(8, 5)

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        return self.fc((self.wte(idx) + self.wpe(pos)).mean(1))


def gpt2_positions():
    return Gpt2Positions()


class Flipped(nn.Module):
    """The ids reversed before the embedding: a call on the ids."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(13, 8)
        self.fc = nn.Linear(8, 5)

    def forward(self, idx):
        return self.fc(self.emb(idx.flip(1)).mean(1))


def ids_flipped():
    return Flipped()


class FixedPositions(Gpt2Positions):
    """Positions of a fixed length: a constant tensor, not the input."""

    def forward(self, idx):
        return self.fc((self.wte(idx) + self.wpe(torch.arange(8))).mean(1))


def fixed_positions():
    return FixedPositions()


def tied_lm():
    """GPT-2's weight tying: the head's weight is the token embedding's."""
    torch.manual_seed(0)
    m = CharLM()
    m.head.weight = m.tok_emb.weight
    return m


class Shifted(CharLM):
    """Logits for all positions but the last (the targets shifted inside)."""

    def forward(self, idx):
        return super().forward(idx)[:, :-1]


def shifted_lm():
    torch.manual_seed(0)
    return Shifted()


class PerPatch(nn.Module):
    """Logits per patch of an image: [N, T, classes] without token ids."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 8, 4, stride=4)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(self.patch(x).flatten(2).transpose(1, 2))


def per_patch():
    return PerPatch()


class FunctionalEmbedding(nn.Module):
    """F.embedding of a table the module holds."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(13, 8))
        self.fc = nn.Linear(8, 5)

    def forward(self, idx):
        return self.fc(F.embedding(idx, self.table).mean(1))


def functional_embedding():
    return FunctionalEmbedding()
