#!/usr/bin/env python3
"""examples/resnet18.json, written with blocks, has exactly the state of
torchvision's resnet18(num_classes=10) with the CIFAR stem (conv1 a 3x3
stride-1 conv, no max-pool): the same names in the same order, the same
shapes, so checkpoints load with load_state_dict.

usage: resnet18_names.py TCC EXAMPLE.json   (exit 77: no torchvision)
"""
import re
import subprocess
import sys


def tcc_state(tcc, model):
    mlir = subprocess.run([tcc, "compile", model, "--emit=mlir", "-o", "-"], check=True,
                          capture_output=True, text=True).stdout
    return forward_state(mlir)


def forward_state(mlir):
    """[(name, shape)] of @forward's parameter and buffer arguments in the
    frontend's IR (also test/e2e/compare_import.py's)."""
    forward = mlir[mlir.index("func.func @forward"):]
    forward = forward[:forward.index(") -> ")]  # the arguments, not the results
    state = []
    for arg in re.split(r"%arg\d+: ", forward)[1:]:
        name = re.search(r'tcc\.(?:param|buffer) = "([^"]+)"', arg)
        if name:
            shape = re.match(r"tensor<([0-9x]*)x[a-z0-9]+>", arg).group(1)
            state.append((name.group(1), [int(d) for d in shape.split("x")]))
    return state


def main():
    try:
        import torch
        import torchvision
    except ImportError:
        return 77
    net = torchvision.models.resnet18(num_classes=10)
    net.conv1 = torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = torch.nn.Identity()
    torch_state = [(k, list(v.shape)) for k, v in net.state_dict().items()
                   if not k.endswith("num_batches_tracked")]
    ours = tcc_state(sys.argv[1], sys.argv[2])
    if ours != torch_state:
        for a, b in zip(ours, torch_state):
            if a != b:
                print("first difference: tcc %s, torchvision %s" % (a, b))
                break
        print("FAIL: %d tensors in tcc, %d in torchvision" % (len(ours), len(torch_state)))
        return 1
    print("PASS: %d tensors, names and shapes as torchvision's resnet18" % len(ours))
    return 0


if __name__ == "__main__":
    sys.exit(main())
