"""torchvision's ResNet-18 (Debian's python3-torchvision; no pretrained
weights, no network: the module's own init), for `tcc import`."""
import torch
import torchvision
from torch import nn


def resnet18():
    """As torchvision builds it: the ImageNet stem (7x7 stride-2 conv,
    3x3 max pool), 10 classes."""
    torch.manual_seed(0)
    return torchvision.models.resnet18(num_classes=10)


def resnet18_cifar():
    """The CIFAR stem of examples/resnet18.json: conv1 3x3 stride 1, no max
    pool."""
    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=10)
    net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = nn.Identity()
    return net
