"""One model per kind of construct `tcc import` refuses (test/import/
refused.test): each factory's error names the module path, the PyTorch op
and what tcc has instead."""
import torch
import torch.nn.functional as F
from torch import nn


def _net(*layers, head_in=8 * 4 * 4):
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(head_in, 10))


class Block(nn.Module):
    """A residual block whose shortcut is set by the factory, so the refused
    layer sits at a nested path (layer2.0.downsample.1)."""

    def __init__(self, downsample):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.downsample = downsample

    def forward(self, x):
        return self.conv(x) + self.downsample(x)


class Net(nn.Module):
    def __init__(self, downsample):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.layer2 = nn.Sequential(Block(downsample))
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = self.layer2(self.stem(x))
        return self.head(x.mean((2, 3)))


def unsupported_module():
    """A module with no model.json op."""
    return Net(nn.Sequential(nn.Identity(), nn.Hardswish()))


def unsupported_option():
    """A supported module with an option tcc's op lacks."""
    return Net(nn.Sequential(nn.Identity(), nn.Conv2d(8, 8, 3, padding=1,
                                                      padding_mode="reflect")))


class Sub(nn.Module):
    def forward(self, x):
        return x - F.relu(x)


def unsupported_call():
    """A function with no model.json op, inside a submodule."""
    return Net(nn.Sequential(nn.Identity(), Sub()))


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # control flow on a tensor's value
            return x
        return -x


def untraceable():
    return Net(nn.Sequential(Branchy()))


class AddBias(nn.Module):
    def forward(self, x):
        return x + 1.0


def add_constant():
    return Net(nn.Sequential(AddBias()))


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return self.conv(self.conv(x))


def shared_weights():
    return nn.Sequential(Shared(), nn.Flatten(), nn.Linear(3 * 32 * 32, 10))


class Functional(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(10, 3 * 32 * 32))

    def forward(self, x):
        return F.linear(torch.flatten(x, 1), self.weight)


def functional_weight():
    return Functional()


class Unused(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 32 * 32, 10)
        self.spare = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(torch.flatten(x, 1))


def unused_layer():
    return Unused()


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 32 * 32, 10)

    def forward(self, x):
        y = self.fc(torch.flatten(x, 1))
        return y, y


def tuple_output():
    return Pair()


class FoldBatch(nn.Module):
    def forward(self, x):
        return x.view(-1, 32 * 32)  # each channel a sample


def batch_reshape():
    return nn.Sequential(FoldBatch(), nn.Linear(32 * 32, 10))


def not_a_module():
    return 42


def raises():
    raise ValueError("no weights here")
