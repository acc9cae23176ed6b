"""The transcriptions of airbench94 and myrtle.ai's ResNet-9 that
test/e2e/compare_with_originals.py trains (test/e2e/originals/), as
factories for `tcc import`, at 1/16 of their widths."""
import os
import sys
from functools import partial

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "e2e", "originals"))
import airbench94 as _airbench  # noqa: E402
import new_dawn as _dawn  # noqa: E402

WIDTH_DIV = 16


def airbench94():
    """airbench94's make_net (a top-level nn.Sequential: its parameters are
    named 0.weight, 2.conv1.weight, ...)."""
    widths = _airbench.hyp["net"]["widths"]
    for k, w in {"block1": 64, "block2": 256, "block3": 256}.items():
        widths[k] = w // WIDTH_DIV
    torch.manual_seed(0)
    return _airbench.make_net(torch.float32)


class _Logits(_dawn.Network):
    """new_dawn's Network takes and returns a dict of named values; tcc's
    model maps the image to the logits."""

    def forward(self, x):
        return super().forward({"input": x})["logits"]


def resnet9():
    """new_dawn's net with its whitening block, with plain batch norm in
    place of GhostBatchNorm (whose per-split running statistics and batch
    folding tcc import refuses; tcc's own ghost batch norm is written by
    hand, examples/resnet9.json). The whitening filters come from random
    images: they are frozen weights, carried by the weights file. The
    logits are scaled by 1/16, as new_dawn's main() builds it."""
    torch.manual_seed(0)
    _dawn.batch_norm = partial(_dawn.BatchNorm, weight_freeze=True)
    images = torch.rand(64, 3, 32, 32)
    lam, v = _dawn.eigens(_dawn.patches(images))
    channels = {k: w // WIDTH_DIV for k, w in
                {"prep": 64, "layer1": 128, "layer2": 256, "layer3": 512}.items()}
    return _Logits(_dawn.net(channels=channels, weight=1 / 16, conv_bn=_dawn.conv_bn,
                             prep=partial(_dawn.whitening_block, Λ=lam, V=v)))


def resnet9_ghost():
    """new_dawn's net as it is, GhostBatchNorm included (refused)."""
    torch.manual_seed(0)
    images = torch.rand(64, 3, 32, 32)
    lam, v = _dawn.eigens(_dawn.patches(images))
    return _Logits(_dawn.net(channels={"prep": 4, "layer1": 8, "layer2": 16, "layer3": 32},
                             conv_bn=_dawn.conv_bn,
                             prep=partial(_dawn.whitening_block, Λ=lam, V=v)))
