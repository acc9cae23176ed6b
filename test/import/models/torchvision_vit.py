"""torchvision's ViT-B/16 as torchvision builds it (random init: no
pretrained download here), for test/import/vit_b_16.test and
`compare_import.py vit_b_16` (docs/import.md)."""
import torch
import torchvision


def vit_b_16():
    torch.manual_seed(0)
    return torchvision.models.vit_b_16()
