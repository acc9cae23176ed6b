"""Writes NPY data through scripts/to_npy.py from objects shaped like
torchvision's datasets (CIFAR10: .data uint8 [N, H, W, C] numpy, .targets a
list; MNIST: .data and .targets tensors-like with .numpy()), and, for the
error test, channels-last arrays saved as they are.

usage: fake_torchvision.py cifar|mnist|channels-last OUT_DIR
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))
import to_npy  # noqa: E402


class Wrapped:
    """Stands for a torch tensor: only .numpy() is used."""

    def __init__(self, array):
        self.array = array

    def numpy(self):
        return self.array


class FakeDataset:
    def __init__(self, data, targets):
        self.data, self.targets = data, targets


kind, out = sys.argv[1], sys.argv[2]
rng = np.random.RandomState(0)
if kind in ("cifar", "channels-last"):
    train = FakeDataset(rng.randint(0, 256, (40, 8, 8, 3), dtype=np.uint8),
                        list(rng.randint(0, 10, 40)))
    test = FakeDataset(rng.randint(0, 256, (12, 8, 8, 3), dtype=np.uint8),
                       list(rng.randint(0, 10, 12)))
else:
    train = FakeDataset(Wrapped(rng.randint(0, 256, (40, 8, 8), dtype=np.uint8)),
                        Wrapped(rng.randint(0, 10, 40)))
    test = FakeDataset(Wrapped(rng.randint(0, 256, (12, 8, 8), dtype=np.uint8)),
                       Wrapped(rng.randint(0, 10, 12)))
if kind == "channels-last":
    os.makedirs(out, exist_ok=True)
    for name, ds in (("train", train), ("test", test)):
        np.save(os.path.join(out, name + "_x.npy"), ds.data)
        np.save(os.path.join(out, name + "_y.npy"), np.asarray(ds.targets, dtype=np.int64))
else:
    to_npy.save_split(*to_npy.torchvision_split(train), *to_npy.torchvision_split(test), out)
    x = np.load(os.path.join(out, "train_x.npy"))
    y = np.load(os.path.join(out, "test_y.npy"))
    print("train_x", x.dtype, list(x.shape), "test_y", y.dtype, list(y.shape))
