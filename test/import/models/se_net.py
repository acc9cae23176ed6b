"""A small CNN with squeeze-and-excitation blocks (Hu et al. 2018) in the
two ways they are written: torchvision's SqueezeExcitation (adaptive
pooling, 1x1 convs, a module gate) and a functional one (mean over H and W,
linears, F.sigmoid, x * gate[:, :, None, None] via view), plus the ops
ResNet-style code uses around them: concat, scaling, dropout (p 0: the
identity, which the import leaves out), flatten."""
import torch
import torch.nn.functional as F
from torch import nn
from torchvision.ops import SqueezeExcitation


class LinearSE(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.fc1 = nn.Linear(channels, squeeze)
        self.fc2 = nn.Linear(squeeze, channels)

    def forward(self, x):
        s = x.mean((2, 3))
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * s.view(s.size(0), s.size(1), 1, 1)


class SENet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                                  nn.SiLU())
        self.se1 = SqueezeExcitation(8, 4)
        self.branch = nn.Conv2d(8, 8, 3, padding=2, dilation=2)
        self.se2 = LinearSE(16, 4)
        self.pool = nn.AvgPool2d(2)
        self.norm = nn.LayerNorm([16, 4, 4])
        self.drop = nn.Dropout(0.0)
        self.head = nn.Linear(16 * 4 * 4, classes)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.se1(x)
        x = torch.cat([x, F.leaky_relu(self.branch(x), 0.1)], dim=1)
        x = self.se2(x)
        x = self.norm(F.max_pool2d(self.pool(x), 2))
        return self.head(self.drop(torch.flatten(x, 1))) / 2


def se_net():
    torch.manual_seed(0)
    return SENet()
